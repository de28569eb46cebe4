"""LayerNorm/RMSNorm backward kernels under register caps and more programs per SM (H200, bf16).

    PYTHONPATH=src python3 benchmarks/scripts/tune_ln_regcap.py [N,...] [--rms]

For each N: the tuned backward config (``NORM_TUNED``), then the same tile with ptxas register caps and
with 2 or 3 programs per SM (a cap lets more programs fit). Times ``norm_bwd`` alone (dx, dw, db and the
partial-sum kernel; do_bench median with L2 flush) as % of copy bandwidth on the fewest bytes
(x, dy read, dx written, parameters), and checks every variant's dx/dw/db against the tuned config's.
"""

from __future__ import annotations

import sys

import torch
import triton

from fastnorm.kernels import config as C
from fastnorm.kernels.layer_norm import norm_bwd, norm_fwd


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    ns = [int(v) for v in (args[0] if args else "1024,2048,4096,8192").split(",")]
    kinds = (False, True) if "--rms" in sys.argv else (False,)
    sms = C.multiprocessor_count(torch.cuda.current_device())
    copy = copy_bandwidth()
    print(f"copy {copy / 1e9:.0f} GB/s")
    rows = []
    for is_rms in kinds:
        for n in ns:
            m = 49152 if n <= 8192 else (1 << 29) // n
            x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
            b = None if is_rms else torch.randn(n, device="cuda", dtype=torch.bfloat16)
            dy = torch.randn_like(x)
            _, _, mean, rstd = norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True)
            base = C.norm_bwd_config(n, 2, torch.cuda.current_device(), is_rms)
            per_sm = max(1, base.programs // sms)
            variants = [("tuned", base)]
            for cap in (64, 80):
                variants.append((f"cap{cap}", base._replace(maxnreg=cap)))
                for k in (2 * per_sm, 3 * per_sm):
                    variants.append((f"cap{cap} x{k}/SM", base._replace(maxnreg=cap, programs=k * sms)))
            nbytes = 3 * m * n * 2 + 4 * n * 2
            ref = None
            cells = []
            for name, cfg in variants:
                def run(cfg=cfg, case=(dy, x, w, b, mean, rstd, is_rms)):
                    dy_, x_, w_, b_, mean_, rstd_, rms_ = case
                    return norm_bwd(dy_, x_, w_, b_ is not None, mean_, rstd_, None, x_.dtype, None, 1e-5, 0.0, rms_,
                                    bias_dtype=x_.dtype, config=cfg)
                try:
                    out = run()
                except Exception as exc:  # noqa: BLE001 — a config over a resource limit is reported, not fatal
                    cells.append(f"{name}=FAIL({type(exc).__name__})")
                    continue
                if ref is None:
                    ref = out
                err = max(float((a.float() - r.float()).abs().max() / r.float().abs().max())
                          for a, r in zip(out, ref, strict=True) if a is not None)
                t = triton.testing.do_bench(run, warmup=25, rep=100, return_mode="median") * 1e-3
                pct = 100 * nbytes / t / copy
                cells.append(f"{name}={pct:.1f}" + (f" ERR{err:.0e}" if err > 1e-2 else ""))
                rows.append((is_rms, n, name, pct))
            print(f"{'RMS' if is_rms else 'LN'} bwd N={n} ({fmt(base)}): " + "  ".join(cells), flush=True)


def copy_bandwidth() -> float:
    """Bytes per second of ``dst.copy_(src)`` on 1 GiB of bf16, read + written."""
    src = torch.empty(1 << 29, dtype=torch.bfloat16, device="cuda")
    dst = torch.empty_like(src)
    return 4 * src.numel() / (triton.testing.do_bench(lambda: dst.copy_(src), return_mode="median") * 1e-3)


def fmt(cfg):
    return f"bm{cfg.block_m} bn{cfg.block_n} w{cfg.num_warps} st{cfg.num_stages} G{cfg.programs}"


if __name__ == "__main__":
    main()
