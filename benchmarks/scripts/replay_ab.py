"""A/B of replayed launches (``kernels._replay``) against the full eager call, in one process on the GPU machine::

    PYTHONPATH=src python3 benchmarks/scripts/replay_ab.py

Per case (LayerNorm forward at small N, BatchNorm training forward without grad, whole training steps of three
modules in bf16: forward and ``torch.autograd.grad``): the suites' timing (``do_bench`` median, L2 flushed; ms)
and the host time of one call (µs, median of 5 rounds of 200 back-to-back calls, ``host_costs.per_call_us``),
replayed, with every call made in full (``Programs.run`` patched to call ``make()``), then replayed again. The GPU
work is the same launches either way: the timings should agree, the host times differ.
"""

from __future__ import annotations

import torch
import triton
from host_costs import per_call_us  # this script's folder is on sys.path

import fastnorm
from fastnorm.kernels import _replay


def cases() -> list[tuple[str, object]]:
    out = []
    for n in (64, 128, 256, 1024):
        x = torch.randn(49152, n, device="cuda", dtype=torch.bfloat16)
        w, b = torch.randn(n, device="cuda", dtype=torch.bfloat16), torch.randn(n, device="cuda", dtype=torch.bfloat16)

        def ln(x=x, w=w, b=b, n=n):
            with torch.no_grad():
                return fastnorm.layer_norm(x, (n,), w, b)
        out.append((f"LN fwd 49152x{n}", ln))
    for shape, cl in (((32, 2048, 7, 7), False), ((32, 2048, 7, 7), True), ((256, 64, 56, 56), False)):
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        if cl:
            x = x.contiguous(memory_format=torch.channels_last)
        c = shape[1]
        stats = (torch.zeros(c, device="cuda"), torch.ones(c, device="cuda"))
        params = (torch.ones(c, device="cuda"), torch.zeros(c, device="cuda"))

        def bn(x=x, stats=stats, params=params):
            with torch.no_grad():
                return fastnorm.batch_norm(x, *stats, *params, True)
        out.append((f"BN train fwd {'x'.join(map(str, shape))}{' CL' if cl else ''}", bn))
    for name, module, shape in (("BatchNorm2d(256) step 16x256x56x56", fastnorm.nn.BatchNorm2d(256), (16, 256, 56, 56)),
                                ("LayerNorm(256) step 4096x256", fastnorm.nn.LayerNorm(256), (4096, 256)),
                                ("RMSNorm(4096) step 8x512x4096", fastnorm.nn.RMSNorm(4096), (8, 512, 4096))):
        module = module.cuda()
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn_like(x)
        params = tuple(module.parameters())

        def step(module=module, x=x, dy=dy, params=params):  # forward + backward, gradients returned
            return torch.autograd.grad(module(x), (x, *params), dy)
        out.append((name, step))
    return out


def main() -> None:
    replayed = _replay.Programs.run

    def full(self, options, inputs, make):
        return make()

    print(f"{'case':36s} | ms replayed, full, replayed | host us replayed, full, replayed")
    for name, fn in cases():
        res = []
        for impl in (replayed, full, replayed):
            _replay.Programs.run = impl
            res.append((triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3,
                        per_call_us(fn, 200, 5)))
        _replay.Programs.run = replayed
        print(f"{name:36s} | {' '.join(f'{m:6.1f}' for m, _ in res)} | {' '.join(f'{h:6.1f}' for _, h in res)}")


if __name__ == "__main__":
    main()
