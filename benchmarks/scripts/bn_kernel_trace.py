"""Where a BatchNorm pass's GPU time goes between its kernels: the profiler's (CUPTI's) kernel records of its CUDA-graph
replays, the way the suites time them (an L2 flush before each) and back to back.

    python3 benchmarks/scripts/bn_kernel_trace.py [--ops stats,eval_fwd,train_fwd] [--impls fastnorm,torch] [--cl] \
        [--dtype bf16] [--set 'BN_LOOP_STAGES={"stats": 1, ...}'] N C H W

Per op (a ``tune_batchnorm.runner`` op by each of ``--impls``, or ``copy``/``read`` of x's bytes) and pattern (its
graph's replays flushed, back to back; the op called eagerly back to back), ``--reps`` calls are profiled; per kernel
of the op it prints the mean duration (CUPTI: from the kernel's start to its end on the GPU) and the mean gap from the
end of the kernel before it (the flush's, in the flushed pattern) — beside the call's span timed by CUDA events around
it (what ``tune_batchnorm.bench`` takes the median of). A kernel's duration against the time its programs run
(``bn_timeline.py``) says what the kernel costs before its first program starts and after its last one ends; the gaps
what the launches between kernels cost. ``--set``: overrides of ``fastnorm.kernels.config`` (``;``-separated
``NAME=literal``), as ``bn_ab.py`` takes them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _kernels(prof) -> list[tuple[str, float, float]]:
    """The profiled GPU kernels (name, start µs, end µs) in start order."""
    from torch.autograd import DeviceType

    out = [(e.name, e.time_range.start, e.time_range.end) for e in prof.events()
           if e.device_type == DeviceType.CUDA and e.time_range.end > e.time_range.start]
    return sorted(out, key=lambda k: k[1])


def trace(replay, flush: bool, reps: int) -> tuple[list[list[tuple[str, float, float]]], list[float]]:
    """``reps`` calls of ``replay`` (each after an L2 flush when ``flush``) under the profiler -> (per call, its
    kernels with the flush first when ``flush``; the CUDA-event span of each call in µs)."""
    import torch

    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for _ in range(3):
        replay()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for start, end in events:
            if flush:
                cache.zero_()
            start.record()
            replay()
            end.record()
        torch.cuda.synchronize()
    kernels = _kernels(prof)
    spans = [s.elapsed_time(e) * 1e3 for s, e in events]
    per = len(kernels) // reps
    if per == 0 or per * reps != len(kernels):
        print(f"    ({len(kernels)} kernel records over {reps} calls: not the same kernels each call)")
        return [], spans
    return [kernels[i * per:(i + 1) * per] for i in range(reps)], spans


def main() -> None:
    import bn_size_sweep
    import torch
    import tune_batchnorm as tb

    ap = argparse.ArgumentParser()
    ap.add_argument("shape", nargs=4, type=int, help="N C H W")
    ap.add_argument("--ops", default="copy,read,stats,eval_fwd,train_fwd")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--cl", action="store_true")
    ap.add_argument("--impls", default="fastnorm", help="fastnorm,torch: whose ops (copy and read: torch's alone)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--set", default="")
    args = ap.parse_args()
    from bn_ab import _overrides

    tb._apply_overrides(_overrides(args.set))
    case = tb.make_case(tuple(args.shape), args.dtype, args.cl)
    print(f"{args.dtype} {'CL' if args.cl else 'NCHW'} {tuple(args.shape)}, {torch.cuda.get_device_name()}: "
          f"µs, mean over the calls (events: the median){'; ' + args.set if args.set else ''}")
    runs = [(op, impl) for op in args.ops.split(",") for impl in args.impls.split(",")
            if impl == "fastnorm" or op not in ("copy", "read")]
    for op, impl in runs:
        stream = torch.cuda.Stream()  # the op made on the capturing stream, as bn_ab.py --graph makes it (a
        stream.wait_stream(torch.cuda.current_stream())  # backward runs on its forward's stream)
        with torch.cuda.stream(stream):
            call = bn_size_sweep.op_call(op, case, impl)[0]
            replay = tb.graphed(call, stream)
        torch.cuda.current_stream().wait_stream(stream)
        name = op if impl == "fastnorm" else f"{op} ({impl})"
        for pattern, fn, flush in (("graph flushed", replay, True), ("graph", replay, False), ("eager", call, False)):
            per_replay, spans = trace(fn, flush, args.reps)
            print(f"{name:10s} {pattern:13s} events {statistics.median(spans):7.1f}")
            if not per_replay:
                continue
            first = 1 if flush else 0  # the flush's own kernel
            for k in range(first, len(per_replay[0])):
                durations = [r[k][2] - r[k][1] for r in per_replay]
                gaps = [r[k][1] - r[k - 1][2] for r in per_replay] if k else \
                    [b[0][1] - a[-1][2] for a, b in zip(per_replay[:-1], per_replay[1:], strict=True)]
                kernel = per_replay[0][k][0]
                print(f"    {kernel[:60]:60s} run {statistics.mean(durations):7.1f}  gap before "
                      f"{statistics.mean(gaps):6.1f}")


if __name__ == "__main__":
    main()
