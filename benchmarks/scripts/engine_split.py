"""How a suite-style backward call's host time splits between the autograd engine and the Function's ``backward``.

``torch.autograd.grad(y, inputs, dy, retain_graph=True)`` on a kept forward, back to back: the mean host µs of the
whole call, and of the Function's own ``backward`` as the engine runs it (timed inside, on the engine's thread);
the rest is the engine around it. Beside them, the same ``backward`` body called directly on the main thread (no
engine), to see whether it costs more on the engine's thread.

    PYTHONPATH=src python benchmarks/scripts/engine_split.py
"""

from __future__ import annotations

import statistics
import time

import torch
from backward_host import _Like, bn_case, ln_case  # this script's folder is on sys.path
from host_costs import per_call_us
from profile_host import Stopwatch

import fastnorm
from fastnorm.ops import batch_norm as OB
from fastnorm.ops import layer_norm as OL

CALLS = 300
ROUNDS = 5


def split(fn, cls) -> tuple[float, float]:
    """(mean µs of the whole call, mean µs inside ``cls.backward``), median over rounds."""
    inside = Stopwatch([(cls, "backward")])
    (spent,) = inside.totals.values()
    try:
        for _ in range(20):
            fn()
        totals, insides = [], []
        for _ in range(ROUNDS):
            torch.cuda.synchronize()
            spent[:] = [0.0, 0]
            t0 = time.perf_counter()
            for _ in range(CALLS):
                fn()
            totals.append((time.perf_counter() - t0) / CALLS * 1e6)
            insides.append(spent[0] / max(spent[1], 1) * 1e6)
        torch.cuda.synchronize()
    finally:
        inside.restore()
    return statistics.median(totals), statistics.median(insides)


def main() -> None:
    print(f"host µs per call, {torch.cuda.get_device_name()}, torch {torch.__version__}; means of {CALLS} back to "
          f"back, median of {ROUNDS} rounds")
    print("| case | call | whole | inside backward | engine around | backward body direct |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shape, frozen in (((32, 2048, 7, 7), False), ((32, 2048, 7, 7), True), ((256, 256, 28, 28), True)):
        rows, _ = bn_case(shape, torch.bfloat16, frozen)
        label = f"BN {'frozen' if frozen else 'train'} bwd {'x'.join(map(str, shape))}"
        fy_fn = rows["fastnorm autograd.grad"]
        # the backward's body on the main thread: the node's saved state, through the same _grads
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16).requires_grad_(True)
        w = torch.rand(shape[1], device="cuda").add_(0.5).requires_grad_(True)
        b = torch.randn(shape[1], device="cuda").requires_grad_(True)
        rm, rv = torch.zeros(shape[1], device="cuda"), torch.ones(shape[1], device="cuda")
        y = fastnorm.batch_norm(x, rm, rv, w, b, True, use_global_stats=frozen)
        dy = torch.randn_like(y)
        node = y.grad_fn
        body = per_call_us(lambda node=node, dy=dy: OB._BatchNormFunction.backward(node, dy), CALLS, ROUNDS)
        whole, inside = split(fy_fn, OB._BatchNormFunction)
        print(f"| {label} | fastnorm | {whole:.1f} | {inside:.1f} | {whole - inside:.1f} | {body:.1f} |", flush=True)
        whole, inside = split(rows["no-work Function, autograd.grad"], _Like)
        print(f"| {label} | no-work Function | {whole:.1f} | {inside:.1f} | {whole - inside:.1f} | |", flush=True)
        print(f"| {label} | torch | {per_call_us(rows['torch autograd.grad'], CALLS, ROUNDS):.1f} | | | |", flush=True)
    rows = ln_case(49152, 256, torch.bfloat16)
    whole, inside = split(rows["fastnorm autograd.grad"], OL._NormFunction)
    print(f"| LN bwd 49152x256 | fastnorm | {whole:.1f} | {inside:.1f} | {whole - inside:.1f} | |", flush=True)
    torch_us = per_call_us(rows["torch autograd.grad"], CALLS, ROUNDS)
    print(f"| LN bwd 49152x256 | torch | {torch_us:.1f} | | | |", flush=True)


if __name__ == "__main__":
    main()
