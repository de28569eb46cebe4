"""Where the host time of one suite-style backward call goes: ``torch.autograd.grad(y, inputs, dy,
retain_graph=True)`` on a kept forward, fastnorm against torch, split into the autograd engine, fastnorm's Python
and the launch.

Why it matters: the suites' timer zeroes 256 MiB (~85 µs of GPU time on an H100) before each timed call, so a call
whose host time before its first kernel launch exceeds that adds the difference to its measured time — at any
tensor size (the H100 report's bf16 frozen backward at 256×256×28²: 74% of copy, marked host-bound).

Rows, per case (host µs): "warm" is the mean of back-to-back calls (the GPU queue never waited on), "cold" the
median of calls each made right after a synchronize, "to launch" the median time from the call to fastnorm's first
C launch (cold). The pieces: the same grad through a no-work autograd Function of the op's signature (the engine's
share), fastnorm's backward called directly (no engine), its replayed launches alone (``Program.run``), torch's
allocations.

    PYTHONPATH=src python benchmarks/scripts/backward_host.py
"""

from __future__ import annotations

import statistics
import time

import torch
from host_costs import per_call_us  # this script's folder is on sys.path

import fastnorm
from fastnorm.kernels import _launch
from fastnorm.ops import batch_norm as OB

CALLS = 300
DEVICE = torch.device("cuda")


class FirstLaunch:
    """Notes when the first C launch after ``start()`` happens: wraps the C launch function of every compiled kernel
    made from here on (replayed programs call what they found at recording; the wrapper adds ~0.3 µs a launch)."""

    def __init__(self):
        self.t0 = self.first = None
        self._init = _launch._Compiled.__init__
        outer = self

        def init(entry, kernel, cooperative):
            outer._init(entry, kernel, cooperative)
            if entry.launch is not None:
                real = entry.launch

                def launch(*args):
                    if outer.first is None and outer.t0 is not None:
                        outer.first = time.perf_counter()
                    return real(*args)

                entry.launch = launch

        _launch._Compiled.__init__ = init

    def start(self):
        self.first = None
        self.t0 = time.perf_counter()

    def restore(self):
        _launch._Compiled.__init__ = self._init


