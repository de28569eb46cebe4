"""Why a same-dtype ``copy_`` replayed from a CUDA graph reads slower than eager at large sizes (NOTES.md, session 28).

    python benchmarks/scripts/graph_copy.py

Per size: eager and graph-replayed ``y.copy_(x)``, ``torch.add(x, 0, out=y)`` (a kernel in both), as GB/s of
read + written bytes (median of ``do_bench``, L2 flushed), and the kinds of node each graph holds (its debug dump: a
MEMCPY node where the capture made the copy one). Prints one table.
"""

from __future__ import annotations

import os
import re
import tempfile

import torch
from triton.testing import do_bench


def _graphed(fn):
    """(graph, its node kinds as the debug dump names them)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
        g = torch.cuda.CUDAGraph()
        g.enable_debug_mode()
        with torch.cuda.graph(g, stream=stream):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.dot")
        g.debug_dump(path)
        text = open(path).read()
    kinds = sorted(set(re.findall(r"\b(KERNEL|MEMCPY|MEMSET)\b", text)))
    return g, "+".join(kinds) or "?"


def main() -> None:
    print(torch.cuda.get_device_name(), torch.__version__)
    print(f"{'MB (x)':>8} {'copy eager':>10} {'copy graph':>10} {'add eager':>10} {'add graph':>10}  graph nodes")
    for mb in (64, 256, 1024, 1200, 2400, 4800):
        x = torch.randn(mb * (1 << 20) // 2, dtype=torch.bfloat16, device="cuda")
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row, kinds = [], []
        for fn in (lambda x=x, y=y: y.copy_(x), lambda x=x, y=y: torch.add(x, 0, out=y)):
            row.append(nbytes / (do_bench(fn, return_mode="median") * 1e-3) / 1e9)
            g, kind = _graphed(fn)
            row.append(nbytes / (do_bench(g.replay, return_mode="median") * 1e-3) / 1e9)
            kinds.append(kind)
            del g
        print(f"{mb:8d} " + " ".join(f"{r:10.0f}" for r in row) + "  " + " / ".join(kinds))
        x = y = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
