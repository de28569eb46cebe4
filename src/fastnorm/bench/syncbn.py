"""SyncBatchNorm forward+backward step per GPU vs torch: ``torchrun ... -m fastnorm.bench syncbn``.

Run from the repository root, on 2 and on 4 GPUs of one host::

    PYTHONPATH=src torchrun --standalone --nproc_per_node=2 -m fastnorm.bench syncbn --out benchmarks/results
    PYTHONPATH=src torchrun --standalone --nproc_per_node=4 -m fastnorm.bench syncbn --out benchmarks/results

What is measured (BENCHMARKS.md's distributed protocol): one training step of one layer — ``y = m(x)`` and
``y.backward(dy)`` — for fastnorm's ``SyncBatchNorm`` (as it runs by default: symmetric-memory exchanges on one
host with peer access; and, as ``fastnorm_sync_collective``, with ``FASTNORM_SYNCBN_EXCHANGE=collective``:
torch.distributed's NCCL collectives), ``torch.nn.SyncBatchNorm``, and the local (unsynchronized)
``torch.nn.BatchNorm2d`` and ``fastnorm.nn.BatchNorm2d``, at per-GPU shapes from (8,64,128,128) to
(16,2048,7,7), NCHW and channels_last, fp32 and bf16 input (parameters fp32). Every rank runs the same fixed
number of iterations (``--warmup``, ``--iters``; nothing picks its own count, so the collectives always match);
the implementations are interleaved step by step on the same inputs; before each step the ranks meet at a
barrier and the device is idle, and each step is timed alone with CUDA events around it and a synchronize after
— so the time includes the host's launch work, which at these sizes is most of a step. A step's time is the
median over the iterations on each rank, then the maximum over the ranks (the slowest rank sets the pace).

Synchronization overhead = SyncBN step − local BatchNorm step of the same library (fastnorm − fastnorm,
torch − torch); the target is fastnorm's overhead at most a quarter of torch's at every shape.

Also a ResNet-50-sized stack: the 53 BatchNorm layers of ResNet-50 at 8 images of 224×224 per GPU (each layer
with its own input of that layer's channels and spatial size), forward of all, then backward of all, per step —
eager for every implementation, and CUDA-graph captured and replayed for fastnorm (sync and local).

Writes ``syncbn_<R>gpu.json`` and, when matplotlib is importable, ``syncbn_<R>gpu.png`` (overhead per shape)
into ``--out``; rank 0 prints the tables. ``--device cpu`` runs the same harness over gloo on CPU tensors with
wall-clock timing, to test the harness only (its numbers are not speed figures).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

SHAPES = ((8, 64, 128, 128), (16, 256, 56, 56), (16, 512, 28, 28), (16, 1024, 14, 14), (16, 2048, 7, 7))
LAYOUTS = ("nchw", "channels_last")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
IMPLS = ("fastnorm_sync", "torch_sync", "fastnorm_local", "torch_local", "fastnorm_sync_collective")
TARGET_RATIO = 0.25


def resnet50_bn_layers(batch: int = 8, image: int = 224) -> list[tuple[int, int, int, int]]:
    """(N, C, H, W) of the 53 BatchNorm layers of torchvision's ResNet-50 (stride in the 3x3 conv), in order."""
    s = image // 2
    layers = [(batch, 64, s, s)]  # stem, after the 7x7/2 conv
    s //= 2  # max pool
    for stage, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        out = width * 4
        for b in range(blocks):
            s_in = s
            s_out = s // 2 if (b == 0 and stage > 0) else s
            layers += [(batch, width, s_in, s_in), (batch, width, s_out, s_out), (batch, out, s_out, s_out)]
            if b == 0:
                layers.append((batch, out, s_out, s_out))  # downsample branch
            s = s_out
    return layers


# ------------------------------------------------------------------------------------------- harness


class Clock:
    """Times one call: CUDA events around it and a synchronize after (wall clock on CPU), in ms."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def __call__(self, fn) -> float:
        if self.cuda:
            self.start.record()
            fn()
            self.end.record()
            torch.cuda.synchronize()
            return float(self.start.elapsed_time(self.end))
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3


def _settle(device: torch.device) -> None:
    """Device idle and every rank at the same point before a timed step."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    dist.barrier()
    if device.type == "cuda":
        torch.cuda.synchronize()


