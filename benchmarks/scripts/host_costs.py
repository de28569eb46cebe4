"""Host µs of the building blocks of an eager fastnorm call (allocations, checks, launches, autograd).

    PYTHONPATH=src python benchmarks/scripts/host_costs.py

Each row: median over 7 rounds of the mean host time of 300 calls (the GPU queue drained between rounds).
"""

from __future__ import annotations

import statistics
import sys
import time

import torch
from profile_host import host_times, wrapped_steps  # this script's folder is on sys.path

import fastnorm
from fastnorm.kernels import batch_norm as KB
from fastnorm.kernels import config
from fastnorm.ops import batch_norm as OB


def per_call_us(fn, n: int = 300, rounds: int = 7) -> float:
    for _ in range(20):
        fn()
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    torch.cuda.synchronize()
    return statistics.median(out)


class _Id(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


def breakdown(dev) -> None:
    """Where a fastnorm BatchNorm2d training step's host time goes (functions wrapped, µs per step)."""
    from triton.backends.nvidia.driver import CudaLauncher

    from fastnorm.kernels import _launch

    m = fastnorm.nn.BatchNorm2d(256, device=dev).train()
    x = torch.randn(16, 256, 56, 56, device=dev, dtype=torch.bfloat16).requires_grad_(True)
    dy = torch.randn_like(x)
    for _ in range(5):
        m(x).backward(dy)
    nnbn = sys.modules["fastnorm.nn.batch_norm"]
    targets = [(nnbn, "batch_norm"), (nnbn.BatchNorm2d, "_check_input_dim"), (OB, "_forward_impl"), (OB, "_grads"),
               (OB, "_backward_impl"), (KB, "forward_train"), (KB, "backward"), (KB, "apply"), (KB, "view"),
               (KB, "_sync"), (_launch._Launcher, "__call__"), (CudaLauncher, "__call__"),
               (_launch, "_launch_args" if hasattr(_launch, "_launch_args") else "_arg_keys")]
    steps = 200
    print(f"\nBatchNorm2d(256) bf16 16x256x56x56 step, host µs per step (wrapped; {steps} steps):")
    for label, us, calls in wrapped_steps(m, x, dy, steps, targets):
        print(f"| {label:40} | {us:7.2f} | calls/step {calls:.1f}")


def steps(dev) -> None:
    """Host µs of whole eager training steps (module forward + backward), torch against fastnorm: warm (back to
    back) and cold (the GPU queue drained before each step, as the SyncBatchNorm benchmark times a step)."""
    cases = [
        ("BatchNorm2d(256) bf16 16x256x56x56", (16, 256, 56, 56), torch.nn.BatchNorm2d, fastnorm.nn.BatchNorm2d),
        ("BatchNorm2d(2048) bf16 16x2048x7x7", (16, 2048, 7, 7), torch.nn.BatchNorm2d, fastnorm.nn.BatchNorm2d),
        ("LayerNorm(256) bf16 4096x256", (4096, 256), torch.nn.LayerNorm, fastnorm.nn.LayerNorm),
    ]
    print("\nwhole training steps, host µs (warm: mean of 300 back to back; cold: median of 300, queue drained "
          "before each: profile_host.host_times)")
    for label, shape, *mods in cases:
        x = torch.randn(shape, device=dev, dtype=torch.bfloat16).requires_grad_(True)
        dy = torch.randn_like(x)
        for mk in mods:
            if len(shape) == 4:  # BatchNorm: fp32 parameters (mixed precision)
                m = mk(shape[1], device=dev)
            else:
                m = mk(shape[-1], device=dev, dtype=torch.bfloat16)

            def step(m=m, x=x, dy=dy):
                m(x).backward(dy)

            warm = per_call_us(step)
            cold = host_times(m, x, dy, 300)[2]
            lib = mk.__module__.split(".")[0]
            print(f"| {label:36} | {lib:8} | warm {warm:7.1f} | cold {cold:7.1f} |")


class _Wide(torch.autograd.Function):
    """BatchNorm's autograd signature (13 inputs, 6 saved tensors) with no work: the engine's own cost."""

    @staticmethod
    def forward(ctx, x, weight, bias, z, rm, rv, nbt, batch_stats, update, momentum, eps, fix_gamma, relu):
        ctx.save_for_backward(x, weight, None, rm, rv, rm)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        x, weight, _, a, b, c = ctx.saved_tensors
        return g, torch.empty_like(weight), torch.empty_like(weight), None, None, None, None, None, None, None, \
            None, None, None


def main() -> None:
    dev = torch.device("cuda")
    x = torch.randn(16, 256, 56, 56, device=dev, dtype=torch.bfloat16)
    xg = x.clone().requires_grad_(True)
    dy = torch.randn_like(x)
    w = torch.ones(256, device=dev)
    b = torch.zeros(256, device=dev)
    rm = torch.zeros(256, device=dev)
    rv = torch.ones(256, device=dev)
    wg = w.clone().requires_grad_(True)
    bg = b.clone().requires_grad_(True)
    small = torch.randn(4096, device=dev)
    xv = KB.view(x)
    y = torch.empty_like(x)
    sm = config.multiprocessor_count(0)
    nbt = torch.zeros((), dtype=torch.long, device=dev)
    rows = [
        ("torch.empty(256)", lambda: torch.empty(256, device=dev)),
        ("torch.empty(256, dtype, device) x4", lambda: [torch.empty(256, dtype=torch.float32, device=dev)
                                                         for _ in range(4)]),
        ("torch.zeros(256, int32)", lambda: torch.zeros(256, dtype=torch.int32, device=dev)),
        ("torch.empty_like(x)", lambda: torch.empty_like(x)),
        ("small.add_(1) (a launch)", lambda: small.add_(1)),
        ("nbt.add_(1)", lambda: nbt.add_(1)),
        ("slice t[:256]", lambda: small[:256]),
        ("torch.compiler.is_compiling()", torch.compiler.is_compiling),
        ("KB.view(x)", lambda: KB.view(x)),
        ("batch_norm_plan", lambda: config.batch_norm_plan(False, 256, xv.v, 2, "fused", "fwd", sm, xv.l)),
        ("KB._sync(plan)", lambda: KB._sync(config.batch_norm_plan(False, 256, xv.v, 2, "fused", "fwd", sm, xv.l),
                                            dev)),
        ("KB.apply (1 launch, bf16 56^2)", lambda: KB.apply(xv, y, None, w, b, rm, None, rv, is_var=True, eps=1e-5,
                                                            fix_gamma=False, relu=False, save=False)),
        ("KB.stats", lambda: KB.stats(xv)),
        ("KB.forward_train", lambda: KB.forward_train(xv, y, None, w, b, rm, rv, None, 0.1, 1e-5, False, False)),
        ("_Id.apply(x) no grad", lambda: _Id.apply(x)),
        ("_Id.apply(xg) grad", lambda: _Id.apply(xg)),
        ("_Id fwd+bwd", lambda: _Id.apply(xg).backward(dy)),
        ("(xg*1) fwd+bwd", lambda: (xg * 1).backward(dy)),
        ("_Wide fwd+bwd (x, w, b need grad)", lambda: _Wide.apply(xg, wg, bg, None, rm, rv, None, True, True, 0.1,
                                                                  1e-5, False, False).backward(dy)),
        ("OB.batch_norm train (no grad)", lambda: OB.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)),
        ("F.batch_norm train (no grad)", lambda: torch.nn.functional.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)),
        ("fastnorm.layer_norm 4096x256 no grad", lambda: fastnorm.layer_norm(small.view(16, 256), (256,))),
        ("F.layer_norm 4096x256 no grad", lambda: torch.nn.functional.layer_norm(small.view(16, 256), (256,))),
    ]
    print(f"host µs per call, {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name, fn in rows:
        print(f"| {name:40} | {per_call_us(fn):7.2f} |")
    steps(dev)
    breakdown(dev)


if __name__ == "__main__":
    main()
