"""What the suites' timer itself costs a small call: copy and norm figures at the suite's small sizes, three ways.

The suites time each call with ``triton.testing.do_bench``: a 256 MiB buffer is *zeroed* before every timed call
(the L2 flush) and CUDA events bracket the call. At 49152 × 128 bf16 the forward moves 25 MB, 6 µs at copy speed,
so anything fixed per call shows. This script times, per row length N (x of shape (rows, N), bf16):

* ``copy``: ``y.copy_(x)`` — the forward's bytes (x read, y written) moved by torch's copy kernel;
* ``add``: ``torch.add(x, dy, out=dx)`` — the backward's bytes (x and dy read, dx written);
* fastnorm's LayerNorm and RMSNorm forward (no grad) and backward: through ``torch.autograd.grad`` as the suite
  times it, and the op's backward called directly (no autograd);

each under three timers: ``zf`` the suite's (zeroing flush), ``rf`` the same with a *reading* flush (a sum over the
256 MiB, which leaves L2 full of clean lines), and ``graph`` (K calls on K distinct input buffers, > 4× the L2
together, captured in one CUDA graph and replayed back to back after a reading flush; time / K: GPU time with no
host time and no flush). Figures are % of the 1 GiB copy bandwidth on the fewest bytes (the suites' count), plus
the host µs of one call (median of back-to-back calls, as the suites' ``host_ms``).

    PYTHONPATH=src python3 benchmarks/scripts/timing_floor.py [--ns 32,128,256,512,1024,4096] [--rows 49152]

CUDA only. Prints a table last.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

import fastnorm
from fastnorm.bench.common import Timer, copy_bandwidth, layer_norm_bytes, rms_norm_bytes
from fastnorm.ops import layer_norm as OL

sys.path.insert(0, str(Path(__file__).parent))
from tune_batchnorm import graphed  # noqa: E402

FLUSH_BYTES = 256 << 20


class ReadFlushTimer:
    """do_bench's loop with a reading flush: median of CUDA-event times of ``fn`` after ``sum`` of 256 MiB."""

    def __init__(self, reps: int = 200):
        self.buf = torch.ones(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        self.out = torch.empty((), dtype=torch.int64, device="cuda")
        self.reps = reps

    def flush(self) -> None:
        torch.sum(self.buf, dim=0, out=self.out)

    def __call__(self, fn) -> float:
        for _ in range(5):
            fn()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(self.reps)]
        torch.cuda.synchronize()
        for start, end in ev:
            self.flush()
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in ev)


def graph_ms(make_call, k: int, flush: ReadFlushTimer) -> float:
    """GPU ms per call of ``make_call(i)()`` over K distinct buffers: the K calls captured in one CUDA graph
    (``tune_batchnorm.graphed``), its replays timed by the reading-flush timer."""
    calls = [make_call(i) for i in range(k)]
    return flush(graphed(lambda: [c() for c in calls])) / k


def measure(n: int, m: int, copy: float, l2: int, zf: Timer, rf: ReadFlushTimer) -> list[tuple]:
    """The table's rows of one row length N (x of shape (m, N), bf16)."""
    rows = []
    dev, dt = torch.device("cuda"), torch.bfloat16
    k = max(2, -(-4 * l2 // (m * n * 2)))  # K buffers: x alone > 4 L2s over the graph
    xs = [torch.randn(m, n, device=dev, dtype=dt) for _ in range(k)]
    dys = [torch.randn(m, n, device=dev, dtype=dt) for _ in range(k)]
    outs = [torch.empty_like(xs[0]) for _ in range(k)]
    w = torch.randn(n, device=dev, dtype=dt)
    b = torch.randn(n, device=dev, dtype=dt)
    b_fwd = layer_norm_bytes("fwd", m, n, 2, 2)
    b_bwd = layer_norm_bytes("bwd", m, n, 2, 2)
    r_fwd = rms_norm_bytes("fwd", m, n, 2, 2)
    r_bwd = rms_norm_bytes("bwd", m, n, 2, 2)
    saved = {}
    for is_rms in (False, True):  # the saved statistics of one forward per buffer, for the direct backward
        with torch.no_grad():
            saved[is_rms] = [OL._forward(x, w, None if is_rms else b, None, 1, 1e-5, 0.0, is_rms, None, True,
                                         False) for x in xs]

    def fwd(i, is_rms):
        if is_rms:
            return lambda: fastnorm.rms_norm(xs[i], (n,), w, eps=1e-5)
        return lambda: fastnorm.layer_norm(xs[i], (n,), w, b, eps=1e-5)

    def direct_bwd(i, is_rms):
        _, _, mean, rstd = saved[is_rms][i]
        return lambda: OL._backward(dys[i], None, xs[i], w, mean, rstd, 1, 1e-5, 0.0, is_rms,
                                    None if is_rms else b.dtype, dt, None, False)

    xg = xs[0].clone().requires_grad_(True)
    wg, bg = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
    y_ln = fastnorm.layer_norm(xg, (n,), wg, bg, eps=1e-5)
    y_rms = fastnorm.rms_norm(xg, (n,), wg, eps=1e-5)
    cases = [
        ("copy", b_fwd, lambda i: (lambda: outs[i].copy_(xs[i]))),
        ("LN fwd", b_fwd, lambda i: fwd(i, False)),
        ("RMS fwd", r_fwd, lambda i: fwd(i, True)),
        ("add", b_bwd, lambda i: (lambda: torch.add(xs[i], dys[i], out=outs[i]))),
        ("LN bwd direct", b_bwd, lambda i: direct_bwd(i, False)),
        ("RMS bwd direct", r_bwd, lambda i: direct_bwd(i, True)),
    ]
    with torch.no_grad():
        for name, nbytes, make in cases:
            pct = [nbytes / (t * 1e-3) / 1e9 / copy * 100 for t in (zf(make(0)), rf(make(0)),
                                                                   graph_ms(make, k, rf))]
            rows.append((n, name, *pct, zf.host_ms(make(0)) * 1e3))
    for name, nbytes, y, ins in (("LN bwd autograd", b_bwd, y_ln, (xg, wg, bg)),
                                 ("RMS bwd autograd", r_bwd, y_rms, (xg, wg))):
        def step(y=y, ins=ins):
            return torch.autograd.grad(y, ins, dys[0], retain_graph=True)
        pct = [nbytes / (t * 1e-3) / 1e9 / copy * 100 for t in (zf(step), rf(step))]
        rows.append((n, name, *pct, float("nan"), zf.host_ms(step) * 1e3))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="32,128,256,512,1024,4096")
    ap.add_argument("--rows", type=int, default=49152)
    args = ap.parse_args()
    dev = torch.device("cuda")
    zf, rf = Timer(dev), ReadFlushTimer()
    copy = copy_bandwidth(dev, zf)["gbps"]
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    print(f"device {torch.cuda.get_device_name()}, copy {copy:.0f} GB/s, L2 {l2 >> 20} MiB, torch {torch.__version__}")
    rows = []
    for n in (int(v) for v in args.ns.split(",")):
        rows += measure(n, args.rows, copy, l2, zf, rf)
        torch.cuda.empty_cache()
    print("\n% of copy on the fewest bytes (zf: the suites' zeroing flush; rf: reading flush; graph: GPU time alone)")
    print(f"| {'N':>6} | {'case':18} | {'zf':>6} | {'rf':>6} | {'graph':>6} | {'host µs':>8} |")
    for n, name, a, c, g, h in rows:
        print(f"| {n:6d} | {name:18} | {a:6.1f} | {c:6.1f} | {g:6.1f} | {h:8.1f} |")


if __name__ == "__main__":
    main()
