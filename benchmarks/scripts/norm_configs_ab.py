"""A/B of LayerNorm/RMSNorm launch configs against the current ones, kernels only, in one process on the GPU
machine::

    PYTHONPATH=src python3 benchmarks/scripts/norm_configs_ab.py [--ns 8192,16384] [--rms-ns ...] [--fwd] [--all]
        [--split] [--dtype float32] [--passes 2] [--deadline S] [--inductor]

For each N: the current config, then every variant of each section asked for — ``--fwd`` the forward sweep
(``tune_norms.fwd_variants``), ``--all`` the whole backward sweep (``tune_norms.bwd_variants``), ``--split`` the
backward's split rows (``tune_norms.split_variants``), any of them together; with none of them the backward's
whole-row variants of :func:`wide_variants` (rows past ``NORM_BWD_FUSED_MAX``); ``--two-piece`` only the
rows-as-two-pieces variants (``tune_norms.two_piece_variants``; the forward's with ``--fwd``); ``--looped`` only
the forward's chunked rows of one program per row (``tune_norms.looped_variants``, or the subset ``--looped-grid``
names); ``--configs`` only the configs it lists (Python expressions of ``NormConfig``, ``sms`` (the SM count), ``n``
(the row length) and ``np2(x)`` (the next power of two of x), separated by ";"; the forward's with ``--fwd``);
``--current`` none (the current configs alone, to compare source trees run after run). Each variant's outputs are
checked against the current config's (x, dy and the weight in ``--dtype``, default bf16; x of shape (rows, N)), then
all are timed with ``do_bench`` (median, L2 flushed) in ``--passes`` interleaved passes (the median of the passes is
reported) as % of the copy bandwidth on the fewest bytes. Registers and spills come from the compiled kernel.
``--rows`` sets the row count (at most: rows_for's cap on elements still applies). ``--inductor`` also writes
torch.compile's generated code for the RMSNorm backward at N = 16384 to ``$OUT/inductor_rms16384.py``. Prints a
table last; writes ``$OUT/norm_configs_ab.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import tune_norms as T  # noqa: E402

from fastnorm.kernels import config as C  # noqa: E402


def wide_variants(n: int, sms: int) -> list[C.NormConfig]:
    """Whole rows in registers past the untuned limit (NORM_BWD_FUSED_MAX): the weight held across the loop or
    re-read per row (``w_in_loop``), 8 or 16 warps, 1, 2 or 4 programs per SM."""
    bn = T.triton_next_pow2(n)
    out = []
    for w_in_loop in (True, False):
        for w in (8, 16):
            for per_sm in (1, 2, 4):
                for st in (1, 3) if bn <= 8192 else (1,):
                    out.append(C.NormConfig(1, bn, False, w, st, sms * per_sm, w_in_loop))
    return out


def inductor_code(out_dir: str) -> None:
    code = """
