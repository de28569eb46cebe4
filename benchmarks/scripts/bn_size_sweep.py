"""Time against size: BatchNorm passes over one channel/spatial shape at several batch sizes, beside reads and copies of
the same bytes, to split each pass's time into a fixed part and a per-byte rate.

    python3 benchmarks/scripts/bn_size_sweep.py [--ops stats,eval_fwd,train_fwd] [--batches 32,64,128,256,512] \
        [--cl] [--dtype bf16] C H W

Every op is captured in a CUDA graph and its replays timed as the suites time GPU time (``tune_batchnorm.bench``: L2
flushed, median). Beside fastnorm's ops: ``read`` (torch's sum of x, one read of its bytes) and ``copy`` (x copied,
its bytes read and written). Prints µs per batch size and, per op, the least-squares line t = t0 + bytes / rate over
the sizes (its own bytes: ``tune_batchnorm.fewest_bytes``; read: x's bytes; copy: twice them): t0 is what the op
costs whatever its size (launches, ramp-up, the tail), the rate what it streams at once running.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def op_call(op: str, case: dict, impl: str = "fastnorm"):
    """(the call, its bytes) of ``op`` on ``case``: an op of ``tune_batchnorm.runner`` by ``impl`` ("fastnorm" or
    "torch"), or "read" / "copy" (torch's, of x's bytes)."""
    import torch
    import tune_batchnorm as tb

    x = case["x"]
    xb = x.numel() * x.element_size()
    if op == "read":
        return (lambda: x.sum(dtype=torch.float32)), xb
    if op == "copy":
        out = torch.empty_like(x)
        return (lambda: out.copy_(x)), 2 * xb
    return tb.runner(op, impl, case)[0], tb.fewest_bytes(op, case)


def main() -> None:
    import torch
    import tune_batchnorm as tb

    ap = argparse.ArgumentParser()
    ap.add_argument("shape", nargs=3, type=int, help="C H W")
    ap.add_argument("--ops", default="stats,eval_fwd,train_fwd")
    ap.add_argument("--batches", default="32,64,128,256,512")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--cl", action="store_true")
    args = ap.parse_args()
    ops = args.ops.split(",") + ["read", "copy"]
    batches = [int(b) for b in args.batches.split(",")]
    copy_bw = tb.copy_bandwidth()
    times: dict[str, list[float]] = {op: [] for op in ops}
    nbytes: dict[str, list[int]] = {op: [] for op in ops}
    for n in batches:
        case = tb.make_case((n, *args.shape), args.dtype, args.cl)
        for op in ops:
            fn, b = op_call(op, case)
            times[op].append(tb.bench(tb.graphed(fn)))
            nbytes[op].append(b)
        del case
        torch.cuda.empty_cache()
    layout = "CL" if args.cl else "NCHW"
    print(f"{args.dtype} {layout} N×{args.shape}, copy {copy_bw / 1e9:.0f} GB/s; µs per batch size, then the fit")
    print(f"{'op':10s}" + "".join(f"{n:>9d}" for n in batches) + "    t0 µs   rate GB/s (% of copy)")
    for op in ops:
        ts, bs = times[op], nbytes[op]
        k = len(ts)
        mb, mt = sum(bs) / k, sum(ts) / k
        slope = sum((b - mb) * (t - mt) for b, t in zip(bs, ts, strict=True)) / sum((b - mb) ** 2 for b in bs)
        t0 = mt - slope * mb
        rate = 1 / slope
        print(f"{op:10s}" + "".join(f"{t * 1e6:9.1f}" for t in ts)
              + f"  {t0 * 1e6:7.1f}  {rate / 1e9:8.0f} ({100 * rate / copy_bw:5.1f})")


if __name__ == "__main__":
    main()
