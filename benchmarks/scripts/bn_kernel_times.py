"""GPU time of each kernel a BatchNorm op launches, per case and config override, from the CUDA profiler.

    PYTHONPATH=src python benchmarks/scripts/bn_kernel_times.py [--ops train_fwd,train_bwd] [--flush] [SPEC ...]

SPEC: config overrides as in ``bn_ab.py`` (``BN_ALIGNED_ROWS={}``; empty: the defaults), or ``torch`` (torch's own
``F.batch_norm``: cuDNN's kernels, the peer's split of the same op). The cases are
``tune_batchnorm``'s, filtered by ``$BN_VARIANT_CASES``. Each op runs 5 times to warm up, then 20 times under
``torch.profiler``; prints, per case, op and spec, each kernel's mean µs and its share of the bytes' copy time
(fewest bytes at the suite's copy bandwidth), so that a slow op shows which of its launches is slow. ``--flush``:
before each call, zero 256 MB as ``triton.testing.do_bench`` (the suites' timer) does, so that the op starts with L2
full of dirty lines as it does there (the zeroing kernel is left out of the figures).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    import torch
    import tune_batchnorm as tb
    from bn_ab import _overrides
    from torch.profiler import ProfilerActivity, profile

    from fastnorm.kernels import config

    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="*", default=[""])
    ap.add_argument("--ops", default="train_fwd,train_bwd")
    ap.add_argument("--flush", action="store_true")
    args = ap.parse_args()
    defaults = {name: getattr(config, name) for spec in args.specs if spec != "torch" for name in _overrides(spec)}
    copy_bw = tb.copy_bandwidth()  # bytes/s
    cache = torch.empty(1 << 26, dtype=torch.int32, device="cuda") if args.flush else None
    print(f"copy {copy_bw / 1e9:.0f} GB/s")
    for shape, dtype_name, cl in tb.selected_cases():
        case = tb.make_case(shape, dtype_name, cl)
        for op in args.ops.split(","):
            floor_us = tb.fewest_bytes(op, case) / copy_bw * 1e6
            for spec in args.specs:
                for name, value in {**defaults, **({} if spec == "torch" else _overrides(spec))}.items():
                    setattr(config, name, value)
                fn = tb.runner(op, "torch" if spec == "torch" else "fastnorm", case)[0]
                for _ in range(5):
                    fn()
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(20):
                        if cache is not None:
                            cache.zero_()
                        fn()
                    torch.cuda.synchronize()
                times: dict[str, float] = {}
                for ev in prof.events():
                    flush = cache is not None and "FillFunctor" in ev.name  # the zeroing, not the op's
                    if ev.device_type == torch.autograd.DeviceType.CUDA and not flush:
                        times[ev.name] = times.get(ev.name, 0.0) + ev.device_time_total / 20
                total = sum(times.values())
                parts = ", ".join(f"{k[:28]} {v:.1f}" for k, v in sorted(times.items(), key=lambda kv: -kv[1]))
                print(f"{tb.case_key(shape, dtype_name, cl):30s} {op:9s} [{spec or 'default'}] total {total:.1f} µs "
                      f"(floor {floor_us:.1f}: {100 * floor_us / total:.0f}%): {parts}")


if __name__ == "__main__":
    main()