def _make_layer(impl: str, c: int, device: torch.device):
    import fastnorm

    if impl in ("fastnorm_sync", "fastnorm_sync_collective"):
        return fastnorm.nn.SyncBatchNorm(c, device=device)
    if impl == "torch_sync":
        if device.type != "cuda":
            raise RuntimeError("torch.nn.SyncBatchNorm needs CUDA tensors")
        return torch.nn.SyncBatchNorm(c, device=device)
    if impl == "fastnorm_local":
        if not hasattr(fastnorm.nn, "BatchNorm2d"):
            raise RuntimeError("fastnorm.nn.BatchNorm2d is not in this build")
        return fastnorm.nn.BatchNorm2d(c, device=device)
    if impl == "torch_local":
        return torch.nn.BatchNorm2d(c, device=device)
    raise ValueError(f"unknown implementation {impl!r}")


def _reduce_max(values: list[float], device: torch.device) -> list[float]:
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


class Case:
    """One implementation at one configuration: its layers, inputs, and a zero-argument training step."""

    def __init__(self, impl: str, shapes, dtype, channels_last: bool, device: torch.device, seed: int):
        self.impl = impl
        self.error: str | None = None
        self.times: list[float] = []
        try:
            self.layers = [_make_layer(impl, s[1], device).train() for s in shapes]
        except Exception as exc:  # not available here: recorded, every rank skips it alike
            self.error = f"{type(exc).__name__}: {exc}"
            return
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        g = torch.Generator(device=device).manual_seed(seed)
        self.xs = [(torch.randn(s, device=device, generator=g) * 2 + 1).to(dtype).contiguous(memory_format=fmt)
                   .requires_grad_(True) for s in shapes]
        self.dys = [torch.randn(s, device=device, generator=g).to(dtype).contiguous(memory_format=fmt)
                    for s in shapes]

    def clear_grads(self) -> None:
        for x in self.xs:
            x.grad = None
        for m in self.layers:
            m.zero_grad(set_to_none=True)

    def step(self) -> None:
        from .._symm_exchange import exchange_mode

        collective = self.impl == "fastnorm_sync_collective"
        with exchange_mode("collective") if collective else contextlib.nullcontext():
            ys = [m(x) for m, x in zip(self.layers, self.xs, strict=True)]
            torch.autograd.backward(ys, self.dys)


class GraphedCase(Case):
    """The same step captured once in a CUDA graph; a step is one replay."""

    def __init__(self, impl, shapes, dtype, channels_last, device, seed, warmup: int = 3):
        super().__init__(impl, shapes, dtype, channels_last, device, seed)
        self.impl = impl + "_graph"
        if self.error:
            return
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(warmup):
                    self.clear_grads()
                    Case.step(self)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            self.clear_grads()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
                Case.step(self)
            torch.cuda.synchronize()
        except Exception as exc:
            self.error = f"capture failed: {type(exc).__name__}: {exc}"

    def clear_grads(self) -> None:
        if not hasattr(self, "graph"):
            super().clear_grads()

    def step(self) -> None:
        self.graph.replay()


def _measure(cases: list[Case], device: torch.device, warmup: int, iters: int) -> None:
    """Interleaved, fixed counts: every rank runs warmup + iters rounds of every case (errors are global)."""
    clock = Clock(device)
    errors = _agree_errors([c.error for c in cases], device)
    for c, e in zip(cases, errors, strict=True):
        c.error = e
    live = [c for c in cases if c.error is None]
    for it in range(warmup + iters):
        for c in live:
            c.clear_grads()
            _settle(device)
            ms = clock(c.step)
            if it >= warmup:
                c.times.append(ms)


def _agree_errors(errors: list[str | None], device: torch.device) -> list[str | None]:
    """A case that failed to build on any rank is skipped on all (otherwise the collectives would mismatch)."""
    flags = _reduce_max([1.0 if e else 0.0 for e in errors], device)
    out = []
    for e, f in zip(errors, flags, strict=True):
        out.append(e or ("failed on another rank" if f else None))
    return out


