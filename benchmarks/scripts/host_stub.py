"""fastnorm's Python host cost per call, measured on a CPU-only machine with the kernel launches stubbed.

The eager path's host time is what most small BatchNorm and LayerNorm cells of the suites measure (the GPU
finishes first). This script runs that path on CPU tensors as if they were CUDA tensors: ``uses_triton`` says
yes, every ``_Launcher`` goes through its real repeat-launch code (argument keys, cache lookup) and stops at the C
launch function, and the CUDA queries it makes are answered by stand-ins (device 0, stream 0, 132 SMs). What it
leaves out is the C launch itself (Triton's launcher and the driver: ~5-8 us per launch on the GPU hosts) and
the CUDA caching allocator (CPU allocations stand in).

    python benchmarks/scripts/host_stub.py [--calls 2000] [--profile CASE]

Prints, per case, the median over rounds of the mean µs per call, and with ``--profile`` the hottest functions
of one case (cProfile). Not for CI: numbers depend on the machine; compare runs of the same machine.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch

import fastnorm
from fastnorm.kernels import config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from launch_stubs import stub_launches  # noqa: E402  (the tests' stubbed launch path)


def install_stubs() -> None:
    """Route CPU tensors through the Triton path with every launch stubbed (see the module docstring)."""
    stub_launches(setattr, None, torch.zeros(1 << 16, dtype=torch.int32))
    config.multiprocessor_count = lambda index: 132  # plans as on an H100/H200


def per_call_us(fn, calls: int, rounds: int = 7) -> float:
    for _ in range(50):
        fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(out)


def cases() -> dict:
    """name -> a zero-argument call; the BatchNorm shapes are the suite's (bf16 x, fp32 parameters)."""
    out = {}
    for shape, cl in (((16, 256, 56, 56), False), ((16, 256, 56, 56), True), ((32, 2048, 7, 7), False)):
        tag = f"{'x'.join(map(str, shape))}{' CL' if cl else ''}"
        fmt = torch.channels_last if cl else torch.contiguous_format
        x = torch.randn(shape, dtype=torch.bfloat16).contiguous(memory_format=fmt)
        xg = x.clone().requires_grad_(True)
        dy = torch.randn_like(x)
        c = shape[1]
        rm, rv = torch.zeros(c), torch.ones(c)
        w, b = torch.ones(c, requires_grad=True), torch.zeros(c, requires_grad=True)
        m = fastnorm.nn.BatchNorm2d(c).train()

        def train_fwd(x=x, rm=rm, rv=rv, w=w, b=b):
            with torch.no_grad():
                fastnorm.batch_norm(x, rm, rv, w, b, True)

        def train_fwd_grad(xg=xg, rm=rm, rv=rv, w=w, b=b):
            return fastnorm.batch_norm(xg, rm, rv, w, b, True)

        def train_step(xg=xg, dy=dy, rm=rm, rv=rv, w=w, b=b):
            torch.autograd.grad(fastnorm.batch_norm(xg, rm, rv, w, b, True), (xg, w, b), dy)

        y_kept = fastnorm.batch_norm(xg, rm, rv, w, b, True)

        def train_bwd(y=y_kept, xg=xg, dy=dy, w=w, b=b):  # as the suite times it
            torch.autograd.grad(y, (xg, w, b), dy, retain_graph=True)

        def module_step(m=m, xg=xg, dy=dy):
            torch.autograd.grad(m(xg), (xg, m.weight, m.bias), dy)

        def eval_fwd(x=x, rm=rm, rv=rv, w=w, b=b):
            with torch.no_grad():
                fastnorm.batch_norm(x, rm, rv, w, b, False)

        out[f"bn train fwd, no grad {tag}"] = train_fwd
        out[f"bn train fwd, grad {tag}"] = train_fwd_grad
        out[f"bn train bwd {tag}"] = train_bwd
        out[f"bn train fwd+bwd {tag}"] = train_step
        out[f"BatchNorm2d step {tag}"] = module_step
        out[f"bn eval fwd {tag}"] = eval_fwd
    x = torch.randn(4096, 256, dtype=torch.bfloat16)
    xg = x.clone().requires_grad_(True)
    dy = torch.randn_like(x)
    ln = fastnorm.nn.LayerNorm(256)

    def ln_fwd():
        with torch.no_grad():
            ln(x)

    def ln_step():
        torch.autograd.grad(ln(xg), (xg, ln.weight, ln.bias), dy)

    x3 = torch.randn(8, 512, 1024, dtype=torch.bfloat16)
    x3g = x3.clone().requires_grad_(True)
    dy3 = torch.randn_like(x3)
    rms = fastnorm.nn.RMSNorm(1024)

    def rms_step():
        torch.autograd.grad(rms(x3g), (x3g, rms.weight), dy3)

    out["LayerNorm(256) fwd, no grad 4096x256"] = ln_fwd
    out["LayerNorm(256) step 4096x256"] = ln_step
    out["RMSNorm(1024) step 8x512x1024"] = rms_step
    out.update(sync_cases())
    return out


def sync_cases() -> dict:
    """SyncBatchNorm's one-host path (its exchange's symmetric buffers stood in by local ones that nothing reads: the
    launches are stubbed), 2 ranks, bf16 16×256×56², forward and forward + backward."""
    from types import SimpleNamespace

    from fastnorm import _symm_exchange, distributed
    from helpers import peer_buffers  # the tests' stand-in buffers (their folder is on sys.path)

    c, world = 256, 2
    bufs, peers = peer_buffers(c, world, "cpu")
    slot = SimpleNamespace(row=bufs[0][:2 * c + 1], stats_exchange=lambda: peers[0], sums_exchange=lambda: peers[0])
    _symm_exchange.exchange_slot = lambda group, x, c: slot
    group = object()  # never used by the exchange's stand-in
    xg = torch.randn(16, c, 56, 56, dtype=torch.bfloat16).requires_grad_(True)
    dy = torch.randn_like(xg)
    rm, rv = torch.zeros(c), torch.ones(c)
    w, b = torch.ones(c, requires_grad=True), torch.zeros(c, requires_grad=True)

    def forward():
        return distributed.sync_batch_norm(xg, rm, rv, w, b, momentum=0.1, eps=1e-5, process_group=group,
                                           world_size=world)

    def step():
        torch.autograd.grad(forward(), (xg, w, b), dy)

    return {"SyncBatchNorm fwd 16x256x56x56": forward, "SyncBatchNorm fwd+bwd 16x256x56x56": step}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--profile", default="", help="substring of a case name: print its hottest functions")
    args = ap.parse_args()
    torch.set_num_threads(1)
    install_stubs()
    table = cases()
    print(f"host µs per call with launches stubbed (CPU tensors, torch {torch.__version__})")
    for name, fn in table.items():
        print(f"| {name:44s} | {per_call_us(fn, args.calls):7.2f} |")
    if args.profile:
        name = next(n for n in table if args.profile in n)
        fn = table[name]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            fn()
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        print(f"\n{name}: hottest functions over {args.calls} calls\n{s.getvalue()}")


if __name__ == "__main__":
    main()
