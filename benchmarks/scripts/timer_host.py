"""What one call's host time becomes inside the suites' timer: back to back against inside a ``do_bench``-style loop.

The suites time with ``triton.testing.do_bench``: per call it zeroes 256 MiB, records a start event, calls, records an
end event, never waiting on the GPU. Once a call's host time passes the zeroing's GPU time, the excess shows in
the measured time. The suites' ``host_ms`` is the median of back-to-back calls; this script asks whether a call
costs the host the same inside that loop, where the GPU is busy zeroing while the call runs.

Per call, host µs (median): "b2b" back to back (the suites' ``host_ms``); "loop" the same call inside the loop;
"loop, no zero" inside the loop without the zeroing; "after sync" each call right after a synchronize (the GPU
idle). Then the loop's median event time ("timed µs"), ``do_bench``'s own figure, and the zeroing's GPU time.

    PYTHONPATH=src python benchmarks/scripts/timer_host.py
"""

from __future__ import annotations

import statistics
import time

import torch
import triton.testing
from backward_host import bn_case, ln_case  # this script's folder is on sys.path

from fastnorm.bench.common import Timer

CALLS = 200
DEVICE = torch.device("cuda")


def b2b_us(fn, calls: int = CALLS) -> float:
    """The suites' ``host_ms`` (``Timer.host_ms``: the median of back-to-back calls), in µs."""
    return Timer(DEVICE).host_ms(fn, calls) * 1e3


def loop_us(fn, cache: torch.Tensor | None, calls: int = CALLS, sync: bool = False) -> tuple[float, float]:
    """Median host µs of ``fn`` and median event µs, in a ``do_bench``-style loop (``cache`` zeroed before each call
    when given; a synchronize before each when ``sync``)."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
    fn()
    torch.cuda.synchronize()
    host = []
    for i in range(calls):
        if sync:
            torch.cuda.synchronize()
        if cache is not None:
            cache.zero_()
        starts[i].record()
        t0 = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t0) * 1e6)
        ends[i].record()
    torch.cuda.synchronize()
    timed = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends, strict=True)]
    return statistics.median(host), statistics.median(timed)


def main() -> None:
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device=DEVICE)
    z0, z1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    zs = []
    for _ in range(20):
        z0.record()
        cache.zero_()
        z1.record()
        torch.cuda.synchronize()
        zs.append(z0.elapsed_time(z1) * 1e3)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; zeroing 256 MiB: {statistics.median(zs):.1f} µs "
          f"GPU (median of 20)")
    cases = []
    for shape, frozen in (((32, 2048, 7, 7), False), ((32, 2048, 7, 7), True), ((256, 256, 28, 28), True)):
        rows, _ = bn_case(shape, torch.bfloat16, frozen)
        label = f"BN {'frozen' if frozen else 'train'} bwd {'x'.join(map(str, shape))}"
        cases += [(label, n, rows[n]) for n in ("fastnorm autograd.grad", "torch autograd.grad",
                                                "no-work Function, autograd.grad", "x*1, autograd.grad (x only)",
                                                "fastnorm _backward_impl direct")]
    for n in (256, 1024):
        rows = ln_case(49152, n, torch.bfloat16)
        cases += [(f"LN bwd 49152x{n}", k, rows[k]) for k in ("fastnorm autograd.grad", "torch autograd.grad")]
    print("| case | call | b2b | loop | loop, no zero | after sync | timed µs | do_bench µs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, name, fn in cases:
        b = b2b_us(fn)
        lh, lt = loop_us(fn, cache)
        nh, _ = loop_us(fn, None)
        sh, _ = loop_us(fn, None, sync=True)
        db = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
        print(f"| {label} | {name} | {b:.1f} | {lh:.1f} | {nh:.1f} | {sh:.1f} | {lt:.1f} | {db:.1f} |", flush=True)


if __name__ == "__main__":
    main()
