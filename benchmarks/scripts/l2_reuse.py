"""How much of a tensor that one kernel has just read a second kernel finds in L2, by the second kernel's order.

    python benchmarks/scripts/l2_reuse.py [--mb 16,32,64,103,206]

Pass 1 reads x (bf16) once, ascending (flat blocks in program order), summing each block; pass 2 copies x to y,
its blocks ascending or descending, its stores plain or evict_first. Each pair runs after do_bench's L2 flush;
pass 2's time is time(pass 1 + pass 2) - time(pass 1), reported as GB/s on its 2·size bytes beside a copy of the
same bytes with a cold L2 (pass 2 alone).
"""

from __future__ import annotations

import argparse

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _read(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + i, mask=i < n, other=0.0).to(tl.float32)))


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr, DESC: tl.constexpr, EVICT: tl.constexpr):
    b = tl.program_id(0)
    if DESC:
        b = tl.num_programs(0) - 1 - b
    i = b * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    if EVICT:
        tl.store(y_ptr + i, v, mask=i < n, eviction_policy="evict_first")
    else:
        tl.store(y_ptr + i, v, mask=i < n)


def _bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=60, return_mode="median")


def _measure(mb: float) -> list[float]:
    """Pass 2's GB/s: cold, then after pass 1 ascending / descending / ascending + evict_first / descending + both."""
    n = int(mb * 1e6 / 2)
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, BLOCK),)
    part = torch.empty(grid[0], device="cuda", dtype=torch.float32)

    def p1():
        _read[grid](x, part, n, BLOCK=BLOCK)

    def pair(desc, ev):
        return lambda: (p1(), _copy[grid](x, y, n, BLOCK=BLOCK, DESC=desc, EVICT=ev))

    t1 = _bench(p1)
    times = [_bench(lambda: _copy[grid](x, y, n, BLOCK=BLOCK, DESC=False, EVICT=False))]
    times += [_bench(pair(desc, ev)) - t1 for desc, ev in ((False, False), (True, False), (False, True), (True, True))]
    return [2 * n * 2 / (t * 1e-3) / 1e9 for t in times]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", default="16,32,48,64,103,206")
    args = ap.parse_args()
    print(torch.cuda.get_device_name())
    print(f"{'MB':>5} {'cold':>7} {'asc':>7} {'desc':>7} {'asc+ev':>7} {'desc+ev':>7}   (pass 2, GB/s on 2·size)")
    for mb in map(float, args.mb.split(",")):
        print(f"{mb:5.0f} " + " ".join(f"{g:7.0f}" for g in _measure(mb)))


if __name__ == "__main__":
    main()
