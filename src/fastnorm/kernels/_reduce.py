"""Triton helpers shared by the kernels' cross-lane reductions."""

import triton
import triton.language as tl


@triton.jit
def rounded_prod(a, b):
    """a·b rounded on its own, for products that ``tl.sum`` reduces across lanes. A plain product is
    contracted into the first butterfly add of the reduction as an FMA on each lane, against the rounded
    product of its partner lane, so the lanes' copies of the sum differ in the last bit
    (triton-lang/triton#7264): a row's statistic would depend on the lane that reads it, and storing it
    is a shared-memory write race (compute-sanitizer racecheck). ``fma(a, b, +0.0)`` rounds once and is
    never folded into a multiply (-0.0 + 0.0 = +0.0), so every lane adds the same rounded products."""
    return tl.fma(a, b, 0.0)