import torch, torch.nn.functional as F
x = torch.randn(32768, 16384, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w = torch.randn(16384, device="cuda", dtype=torch.bfloat16, requires_grad=True)
f = torch.compile(lambda x, w: F.rms_norm(x, (16384,), w, 1e-6))
y = f(x, w)
torch.autograd.grad(y, (x, w), torch.randn_like(y))
torch.cuda.synchronize()
"""
    env = {**os.environ, "TORCH_LOGS": "output_code", "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    Path(out_dir, "inductor_rms16384.py").write_text(res.stdout + res.stderr)
    print(f"== inductor output code: {len(res.stderr)} chars (rc {res.returncode})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default="4096,8192,12288,16384")
    ap.add_argument("--rms-ns", default="8192,12288,16384")
    ap.add_argument("--inductor", action="store_true")
    ap.add_argument("--all", action="store_true", help="tune_norms.bwd_variants (the whole backward sweep)")
    ap.add_argument("--fwd", action="store_true", help="tune_norms.fwd_variants (the forward sweep)")
    ap.add_argument("--passes", type=int, default=1, help="interleaved timing passes (median reported)")
    ap.add_argument("--split", action="store_true",
                    help="tune_norms.split_variants (the backward's rows split across programs)")
    ap.add_argument("--two-piece", action="store_true",
                    help="tune_norms.two_piece_variants only (rows as two pieces), forward with --fwd")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds after which no new N is started")
    ap.add_argument("--looped", action="store_true",
                    help="tune_norms.looped_variants only (the forward's chunked rows, one program per row)")
    ap.add_argument("--looped-grid", default="",
                    help="with --looped, a subset: chunks/warps/unrolls/evicts, e.g. 2048,4096/8,16/2,4,8/1")
    ap.add_argument("--configs", default="",
                    help='explicit configs, e.g. "NormConfig(1, 8192, False, 16, 3, sms, True, 4096); ..."')
    ap.add_argument("--current", action="store_true",
                    help="the current configs alone (to compare source trees: run once per tree)")
    ap.add_argument("--rows", type=int, default=0,
                    help="rows of x (default: tune_norms.rows_for, 49152 up to N = 10922 and fewer past it)")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"),
                    help="x, dy and the weight (the tuned tables are per element size)")
    args = ap.parse_args()
    if args.rows:
        T.M_MAX = args.rows  # rows_for(n) = min(M_MAX, ...)
    out_dir = os.environ.get("OUT", ".")
    t0 = time.perf_counter()
    dev = torch.cuda.current_device()
    sms = C.multiprocessor_count(dev)
    dtype = getattr(torch, args.dtype)
    esize = dtype.itemsize
    plan = [(False, int(s)) for s in args.ns.split(",") if s] + [(True, int(s)) for s in args.rms_ns.split(",") if s]
    sections = []  # (direction, variants(n, sms, is_rms)), each measured in turn per N
    if args.current:
        sections = [("fwd" if args.fwd else "bwd", lambda n, sms, r: [])]
    elif args.configs:
        listed = [e for e in args.configs.split(";") if e.strip()]
        names = {"NormConfig": C.NormConfig, "np2": T.triton_next_pow2}
        sections = [("fwd" if args.fwd else "bwd",
                     lambda n, sms, r: [eval(e, {**names, "sms": sms, "n": n}) for e in listed])]
    elif args.looped:
        grid = {}
        if args.looped_grid:
            parts = [tuple(int(v) for v in p.split(",")) for p in args.looped_grid.split("/")]
            grid = dict(zip(("chunks", "warps", "unrolls", "evicts"), parts, strict=False))
            grid["evicts"] = tuple(bool(v) for v in grid.get("evicts", (0, 1)))
        sections = [("fwd", lambda n, sms, r: T.looped_variants(n, **grid))]
    elif args.two_piece:
        kind = "fwd" if args.fwd else "bwd"
        sections = [(kind, lambda n, sms, r: T.two_piece_variants(kind, n, sms))]
    else:
        if args.fwd:
            sections.append(("fwd", lambda n, sms, r: T.fwd_variants(n, sms, esize, r)[1:]))
        if args.all:
            sections.append(("bwd", lambda n, sms, r: T.bwd_variants(n, sms, esize, r)[1:]))
        if args.split:
            sections.append(("bwd", lambda n, sms, r: T.split_variants(n, sms, r, esize)))
        if not sections:
            sections = [("bwd", lambda n, sms, r: wide_variants(n, sms))]
    items = [(r, n, T.rows_for(n), kind, c, dtype) for r, n in plan for kind, variants in sections
             for c in variants(n, sms, r)]
    T.precompile(items)
    copy_gbs = T.copy_bandwidth()
    print(f"device {torch.cuda.get_device_name()} ({sms} SMs); copy {copy_gbs:.0f} GB/s; {args.dtype}", flush=True)
    rows = []
    for is_rms, n in plan:
        for kind, variants in sections:
            if time.perf_counter() - t0 > args.deadline:
                print(f"  stopped at the {args.deadline} s deadline", flush=True)
                break
            rows += T.measure_configs(kind, is_rms, n, sms, copy_gbs, lambda n, sms, r=is_rms, v=variants: v(n, sms, r),
                                      args.passes, dtype=dtype)
            torch.cuda.empty_cache()
    Path(out_dir, "norm_configs_ab.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), copy=copy_gbs,
                                                               rows=rows), indent=1))
    if args.inductor:
        inductor_code(out_dir)
    print(f"== summary ({time.perf_counter() - t0:.0f} s, {args.dtype}): current config vs the best variant, % of copy")
    for is_rms, n in plan:
        for kind in dict.fromkeys(k for k, _ in sections):
            rs = [r for r in rows if r["n"] == n and r["op"] == ("RMS" if is_rms else "LN") and r["kind"] == kind]
            if not rs:
                continue
            cur, alts = rs[0], sorted(rs[1:], key=lambda r: -r["pct"])
            best = alts[0] if alts else None
            print(f"{cur['op']:3s} {kind} N={n:6d}  current {cur['pct']:5.1f}% ({cur['cfg']}, {cur['regs']}r/"
                  f"{cur['spills']}s)" + (f"  best {best['pct']:5.1f}% ({best['cfg']}, {best['regs']}r/"
                                          f"{best['spills']}s, err {max(best['errs'].values()):.1e})" if best else ""))

if __name__ == "__main__":
    main()
