"""A/B of the LayerNorm/RMSNorm backward's partial-row sum tile (session 6), kernels only, one process.

    PYTHONPATH=src python3 benchmarks/scripts/ln_partial_sum_ab.py

For bf16 x of shape (M, N) (tune_norms' rows), times the whole backward (``norm_bwd``: the persistent dx
kernel, then the sum of its [G, N] partial rows) under the previous rule for the sum's tile (at least 256
columns per program) and the current one (``config.norm_partial_sum_config``), and the sum kernel alone
(profiler), as % of the copy bandwidth on the backward's fewest bytes. Checks that both give the same dx and
dγ/dβ within fp32 reordering. Prints a table.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tune_norms as T  # noqa: E402

from fastnorm.kernels import config as C  # noqa: E402
from fastnorm.kernels import layer_norm as K  # noqa: E402


@functools.cache
def previous_rule(n: int, g: int) -> C.NormPartialSumConfig:
    """The tile before session 6: about 128 column blocks, but never narrower than 256 columns."""
    block_c = min(C._next_pow2(n), max(256, min(2048, C._next_pow2(-(-n // 128)))))
    return C.NormPartialSumConfig(min(C._next_pow2(g), max(1, 4096 // block_c)), block_c, 4)


def sum_kernel_us(fn) -> float:
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    times = [e.time_range.elapsed_us() for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and "sum_partials" in e.name]
    return sorted(times)[len(times) // 2] if times else float("nan")


def main() -> None:
    copy = T.copy_bandwidth()
    print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s")
    rows = []
    current = C.norm_partial_sum_config
    for is_rms in (False, True):
        for n in (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
            m = T.rows_for(n)
            x, w, b, dy = T.make_inputs(m, n, is_rms=is_rms)
            _, _, mean, rstd = T.run_fwd(x, w, b, is_rms)
            cell = {}
            outs = {}
            for name, rule in (("before", previous_rule), ("after", current)):
                K.norm_partial_sum_config = rule
                fn = functools.partial(T.run_bwd, dy, x, w, b is not None, mean, rstd, is_rms)
                outs[name] = fn()
                ms = T.bench(fn)
                cell[name] = (100 * T.bwd_bytes(m, n, 2, is_rms) / (ms * 1e-3) / (copy * 1e9), sum_kernel_us(fn))
            K.norm_partial_sum_config = current
            err = max(((a.float() - e.float()).abs().max() / e.float().abs().max().clamp_min(1e-30)).item()
                      for a, e in zip(outs["after"], outs["before"], strict=True) if a is not None and e is not None)
            rows.append(("RMS" if is_rms else "LN", n, m, cell["before"], cell["after"], err))
            del x, w, b, dy, mean, rstd, outs
            torch.cuda.empty_cache()
    print("\n| norm | N | M | bwd % of copy before | after | sum kernel us before | after | max rel diff |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, n, m, bef, aft, err in rows:
        print(f"| {kind} | {n} | {m} | {bef[0]:.1f} | {aft[0]:.1f} | {bef[1]:.1f} | {aft[1]:.1f} | {err:.1e} |")


if __name__ == "__main__":
    main()
