"""One LayerNorm/RMSNorm backward per call, three calls, for Nsight Compute to profile the backward kernel.

    ncu --kernel-name regex:_norm_bwd_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        ... python benchmarks/scripts/ncu_norm_bwd.py ln|rms N [ROWS]

x is bf16 of shape (ROWS, N), by default the suites' rows (``fastnorm.bench.norms.SWEEP_ROWS``, 49152), weight (and
bias) bf16. The first two backwards compile and warm up; profile the third (--launch-skip 2).
"""

import sys

import torch

import fastnorm
from fastnorm.bench.norms import SWEEP_ROWS

op, n = sys.argv[1], int(sys.argv[2])
m = int(sys.argv[3]) if len(sys.argv) > 3 else SWEEP_ROWS
x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
b = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
dy = torch.randn_like(x)
y = fastnorm.rms_norm(x, (n,), w) if op == "rms" else fastnorm.layer_norm(x, (n,), w, b)
inputs = [x, w] if op == "rms" else [x, w, b]
for _ in range(3):
    torch.autograd.grad(y, inputs, dy, retain_graph=True)
torch.cuda.synchronize()
print("done", op, (m, n))
