"""Session 27, call 2: why did the suite's capture of fastnorm's BatchNorm training backward fail (call 1, H200,
bf16 NCHW 256x64x56x56: "operation failed due to a previous error during capture")? Each variant in a fresh
state: capture the backward the way Timer.graph_ms does, print the first error with its traceback."""
import sys
import traceback

import torch

import fastnorm
from fastnorm.bench import common

shape = tuple(int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "256x64x56x56").split("x"))
dev = "cuda"
torch.manual_seed(0)
x = torch.randn(shape, device=dev, dtype=torch.bfloat16).requires_grad_()
dy = torch.randn_like(x)
w = torch.rand(shape[1], device=dev).add_(0.5).requires_grad_()
b = torch.randn(shape[1], device=dev).requires_grad_()
rm, rv = torch.zeros(shape[1], device=dev), torch.ones(shape[1], device=dev)


def variant(name, impl, stats, mode, eager_first):
    def forward():
        if impl == "fastnorm":
            return fastnorm.batch_norm(x, rm if stats else None, rv if stats else None, w, b, training=True)
        return torch.nn.functional.batch_norm(x, rm if stats else None, rv if stats else None, w, b, training=True)

    def make():
        y = forward()
        return lambda: torch.autograd.grad(y, [x, w, b], dy, retain_graph=True)
    try:
        if eager_first:
            make()()
            torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn = make()
            fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream, capture_error_mode=mode):
            fn()
        torch.cuda.synchronize()
        g.replay()
        torch.cuda.synchronize()
        print(f"{name}: ok")
    except Exception as exc:
        print(f"{name}: FAILED {type(exc).__name__}: {str(exc).splitlines()[0]}")
        traceback.print_exc(limit=-6)
    try:
        torch.cuda.synchronize()
        print("   context after:", torch.ones(1, device=dev).add(1).item())
    except Exception as exc:
        print("   context after: LOST", common.short_error(exc))


for impl in ("fastnorm", "torch"):
    for stats in (True, False):
        for mode in ("global", "thread_local", "relaxed"):
            variant(f"{impl} stats={stats} mode={mode}", impl, stats, mode, eager_first=True)