def cold_us(fn, calls: int = 100, probe: FirstLaunch | None = None) -> tuple[float, float | None]:
    """Median host µs of ``fn`` called right after a synchronize, and (with ``probe``) of the time to its first
    fastnorm launch."""
    for _ in range(5):
        fn()
    total, first = [], []
    for _ in range(calls):
        torch.cuda.synchronize()
        if probe is not None:
            probe.start()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        total.append((t1 - t0) * 1e6)
        if probe is not None and probe.first is not None:
            first.append((probe.first - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(total), (statistics.median(first) if first else None)


class _Like(torch.autograd.Function):
    """No work, ``n_in`` inputs, the first's gradient a view of dy and ``n_param`` parameter gradients from
    ``empty_like``: what the engine and a Python node cost around an op of this signature."""

    @staticmethod
    def forward(ctx, x, *params):
        ctx.save_for_backward(x, *params)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        _, *params = ctx.saved_tensors
        return (g, *(torch.empty_like(p) for p in params))


def bn_case(shape, dtype, frozen: bool):
    dev = DEVICE
    c = shape[1]
    x = torch.randn(shape, device=dev, dtype=dtype).requires_grad_(True)
    dy = torch.randn_like(x)
    w = torch.rand(c, device=dev).add_(0.5).requires_grad_(True)
    b = torch.randn(c, device=dev).requires_grad_(True)
    rm, rv = torch.zeros(c, device=dev), torch.ones(c, device=dev)
    training = not frozen
    fy = fastnorm.batch_norm(x, rm, rv, w, b, True, use_global_stats=frozen)
    ty = torch.nn.functional.batch_norm(x, rm.clone(), rv.clone(), w, b, training)
    ly = _Like.apply(x, w, b)
    oy = x * 1
    inputs = (x, w, b)
    node = fy.grad_fn
    saved = node.saved_tensors  # x, weight, y-or-None, shift, mrel, rstd
    bargs = (dy, saved[0], None, saved[1], saved[3], saved[4], saved[5], not frozen, False, False, True, True, True,
             False, torch.float32, torch.float32)
    return {
        "fastnorm autograd.grad": lambda: torch.autograd.grad(fy, inputs, dy, retain_graph=True),
        "torch autograd.grad": lambda: torch.autograd.grad(ty, inputs, dy, retain_graph=True),
        "no-work Function, autograd.grad": lambda: torch.autograd.grad(ly, inputs, dy, retain_graph=True),
        "x*1, autograd.grad (x only)": lambda: torch.autograd.grad(oy, (x,), dy, retain_graph=True),
        "fastnorm _backward_impl direct": lambda: OB._backward_impl(*bargs),
        "torch.empty(c) x2 + empty_like(x)": lambda: (torch.empty(c, device=dev), torch.empty(c, device=dev),
                                                      torch.empty_like(x)),
    }, training


def ln_case(rows: int, n: int, dtype):
    dev = DEVICE
    x = torch.randn(rows, n, device=dev, dtype=dtype).requires_grad_(True)
    dy = torch.randn_like(x)
    w = torch.rand(n, device=dev, dtype=dtype).add_(0.5).requires_grad_(True)
    b = torch.randn(n, device=dev, dtype=dtype).requires_grad_(True)
    fy = fastnorm.layer_norm(x, (n,), w, b)
    ty = torch.nn.functional.layer_norm(x, (n,), w, b)
    ly = _Like.apply(x, w, b)
    inputs = (x, w, b)
    return {
        "fastnorm autograd.grad": lambda: torch.autograd.grad(fy, inputs, dy, retain_graph=True),
        "torch autograd.grad": lambda: torch.autograd.grad(ty, inputs, dy, retain_graph=True),
        "no-work Function, autograd.grad": lambda: torch.autograd.grad(ly, inputs, dy, retain_graph=True),
    }


def main() -> None:
    probe = FirstLaunch()
    print(f"host µs per call, {torch.cuda.get_device_name()}, torch {torch.__version__}; warm: mean of {CALLS} "
          "back to back; cold: median of 100 after a synchronize; to launch: cold, until fastnorm's first launch")
    cases = []
    for shape, frozen in (((32, 2048, 7, 7), False), ((256, 256, 28, 28), False), ((256, 256, 28, 28), True)):
        rows, _ = bn_case(shape, torch.bfloat16, frozen)
        cases.append((f"BN {'frozen' if frozen else 'train'} bwd {'x'.join(map(str, shape))}", rows))
    cases.append(("LN bwd 4096x256", ln_case(4096, 256, torch.bfloat16)))
    cases.append(("LN bwd 49152x512", ln_case(49152, 512, torch.bfloat16)))
    print(f"| {'case':32} | {'call':36} | warm µs | cold µs | to launch |")
    for label, rows in cases:
        for name, fn in rows.items():
            w = per_call_us(fn, CALLS, rounds=1)
            c, f = cold_us(fn, probe=probe if name.startswith("fastnorm") else None)
            fs = f"{f:9.1f}" if f is not None else " " * 9
            print(f"| {label:32} | {name:36} | {w:7.1f} | {c:7.1f} | {fs} |", flush=True)
    probe.restore()
    # The backward's own Python, by function (wrapped; they run on the engine's device thread too).
    from profile_host import Stopwatch  # this script's folder is on sys.path

    from fastnorm.kernels import _replay
    rows, _ = bn_case((32, 2048, 7, 7), torch.bfloat16, False)
    fn = rows["fastnorm autograd.grad"]
    targets = [(OB, "_grads"), (OB, "_backward_impl"), (_replay.Programs, "run"), (_replay.Program, "run"),
               (OB._BatchNormFunction, "backward")]
    sw = Stopwatch(targets)
    try:
        c, _ = cold_us(fn, calls=200)
        w = per_call_us(fn, 200, rounds=1)
    finally:
        sw.restore()
    calls = 5 + 200 + 20 + 200
    print(f"\nBN train bwd 32x2048x7x7 through autograd.grad (cold median {c:.1f} µs, warm {w:.1f}), wrapped "
          "functions, mean µs per call:")
    for name, (t, n) in sw.totals.items():
        print(f"| {name:40} | {t / calls * 1e6:7.2f} | calls/call {n / calls:.1f}")


if __name__ == "__main__":
    main()
