"""How much of a tensor that one kernel has just read a second kernel finds in L2, by the second kernel's order and
the first kernel's L2 eviction hints.

    python benchmarks/scripts/l2_reuse.py [--mb 16,32,64,103,206] [--tail-mb 16,24,32,40]

Pass 1 reads x (bf16) once, ascending (flat blocks in program order), summing each block; pass 2 copies x to y,
its blocks ascending or descending, its stores plain or evict_first. Each pair runs after do_bench's L2 flush;
pass 2's time is time(pass 1 + pass 2) - time(pass 1), reported as GB/s on its 2·size bytes beside a copy of the
same bytes with a cold L2 (pass 2 alone).

Tail variants (``--tail-mb``): pass 1 loads its last T MB with ``evict_last`` and the rest plainly (``T``) or
``evict_first`` (``T/f``); pass 2 descending with evict_first stores. Besides pass 2's GB/s, the second table gives
the pair's GB/s on its 3·size bytes (read, read, write: what a two-read training forward moves) — the figure that
counts when pass 1 itself pays for its hints.
"""

from __future__ import annotations

import argparse

import torch
import triton
import triton.language as tl

BLOCK = 4096

_PLAIN, _FIRST, _LAST = 0, 1, 2


@triton.jit
def _load(x_ptr, i, n, HINT: tl.constexpr):
    if HINT == 2:
        return tl.load(x_ptr + i, mask=i < n, other=0.0, eviction_policy="evict_last")
    elif HINT == 1:
        return tl.load(x_ptr + i, mask=i < n, other=0.0, eviction_policy="evict_first")
    else:
        return tl.load(x_ptr + i, mask=i < n, other=0.0)


@triton.jit
def _read(x_ptr, out_ptr, n, TAIL0, BLOCK: tl.constexpr, REST: tl.constexpr):
    """Block sums; blocks from TAIL0 on loaded evict_last, the others with hint REST."""
    b = tl.program_id(0)
    i = b * BLOCK + tl.arange(0, BLOCK)
    if b >= TAIL0:
        v = _load(x_ptr, i, n, 2)
    else:
        v = _load(x_ptr, i, n, REST)
    tl.store(out_ptr + b, tl.sum(v.to(tl.float32)))


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


def _measure(mb: float, tails: list[float]) -> tuple[list[float], list[float]]:
    """-> (pass 2's GB/s: cold (pass 2 alone), then after pass 1 — ascending, descending, ascending + evict_first,
    descending + evict_first, then per tail T: T, T/f; the pair's GB/s on 3·size for the same variants but cold)."""
    n = int(mb * 1e6 / 2)
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, BLOCK),)
    part = torch.empty(grid[0], device="cuda", dtype=torch.float32)

    def p1(tail_mb=0.0, rest=_PLAIN):
        tail0 = grid[0] - int(tail_mb * 1e6 / 2 / BLOCK) if tail_mb else grid[0]
        return lambda: _read[grid](x, part, n, tail0, BLOCK=BLOCK, REST=rest)

    def p2(desc, ev):
        return lambda: _copy[grid](x, y, n, BLOCK=BLOCK, DESC=desc, EVICT=ev)

    variants = [(p1(), desc, ev) for desc, ev in ((False, False), (True, False), (False, True), (True, True))]
    variants += [(p1(t, rest), True, True) for t in tails for rest in (_PLAIN, _FIRST)]
    cold = _bench(p2(False, False))
    second, pair = [2 * n * 2 / (cold * 1e-3) / 1e9], []
    for first, desc, ev in variants:
        t1 = _bench(first)
        t12 = _bench(lambda first=first, desc=desc, ev=ev: (first(), p2(desc, ev)()))
        second.append(2 * n * 2 / ((t12 - t1) * 1e-3) / 1e9)
        pair.append(3 * n * 2 / (t12 * 1e-3) / 1e9)
    return second, pair


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", default="16,32,48,64,103,206")
    ap.add_argument("--tail-mb", default="", help="comma list of pass 1's evict_last tails in MB")
    args = ap.parse_args()
    tails = [float(t) for t in args.tail_mb.split(",") if t]
    print(torch.cuda.get_device_name())
    heads = ["asc", "desc", "asc+ev", "desc+ev"] + [f"{t:g}{s}" for t in tails for s in ("", "/f")]
    rows = [(mb, *_measure(mb, tails)) for mb in map(float, args.mb.split(","))]
    print(f"{'MB':>5} {'cold':>7} " + " ".join(f"{h:>7}" for h in heads) + "   (pass 2, GB/s on 2·size)")
    for mb, second, _ in rows:
        print(f"{mb:5.0f} " + " ".join(f"{g:7.0f}" for g in second))
    print(f"{'MB':>5} " + " ".join(f"{h:>7}" for h in heads) + "   (pass 1 + pass 2, GB/s on 3·size)")
    for mb, _, pair in rows:
        print(f"{mb:5.0f} " + " ".join(f"{g:7.0f}" for g in pair))


if __name__ == "__main__":
    main()
