"""Why a same-dtype ``copy_`` replayed from a CUDA graph reads slower than eager at large sizes (NOTES.md, session 28).

    python benchmarks/scripts/graph_copy.py

Per size: eager and graph-replayed ``y.copy_(x)``, ``torch.add(x, 0, out=y)`` (a kernel in both), as GB/s of
read + written bytes (median of ``do_bench``, L2 flushed); at 2400 MB, the GPU work each runs eagerly and replayed
(the profiler's names: a memcpy where the capture made the copy one). Prints one table.
"""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench


def _graphed(fn):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    return g


def _device_work(fn) -> str:
    """The names of the GPU activities one call of ``fn`` runs (kernels, memcpys), from the profiler."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    return "+".join(n[:40] for n in names) or "?"


def main() -> None:
    print(torch.cuda.get_device_name(), torch.__version__)
    print(f"{'MB (x)':>8} {'copy eager':>10} {'copy graph':>10} {'add eager':>10} {'add graph':>10}")
    for mb in (64, 256, 1024, 1200, 2400, 4800):
        x = torch.randn(mb * (1 << 20) // 2, dtype=torch.bfloat16, device="cuda")
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row, kinds = [], []
        for fn in (lambda x=x, y=y: y.copy_(x), lambda x=x, y=y: torch.add(x, 0, out=y)):
            row.append(nbytes / (do_bench(fn, return_mode="median") * 1e-3) / 1e9)
            g = _graphed(fn)
            row.append(nbytes / (do_bench(g.replay, return_mode="median") * 1e-3) / 1e9)
            if mb == 2400:
                kinds.append(f"{_device_work(fn)} / {_device_work(g.replay)}")
            del g
        print(f"{mb:8d} " + " ".join(f"{r:10.0f}" for r in row))
        for kind in kinds:
            print("   GPU work, eager / graph:", kind)
        x = y = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