def _finish(cases: list[Case], device: torch.device, **fields) -> list[dict]:
    medians = [statistics.median(c.times) if c.times else float("nan") for c in cases]
    worst = _reduce_max([m if m == m else -1.0 for m in medians], device)
    recs = []
    for c, mine, ms in zip(cases, medians, worst, strict=True):
        rec = dict(fields, impl=c.impl)
        if c.error is not None or ms < 0:
            rec.update(status="error", error=c.error or "no time")
        else:
            rec.update(status="ok", ms=ms, ms_this_rank=mine, ms_min=min(c.times), iters=len(c.times))
        recs.append(rec)
    return recs


# -------------------------------------------------------------------------------------------- suites


def run(args) -> dict:
    """Measure everything ``args`` (from ``parse_args``) asks for, in an initialized process group; returns the
    JSON document (on every rank; ``main`` writes it and prints the tables on rank 0)."""
    from .common import environment

    device = getattr(args, "device_obj", None) or (
        torch.device("cuda", torch.cuda.current_device()) if args.device == "cuda" else torch.device("cpu"))
    world = dist.get_world_size()
    shapes = [tuple(s) for s in args.shapes]
    layer_recs: list[dict] = []
    for shape in shapes:
        for layout in args.layouts:
            for dname in args.dtypes:
                t0 = time.perf_counter()
                cl = layout == "channels_last"
                cases = [Case(impl, [shape], DTYPES[dname], cl, device, seed=1) for impl in args.impls]
                if device.type == "cuda":
                    cases += [GraphedCase(impl, [shape], DTYPES[dname], cl, device, seed=1)
                              for impl in ("fastnorm_sync", "fastnorm_local") if impl in args.impls]
                _measure(cases, device, args.warmup, args.iters)
                layer_recs += _finish(cases, device, shape=list(shape), layout=layout, dtype=dname)
                _progress(f"{'x'.join(map(str, shape))} {layout} {dname}", t0)
                del cases
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    stack_recs: list[dict] = []
    if not args.no_stack:
        stack = resnet50_bn_layers(args.stack_batch)
        for layout, dname in args.stack_configs:
            t0 = time.perf_counter()
            cl = layout == "channels_last"
            cases = [Case(impl, stack, DTYPES[dname], cl, device, seed=2) for impl in args.impls]
            if device.type == "cuda":
                cases += [GraphedCase(impl, stack, DTYPES[dname], cl, device, seed=2)
                          for impl in ("fastnorm_sync", "fastnorm_local") if impl in args.impls]
            _measure(cases, device, args.stack_warmup, args.stack_iters)
            stack_recs += _finish(cases, device, layers=len(stack), batch=args.stack_batch, layout=layout,
                                  dtype=dname)
            _progress(f"ResNet-50 stack {layout} {dname}", t0)
            del cases
            if device.type == "cuda":
                torch.cuda.empty_cache()
    env = environment(device)
    from .. import _symm_exchange

    symm = device.type == "cuda" and _symm_exchange.uses_symmetric_memory(dist.group.WORLD, device)
    env.update(world_size=world, backend=dist.get_backend(),
               exchange="symmetric memory" if symm else "torch.distributed collectives",
               nccl=".".join(map(str, torch.cuda.nccl.version())) if device.type == "cuda" else None)
    return {"suite": "syncbn", "env": env, "protocol": __doc__.split("\n\n")[2].strip(), "warmup": args.warmup,
            "iters": args.iters, "stack_warmup": args.stack_warmup, "stack_iters": args.stack_iters,
            "target_ratio": TARGET_RATIO, "layers": layer_recs, "stack": stack_recs,
            "summary": summarize(layer_recs, stack_recs)}


