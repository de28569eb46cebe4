"""How fast a per-channel reduction can read a BatchNorm input: torch's reductions beside fastnorm's statistics pass.

The two-launch training forward reads x twice (statistics, then the apply pass that writes y); its 60% target needs
the statistics pass to read at about copy speed. This script times, on x of each shape (bf16, NCHW and
channels-last), reads of x alone — ``x.sum()`` (one total), ``x.sum(dims)`` (per channel), ``torch.var_mean(x,
dims)`` and ``fastnorm.ops.batch_norm.local_stats(x)`` (the statistics pass) — and, for scale, ``y.copy_(x)`` and
fastnorm's evaluation forward (x read, y written). Figures are % of the 1 GiB copy bandwidth on the bytes each moves
(numel·2 for a read, twice that for copy and evaluation), under the suites' timer (``zf``: do_bench, zeroing flush)
and as CUDA-graph replays over two buffers back to back (``graph``: GPU time alone).

    PYTHONPATH=src python3 benchmarks/scripts/bn_read_ceiling.py [--shapes 256x64x56x56,256x256x28x28]

CUDA only. Prints a table last.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import fastnorm
from fastnorm.bench.common import Timer, copy_bandwidth
from fastnorm.ops import batch_norm as OB

sys.path.insert(0, str(Path(__file__).parent))
from timing_floor import ReadFlushTimer, graph_ms  # noqa: E402


def measure(shape: tuple[int, ...], layout: str, copy: float, zf: Timer, rf: ReadFlushTimer) -> list[tuple]:
    """The table's rows of one shape and layout (bf16 x)."""
    dev, c = torch.device("cuda"), shape[1]
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    xs = [torch.randn(shape, device=dev, dtype=torch.bfloat16).contiguous(memory_format=fmt) for _ in range(2)]
    ys = [torch.empty_like(x) for x in xs]
    rm, rv = torch.randn(c, device=dev), torch.rand(c, device=dev) + 0.5
    w, b = torch.randn(c, device=dev), torch.randn(c, device=dev)
    read = xs[0].numel() * 2
    cases = [
        ("x.sum()", read, lambda i: (lambda: xs[i].sum())),
        ("x.sum(dims)", read, lambda i: (lambda: xs[i].sum(dim=(0, 2, 3), dtype=torch.float32))),
        ("var_mean(x, dims)", read, lambda i: (lambda: torch.var_mean(xs[i], dim=(0, 2, 3)))),
        ("fastnorm stats", read, lambda i: (lambda: OB.local_stats(xs[i]))),
        ("copy", 2 * read, lambda i: (lambda: ys[i].copy_(xs[i]))),
        ("fastnorm eval", 2 * read, lambda i: (lambda: fastnorm.batch_norm(xs[i], rm, rv, w, b, False))),
    ]
    rows = []
    with torch.no_grad():
        for name, nbytes, make in cases:
            pct = [nbytes / (t * 1e-3) / 1e9 / copy * 100 for t in (zf(make(0)), graph_ms(make, 2, rf))]
            rows.append((layout, name, *pct))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="256x64x56x56,256x256x28x28,256x1024x14x14,128x64x112x112")
    args = ap.parse_args()
    dev = torch.device("cuda")
    zf, rf = Timer(dev), ReadFlushTimer()
    copy = copy_bandwidth(dev, zf)["gbps"]
    print(f"device {torch.cuda.get_device_name()}, copy {copy:.0f} GB/s, torch {torch.__version__}")
    rows = []
    for spec in args.shapes.split(","):
        for layout in ("nchw", "channels_last"):
            rows += [(spec, *r) for r in measure(tuple(int(v) for v in spec.split("x")), layout, copy, zf, rf)]
            torch.cuda.empty_cache()
    print("\n% of copy on the bytes each moves (zf: the suites' timer; graph: GPU time alone, back to back)")
    print(f"| {'shape':16} | {'layout':13} | {'case':18} | {'zf':>6} | {'graph':>6} |")
    for spec, layout, name, a, g in rows:
        print(f"| {spec:16} | {layout:13} | {name:18} | {a:6.1f} | {g:6.1f} |")


if __name__ == "__main__":
    main()
