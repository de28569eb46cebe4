"""Host cost of one kernel launch on this machine: torch's own kernel (runtime API) against a Triton kernel through
Triton's launcher and through fastnorm's ``_Launcher`` (Triton's C launch function called directly). A host where
Python-driven implementations lose against torch eager in host-bound rows shows it here.

    PYTHONPATH=src python3 benchmarks/scripts/launch_cost.py
"""

import time

import torch
import triton
import triton.language as tl

from fastnorm.kernels._launch import _Launcher


@triton.jit
def _add_one(X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs, mask=offs < n) + 1, mask=offs < n)


def per_call_us(fn, n=2000):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return best


def main():
    x = torch.zeros(1024, device="cuda")
    launcher = _Launcher(_add_one)
    rows = {
        "torch x.add_(1)": lambda: x.add_(1),
        "torch.empty(1024)": lambda: torch.empty(1024, device="cuda"),
        "triton kernel[grid](...)": lambda: _add_one[(1,)](x, 1024, BLOCK=1024),
        "fastnorm _Launcher": lambda: launcher((1,), (x, 1024), {"BLOCK": 1024}, 4, None),
    }
    print(f"host us per call (best of 5 x 2000), {torch.cuda.get_device_name()}")
    for name, fn in rows.items():
        print(f"  {name:28s} {per_call_us(fn):7.2f}")


if __name__ == "__main__":
    main()
