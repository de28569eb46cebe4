"""Host (CPU) cost of one training step of a norm layer, fastnorm vs torch: where the launch time goes.

At the per-GPU sizes of SyncBatchNorm and at small LayerNorm rows, a step is bound by the host's launch
work, not by the GPU. This script measures, per implementation, the host time of the forward call and of
``backward`` (the GPU is idle before each; nothing waits on it inside the timed region), counts the
GPU kernels and memsets per step, and prints fastnorm's hottest Python functions (cProfile).

    PYTHONPATH=src python benchmarks/scripts/profile_host.py                       # one GPU
    PYTHONPATH=src torchrun --standalone --nproc_per_node=2 benchmarks/scripts/profile_host.py   # + SyncBN

Rank 0 prints. Numbers are host microseconds (median of --iters steps).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time

import torch
import torch.distributed as dist

import fastnorm

#: The layers compared, by name: each is built as ``LAYERS[kind](features, device=...)``.
LAYERS = {
    "torch_bn": torch.nn.BatchNorm2d, "fastnorm_bn": fastnorm.nn.BatchNorm2d,
    "torch_sync": torch.nn.SyncBatchNorm, "fastnorm_sync": fastnorm.nn.SyncBatchNorm,
    "torch_ln": torch.nn.LayerNorm, "fastnorm_ln": fastnorm.nn.LayerNorm,
    "torch_rms": torch.nn.RMSNorm, "fastnorm_rms": fastnorm.nn.RMSNorm,
}


class Stopwatch:
    """Wraps module attributes (functions) to accumulate their host time over the calls in a region."""

    def __init__(self, targets):
        self.totals = {}
        self.saved = []
        for owner, attr in targets:
            fn = getattr(owner, attr)
            label = f"{getattr(owner, '__name__', type(owner).__name__)}.{attr}"
            self.totals[label] = [0.0, 0]
            raw = vars(owner).get(attr, fn)  # as stored: a class's staticmethod stays one when restored
            setattr(owner, attr, self._wrap(fn, label))
            self.saved.append((owner, attr, raw))

    def _wrap(self, fn, label):
        tot = self.totals[label]

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                tot[0] += time.perf_counter() - t0
                tot[1] += 1
        return timed

    def restore(self):
        for owner, attr, fn in self.saved:
            setattr(owner, attr, fn)


SYNC_STAGES = ("_forward_peers", "_local_stats", "_merge_stats", "_apply_peers", "_update_running_stats_", "_apply",
               "_backward_peers_dx", "_backward_sums", "_backward_dx", "_backward_peers")


def step_times(m, x, dy, steps: int) -> tuple[list[float], list[float]]:
    """Host µs of the forward and of the backward of ``steps`` training steps of module ``m`` (the GPU idle
    and every rank at a barrier before each step)."""
    fwd, bwd = [], []
    for _ in range(steps):
        x.grad = None
        m.zero_grad(set_to_none=True)
        _barrier()
        t0 = time.perf_counter()
        y = m(x)
        t1 = time.perf_counter()
        y.backward(dy)
        t2 = time.perf_counter()
        fwd.append((t1 - t0) * 1e6)
        bwd.append((t2 - t1) * 1e6)
    return fwd, bwd


def wrapped_steps(m, x, dy, steps: int, targets) -> list[tuple[str, float, float]]:
    """Mean host µs per training step of the forward, the backward and each wrapped function in ``targets``
    ((owner, attribute) pairs), with its calls per step."""
    sw = Stopwatch(targets)
    try:
        fwd, bwd = step_times(m, x, dy, steps)
    finally:
        sw.restore()
    rows = [("forward (total)", sum(fwd) / steps, 1), ("backward (total)", sum(bwd) / steps, 1)]
    return rows + [(label, t / steps * 1e6, n / steps) for label, (t, n) in sw.totals.items()]


def sync_breakdown(m, x, dy, steps: int) -> list[tuple[str, float, float]]:
    """fastnorm SyncBatchNorm: host µs per step in each stage and collective."""
    from fastnorm import _symm_exchange as fx
    from fastnorm import distributed as fd
    from fastnorm.ops import batch_norm as ob

    gather = "all_gather_single" if hasattr(dist, "all_gather_single") else "all_gather_into_tensor"
    return wrapped_steps(m, x, dy, steps, [(ob, s) for s in SYNC_STAGES]
                         + [(dist, gather), (dist, "all_reduce"), (fd, "sync_batch_norm"),
                            (fx, "exchange_slot")])


def _barrier():
    torch.cuda.synchronize()
    if dist.is_initialized():
        dist.barrier()
        torch.cuda.synchronize()


def host_times(m, x, dy, iters: int) -> tuple[float, float, float]:
    """Median host µs of forward, backward, and the whole step."""
    fwd, bwd = step_times(m, x, dy, iters)
    steps = [f + b for f, b in zip(fwd, bwd, strict=True)]
    return statistics.median(fwd), statistics.median(bwd), statistics.median(steps)


def kernel_count(m, x, dy) -> tuple[int, list[str]]:
    from torch.profiler import ProfilerActivity, profile

    x.grad = None
    m.zero_grad(set_to_none=True)
    _barrier()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        y = m(x)
        y.backward(dy)
        torch.cuda.synchronize()
    names = [f"{e.name[:48]} {e.time_range.elapsed_us():.1f}us" for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(names), names


def hot_functions(m, x, dy, iters: int, top: int) -> str:
    pr = cProfile.Profile()
    for _ in range(3):
        x.grad = None
        y = m(x)
        y.backward(dy)
    _barrier()
    pr.enable()
    for _ in range(iters):
        x.grad = None
        m.zero_grad(set_to_none=True)
        y = m(x)
        y.backward(dy)
    pr.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(top)
    return s.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--profile", default="torch_bn,fastnorm_bn,fastnorm_sync,fastnorm_ln", help="kinds to cProfile")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--bn-shapes", default="16x256x56x56,16x256x56x56:cl,16x2048x7x7",
                    help="BatchNorm inputs, comma-separated NxCxHxW with ':cl' for channels_last")
    ap.add_argument("--norm-ns", default="256,4096", help="LayerNorm/RMSNorm row lengths (4096 rows), or ''")
    args = ap.parse_args()
    if "RANK" in os.environ:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    rank0 = not dist.is_initialized() or dist.get_rank() == 0
    dev = torch.device("cuda")
    world = dist.get_world_size() if dist.is_initialized() else 1
    cases = []
    bn_shapes = [(tuple(int(d) for d in spec.split(":")[0].split("x")), spec.endswith(":cl"))
                 for spec in args.bn_shapes.split(",") if spec]
    for shape, cl in bn_shapes:
        kinds = ["torch_bn", "fastnorm_bn"] + (["torch_sync", "fastnorm_sync"] if world > 1 else [])
        for k in kinds:
            cases.append((k, shape, torch.bfloat16, cl))
    for n in (int(v) for v in args.norm_ns.split(",") if v):
        for k in ("torch_ln", "fastnorm_ln", "torch_rms", "fastnorm_rms"):
            cases.append((k, (4096, n), torch.bfloat16, False))
    if world > 1:  # the host cost of one small collective, as SyncBatchNorm issues them
        packed = torch.randn(513, device=dev)
        out = packed.new_empty(world, 513)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        for name, fn in (("all_gather 513 fp32", lambda: gather(out, packed)),
                         ("all_reduce 512 fp32", lambda: dist.all_reduce(packed[:512]))):
            times = []
            for _ in range(10):
                _barrier()
                t0 = time.perf_counter()
                for _ in range(20):
                    fn()
                times.append((time.perf_counter() - t0) / 20 * 1e6)
            if rank0:
                print(f"host µs per call, {name}: {statistics.median(times):.1f}")
    rows = []
    for kind, shape, dtype, cl in cases:
        c = shape[1] if "bn" in kind or "sync" in kind else shape[-1]
        m = LAYERS[kind](c, device=dev).train()
        if "bn" not in kind and "sync" not in kind:  # torch's LayerNorm/RMSNorm need parameters in x's dtype
            m = m.to(dtype)
        fmt = torch.channels_last if cl else torch.contiguous_format
        x = torch.randn(shape, device=dev).to(dtype).contiguous(memory_format=fmt).requires_grad_(True)
        dy = torch.randn(shape, device=dev).to(dtype).contiguous(memory_format=fmt)
        for _ in range(5):
            m(x).backward(dy)
        f, b, s = host_times(m, x, dy, args.iters)
        nk, names = kernel_count(m, x, dy)
        rows.append((kind, "x".join(map(str, shape)) + (" cl" if cl else ""), f, b, s, nk))
        if rank0 and kind.startswith("fastnorm"):
            print(f"{kind} {shape} cl={cl}: GPU ops per step (name, time): {names}")
        if kind == "fastnorm_sync" and shape == (16, 256, 56, 56) and not cl:
            parts = sync_breakdown(m, x, dy, args.iters)
            if rank0:
                print(f"\nfastnorm SyncBatchNorm {shape} bf16, host µs per step by stage (world {world}):")
                for label, us, calls in parts:
                    print(f"| {label:48} | {us:7.1f} | calls/step {calls:.1f}")
        if kind in args.profile.split(",") and shape in ((16, 256, 56, 56), (4096, 256)) and not cl:
            text = hot_functions(m, x, dy, 200, args.top)
            if rank0:
                print(f"\n=== cProfile {kind} {shape} (200 steps) ===\n{text}")
    if rank0:
        print(f"\nhost µs per call, median of {args.iters}, world {world}, {torch.cuda.get_device_name()}")
        print(f"| {'impl':14} | {'shape':22} | fwd µs | bwd µs | step µs | GPU ops |")
        for kind, shp, f, b, s, nk in rows:
            print(f"| {kind:14} | {shp:22} | {f:6.1f} | {b:6.1f} | {s:7.1f} | {nk:7d} |")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
