"""One BatchNorm training forward (or forward and backward) per case, for Nsight Compute to profile one of its
kernels (the statistics, resident, sums or dx kernel).

    ncu --kernel-name regex:_bn_fwd_fused_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \
        ... python benchmarks/scripts/ncu_bn_stats.py CASE [OVERRIDES] [--backward]

CASE (bf16): nchw14 (256x1024x14x14), cl28 (256x256x28x28 channels_last), nchw56 (256x64x56x56), cl56 (256x64x56x56
channels_last); tensors that fit the single-read kernel (``_bn_fwd_resident_kernel``): nchw7b32 / cl7b32 (32x2048x7x7),
nchw56b8 (8x64x56x56). Three forwards run (the first two compile and warm up; profile the third with --launch-skip 2).
OVERRIDES: names of ``fastnorm.kernels.config`` set first, as ``bn_ab.py``'s specs give them
(``BN_ROWS_WIDTH_MAX=128;...``). ``--backward``: each forward is followed by its backward (dy of normal draws; x, the
weight and the bias require grad), for the backward's kernels (``_bn_bwd_frozen_rows_kernel``, ``_bn_bwd_dx_kernel``,
...).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bn_ab import _overrides  # noqa: E402
from tune_batchnorm import _apply_overrides  # noqa: E402

import fastnorm  # noqa: E402

CASES = {"nchw14": ((256, 1024, 14, 14), False), "cl28": ((256, 256, 28, 28), True),
         "nchw56": ((256, 64, 56, 56), False), "cl56": ((256, 64, 56, 56), True), "nchw7b32": ((32, 2048, 7, 7), False),
         "cl7b32": ((32, 2048, 7, 7), True), "nchw56b8": ((8, 64, 56, 56), False)}

args = [a for a in sys.argv[1:] if a != "--backward"]
backward = "--backward" in sys.argv[1:]
shape, cl = CASES[args[0]]
_apply_overrides(_overrides(args[1] if len(args) > 1 else ""))
x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
if cl:
    x = x.contiguous(memory_format=torch.channels_last)
x.requires_grad_(backward)
c = shape[1]
rm, rv = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
w = torch.ones(c, device="cuda", requires_grad=backward)
b = torch.zeros(c, device="cuda", requires_grad=backward)
dy = torch.randn_like(x)
for _ in range(3):
    y = fastnorm.batch_norm(x, rm, rv, w, b, training=True)
    if backward:
        y.backward(dy)
torch.cuda.synchronize()
print("done", shape, "channels_last" if cl else "nchw")