def _progress(what: str, t0: float) -> None:
    """One line on rank 0's stderr as each configuration is done (the tables come at the end; a run cut short by a
    time limit still shows how far it got and what each part cost: set-up, first-call compiles, graph captures
    and the timed steps)."""
    if dist.get_rank() == 0:
        print(f"syncbn: {what} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def _by(recs, *keys):
    """Records grouped by the values of ``keys`` (first-seen order), then by implementation."""
    out: dict[tuple, dict[str, dict]] = {}
    for r in recs:
        key = tuple(tuple(r[k]) if isinstance(r[k], list) else r[k] for k in keys)
        out.setdefault(key, {})[r["impl"]] = r
    return out


def _ms(recs: dict, impl: str) -> float | None:
    r = recs.get(impl)
    return r["ms"] if r and r["status"] == "ok" else None


def _overheads(recs: dict, sync: str, local: str, tsync: str = "torch_sync", tlocal: str = "torch_local"):
    fs, fl, ts, tl = _ms(recs, sync), _ms(recs, local), _ms(recs, tsync), _ms(recs, tlocal)
    f_ovh = fs - fl if fs is not None and fl is not None else None
    t_ovh = ts - tl if ts is not None and tl is not None else None
    ratio = f_ovh / t_ovh if f_ovh is not None and t_ovh and t_ovh > 0 else None
    return fs, fl, f_ovh, ts, tl, t_ovh, ratio


def summarize(layer_recs: list[dict], stack_recs: list[dict]) -> dict:
    rows = []
    for key, recs in _by(layer_recs, "shape", "layout", "dtype").items():
        fs, fl, f_ovh, ts, tl, t_ovh, ratio = _overheads(recs, "fastnorm_sync", "fastnorm_local")
        gs, gl, g_ovh, _, _, _, g_ratio = _overheads(recs, "fastnorm_sync_graph", "fastnorm_local_graph")
        cs, _, c_ovh, _, _, _, c_ratio = _overheads(recs, "fastnorm_sync_collective", "fastnorm_local")
        rows.append(dict(shape=list(key[0]), layout=key[1], dtype=key[2], fastnorm_sync=fs, fastnorm_local=fl,
                         fastnorm_overhead=f_ovh, torch_sync=ts, torch_local=tl, torch_overhead=t_ovh, ratio=ratio,
                         meets_target=None if ratio is None else ratio <= TARGET_RATIO,
                         fastnorm_sync_graph=gs, fastnorm_local_graph=gl, fastnorm_graph_overhead=g_ovh,
                         graph_ratio=g_ratio, graph_meets_target=None if g_ratio is None else g_ratio <= TARGET_RATIO,
                         fastnorm_sync_collective=cs, collective_overhead=c_ovh, collective_ratio=c_ratio))
    stack_rows = []
    for key, recs in _by(stack_recs, "layout", "dtype").items():
        row = dict(layout=key[0], dtype=key[1], **{impl: _ms(recs, impl) for impl in recs})
        for sync, local in (("fastnorm_sync", "fastnorm_local"), ("fastnorm_sync_graph", "fastnorm_local_graph"),
                            ("fastnorm_sync_collective", "fastnorm_local")):
            _, _, f_ovh, _, _, t_ovh, ratio = _overheads(recs, sync, local)
            row[f"{sync}_overhead"] = f_ovh
            row[f"{sync}_ratio_to_torch"] = ratio
            row["torch_sync_overhead"] = t_ovh
        stack_rows.append(row)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    g_ratios = [r["graph_ratio"] for r in rows if r["graph_ratio"] is not None]
    return {"layers": rows, "stack": stack_rows, "worst_ratio": max(ratios) if ratios else None,
            "all_meet_target": bool(ratios) and all(r <= TARGET_RATIO for r in ratios) and len(ratios) == len(rows),
            "worst_graph_ratio": max(g_ratios) if g_ratios else None,
            "all_graph_meet_target": bool(g_ratios) and all(r <= TARGET_RATIO for r in g_ratios)
            and len(g_ratios) == len(rows)}


def _f(v, digits=3):
    return "–" if v is None else f"{v:.{digits}f}"


def tables(doc: dict) -> str:
    from .common import markdown_table

    env = doc["env"]
    nccl = f" (NCCL {env['nccl']})" if env.get("nccl") else ""
    head = (f"SyncBatchNorm fwd+bwd step per GPU: {env['world_size']} × {env.get('device_name')}, "
            f"torch {env['torch']}, triton {env['triton']}, backend {env['backend']}{nccl}, "
            f"{doc['iters']} timed steps after {doc['warmup']}; ms = median per rank, max over ranks; "
            f"fastnorm sync exchanges through {env.get('exchange', 'torch.distributed collectives')}, "
            "fastnorm sync collective through torch.distributed's NCCL collectives")
    s = doc["summary"]
    rows = [("×".join(map(str, r["shape"])), r["layout"],
             r["dtype"], _f(r["torch_local"]), _f(r["torch_sync"]), _f(r["torch_overhead"]), _f(r["fastnorm_local"]),
             _f(r["fastnorm_sync"]), _f(r["fastnorm_overhead"]), _f(r["ratio"], 2),
             "–" if r["meets_target"] is None else ("yes" if r["meets_target"] else "NO"),
             _f(r.get("fastnorm_local_graph")), _f(r.get("fastnorm_sync_graph")), _f(r.get("fastnorm_graph_overhead")),
             _f(r.get("graph_ratio"), 2), _f(r.get("fastnorm_sync_collective")), _f(r.get("collective_ratio"), 2))
            for r in s["layers"]]
    out = [head, "", "Per layer (ms; graph = fastnorm's step captured in a CUDA graph and replayed, which torch's "
                     "SyncBatchNorm cannot be: it reads the gathered counts back to the host):", markdown_table(
        ("shape", "layout", "dtype", "torch local", "torch sync", "torch overhead", "fastnorm local", "fastnorm sync",
         "fastnorm overhead", "ratio", f"≤ {TARGET_RATIO:g}", "fastnorm local graph", "fastnorm sync graph",
         "fastnorm graph overhead", "graph ratio", "fastnorm sync collective", "collective ratio"), rows)]
    if s["stack"]:
        impls = ("torch_local", "torch_sync", "fastnorm_local", "fastnorm_sync", "fastnorm_local_graph",
                 "fastnorm_sync_graph", "fastnorm_sync_collective")
        srows = [(r["layout"], r["dtype"], *[_f(r.get(i), 2) for i in impls], _f(r.get("torch_sync_overhead"), 2),
                  _f(r.get("fastnorm_sync_overhead"), 2), _f(r.get("fastnorm_sync_graph_overhead"), 2),
                  _f(r.get("fastnorm_sync_collective_overhead"), 2))
                 for r in s["stack"]]
        batch = doc["stack"][0]["batch"] if doc["stack"] else "?"
        title = f"ResNet-50 BatchNorm stack (53 layers, batch {batch}/GPU, 224²), ms per fwd+bwd step:"
        out += ["", title, markdown_table(
            ("layout", "dtype", *impls, "torch ovh", "fastnorm ovh", "fastnorm graph ovh", "fastnorm collective ovh"),
            srows)]
    errors = sorted({f"{r['impl']}: {r['error']}" for r in doc["layers"] + doc["stack"] if r["status"] != "ok"})
    out += [f"- not measured: {e}" for e in errors]
    worst = s["worst_ratio"]
    out += ["", f"worst overhead ratio fastnorm/torch, eager: {_f(worst, 3)} (target ≤ {TARGET_RATIO:g}): "
            + ("MET at every shape" if s["all_meet_target"] else "NOT met everywhere")]
    if s.get("worst_graph_ratio") is not None:
        out += [f"worst overhead ratio, fastnorm CUDA graph / torch eager: {_f(s['worst_graph_ratio'], 3)}: "
                + ("MET at every shape" if s["all_graph_meet_target"] else "NOT met everywhere")]
    return "\n".join(out)


def plot(doc: dict, path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = doc["summary"]["layers"]
    if not rows:
        return None
    labels = ["×".join(map(str, r["shape"])) + f"\n{r['layout']} {r['dtype']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(rows)), 4.5))
    xs = range(len(rows))
    tv = [1e3 * (r["torch_overhead"] or 0) for r in rows]
    fv = [1e3 * (r["fastnorm_overhead"] or 0) for r in rows]
    ax.bar([x - 0.2 for x in xs], tv, width=0.4, label="torch.nn.SyncBatchNorm − torch BatchNorm2d", color="#1f77b4")
    ax.bar([x + 0.2 for x in xs], fv, width=0.4, label="fastnorm SyncBatchNorm − fastnorm BatchNorm2d",
           color="#d62728")
    ax.plot([x + 0.2 for x in xs], [TARGET_RATIO * t for t in tv], "k_", markersize=14, label="target: ¼ of torch's")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=6, rotation=60, ha="right")
    ax.set_ylabel("synchronization overhead per layer step (µs)")
    env = doc["env"]
    ax.set_title(f"SyncBatchNorm overhead, {env['world_size']} × {env.get('device_name')}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    from .common import save_figure

    return save_figure(fig, path)


# ------------------------------------------------------------------------------------------------ CLI


def _shape(text: str) -> tuple[int, int, int, int]:
    parts = text.lower().split("x")
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"a shape is NxCxHxW with positive ints, got {text!r}")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]


def parse_args(argv: list[str] | None):
    p = argparse.ArgumentParser(prog="torchrun --nproc_per_node=R -m fastnorm.bench syncbn",
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="directory for JSON and PNG")
    p.add_argument("--shapes", type=lambda s: [_shape(t) for t in s.split(",") if t],
                   default=[list(s) for s in SHAPES], help="per-GPU NxCxHxW list (default: %(default)s)")
    p.add_argument("--layouts", type=lambda s: s.split(","), default=list(LAYOUTS))
    p.add_argument("--dtypes", type=lambda s: s.split(","), default=list(DTYPES))
    p.add_argument("--impls", type=lambda s: s.split(","), default=list(IMPLS))
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--no-stack", action="store_true", help="skip the ResNet-50 stack")
    p.add_argument("--stack-batch", type=int, default=8)
    p.add_argument("--stack-warmup", type=int, default=3)
    p.add_argument("--stack-iters", type=int, default=15)
    p.add_argument("--stack-configs", type=lambda s: [tuple(t.split(":")) for t in s.split(",")],
                   default=[("channels_last", "bf16"), ("nchw", "fp32")], help="layout:dtype list for the stack")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: gloo on CPU tensors, to test the harness only")
    args = p.parse_args(argv)
    for what, vals, allowed in (("--layouts", args.layouts, LAYOUTS), ("--dtypes", args.dtypes, tuple(DTYPES)),
                                ("--impls", args.impls, IMPLS),
                                ("--stack-configs layout", [c[0] for c in args.stack_configs], LAYOUTS),
                                ("--stack-configs dtype", [c[-1] for c in args.stack_configs], tuple(DTYPES))):
        bad = [v for v in vals if v not in allowed]
        if bad:
            p.error(f"{what}: unknown {bad} (choose from {', '.join(allowed)})")
    if any(len(c) != 2 for c in args.stack_configs):
        p.error("--stack-configs entries are layout:dtype")
    if args.iters < 1 or args.warmup < 0 or args.stack_iters < 1 or args.stack_warmup < 0:
        p.error("--iters/--stack-iters must be >= 1 and the warmups >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "WORLD_SIZE" not in os.environ:
        print("run under torchrun, e.g.: PYTHONPATH=src torchrun --standalone --nproc_per_node=2 "
              "-m fastnorm.bench syncbn", file=sys.stderr)
        return 2
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("no CUDA device (use --device cpu to test the harness over gloo)", file=sys.stderr)
            return 2
        torch.cuda.set_device(local_rank)
        args.device_obj = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", device_id=args.device_obj)
    else:
        args.device_obj = torch.device("cpu")
        dist.init_process_group("gloo")
    try:
        if dist.get_world_size() < 2 and dist.get_rank() == 0:
            print("warning: one rank: SyncBatchNorm does not synchronize, the overheads are not meaningful",
                  file=sys.stderr)
        doc = run(args)
        if dist.get_rank() == 0:
            from .common import write_json

            stem = f"syncbn_{dist.get_world_size()}{'gpu' if args.device == 'cuda' else 'cpu'}"
            path = write_json(doc, args.out / f"{stem}.json")
            png = plot(doc, args.out / f"{stem}.png")
            print(tables(doc))
            print(f"\nwrote {path}" + (f" and {png}" if png else ""), flush=True)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
