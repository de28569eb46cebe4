"""LayerNorm and RMSNorm side by side with their peers: ``python -m fastnorm.bench layernorm|rmsnorm``.

Shapes: x of shape (49152, N) for N from 32 to 65536 (OneFlow's sweep: powers of two and 768, 1536, 3072,
5120, 12288; and the tuned tables' keys 24576 and 49152, rows of two pieces and of chunks that are no power of
two) and a few real model shapes; float32 and bfloat16; weight (and bias) in x's dtype.

Implementations, in one process on the same inputs, interleaved per shape: fastnorm, torch eager
(``F.layer_norm`` / ``F.rms_norm``), ``torch.compile`` of the same function (``torch._dynamo.reset()`` before
each shape; by default only at the N the published peer figures use, since compiling dominates the run
time), Liger-Kernel, Apex and QuACK when importable. A peer that is missing or fails is marked, never fatal.

* forward: the training forward — x, γ, β require grad, so every implementation saves its statistics —
  timed as one call.
* backward: one forward, then ``torch.autograd.grad(y, [x, γ, β], dy, retain_graph=True)`` timed; the same
  method for every implementation (dx, dγ, dβ).
* Each implementation's y and dx on the first rows are compared with a float32 torch computation; a
  difference beyond twice the output tolerance of the dtype flags the figure (``!`` in the table).
* The same-bytes reference (``common.REFERENCE``, the last column; leave it out of ``--impls`` to skip it):
  torch's copy kernel moving the same bytes under the same timer — forward ``y.copy_(x)`` (in GPU time
  ``torch.add(x, 0, out=y)``: see ``common.measure_reference``), backward ``torch.add(x, dy, out=dx)`` (the op's
  tensors), counted with the op's bytes — the ceiling at that size, not a
  peer. It computes something else, so it is not checked; with ``--residual`` it is not measured.

Bytes are ``common.layer_norm_bytes`` / ``common.rms_norm_bytes``; figures are GB/s and % of the copy
bandwidth measured at the start of the run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ..reference.tolerances import OUTPUT_TOL
from . import common

OPS = ("layernorm", "rmsnorm")
SWEEP_ROWS = 49152
SWEEP_N = (32, 64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 8192, 12288, 16384, 24576, 32768, 49152,
           65536)
#: (name, rows, N): tokens per step × hidden size of common models.
MODEL_SHAPES = (("BERT-large", 16384, 1024), ("Llama-2-7B", 16384, 4096), ("Llama-2-13B", 16384, 5120),
                ("Llama-2-70B", 8192, 8192))
QUICK_N = (256, 1024, 4096, 16384)
#: torch.compile is measured at these N only (unless --compile all): the columns of the peers' published table.
COMPILE_N = (256, 1024, 4096, 16384)
QUICK_COMPILE_N = (1024,)
IMPLS = ("fastnorm", "torch", "compile", "liger", "apex", "quack")
EPS = {"layernorm": 1e-5, "rmsnorm": 1e-6}
CHECK_ROWS = 64
#: Default time budgets (seconds) of the measurements and of torch.compile's compilations.
BUDGET = {"full": 420.0, "quick": 90.0}
COMPILE_BUDGET = {"full": 150.0, "quick": 40.0}
TITLES = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}


@dataclass(frozen=True)
class Case:
    op: str
    dtype: torch.dtype
    rows: int
    n: int
    group: str  # "sweep", "model" or "custom"
    model: str = ""

    @property
    def label(self) -> str:
        return f"{self.rows}×{self.n}" + (f" {self.model}" if self.model else "")


# --------------------------------------------------------------------------------------- implementations

# Each implementation is ``available(op) -> reason | None`` and ``build(op, n, eps, residual) -> fn`` with
# ``fn(x, w, b, r) -> tuple of outputs`` ((y,) or (y, h) with a residual). ``params(op, w, b)`` gives the
# parameter tensors it is called with (a peer needing another dtype gets its own leaves, made once).


def _torch_fn(op: str, n: int, eps: float, residual: bool) -> Callable:
    def norm(h, w, b):
        if op == "layernorm":
            return F.layer_norm(h, (n,), w, b, eps)
        return F.rms_norm(h, (n,), w, eps)

    if residual:
        def fn(x, w, b, r):
            h = x + r
            return norm(h, w, b), h
    else:
        def fn(x, w, b, r):
            return (norm(x, w, b),)
    return fn


def _unfused_residual(norm: Callable) -> Callable:
    def fn(x, w, b, r):
        if r is None:
            return (norm(x, w, b),)
        h = x + r
        return norm(h, w, b), h
    return fn


class Impl:
    name = ""
    module = ""

    def available(self, op: str) -> str | None:
        return common.try_import(self.module)[1] if self.module else None

    def params(self, op: str, w: torch.Tensor, b: torch.Tensor | None):
        return w, b

    def build(self, op: str, n: int, eps: float, residual: bool) -> Callable:
        raise NotImplementedError


class Fastnorm(Impl):
    name = "fastnorm"

    def available(self, op):
        import fastnorm

        fn_name = "layer_norm" if op == "layernorm" else "rms_norm"
        return None if hasattr(fastnorm, fn_name) else f"fastnorm.{fn_name} is not in this build"

    def build(self, op, n, eps, residual):
        import fastnorm

        if op == "layernorm":
            def fn(x, w, b, r):
                out = fastnorm.layer_norm(x, (n,), w, b, eps, residual=r)
                return out if r is not None else (out,)
        else:
            def fn(x, w, b, r):
                out = fastnorm.rms_norm(x, (n,), w, eps, residual=r)
                return out if r is not None else (out,)
        return fn


class TorchEager(Impl):
    name = "torch"

    def build(self, op, n, eps, residual):
        return _torch_fn(op, n, eps, residual)


class TorchCompile(Impl):
    name = "compile"

    def build(self, op, n, eps, residual):
        torch._dynamo.reset()  # a fresh cache per shape: otherwise the recompile limit falls back to eager
        return common.compile_in_process(_torch_fn(op, n, eps, residual))


class Liger(Impl):
    name = "liger"

    def available(self, op):
        return common.try_import("liger_kernel.ops.layer_norm" if op == "layernorm" else "liger_kernel.ops.rms_norm")[1]

    def build(self, op, n, eps, residual):
        if op == "layernorm":
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction

            return _unfused_residual(lambda h, w, b: LigerLayerNormFunction.apply(h, w, b, eps))
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction

        # in_place=False: Liger would otherwise write dx into dy, changing the timed backward's input.
        return _unfused_residual(lambda h, w, b: LigerRMSNormFunction.apply(h, w, eps, 0.0, "llama", False))


class Apex(Impl):
    name = "apex"
    module = "apex.normalization.fused_layer_norm"

    def build(self, op, n, eps, residual):
        from apex.normalization.fused_layer_norm import fused_layer_norm_affine, fused_rms_norm_affine

        if op == "layernorm":
            return _unfused_residual(lambda h, w, b: fused_layer_norm_affine(h, w, b, (n,), eps))
        return _unfused_residual(lambda h, w, b: fused_rms_norm_affine(h, w, (n,), eps))


class Quack(Impl):
    """QuACK (CuTe DSL): ``quack.rmsnorm.rmsnorm`` (autograd, fused residual); its LayerNorm has forward and
    backward functions only, wrapped here in an autograd.Function, and takes float32 weight and bias."""

    name = "quack"
    module = "quack.rmsnorm"

    def params(self, op, w, b):
        if op == "layernorm":
            return (w.detach().float().requires_grad_(w.requires_grad),
                    None if b is None else b.detach().float().requires_grad_(b.requires_grad))
        return w, b

    def build(self, op, n, eps, residual):
        from quack import rmsnorm as q

        if op == "rmsnorm":
            def fn(x, w, b, r):
                if r is None:
                    return (q.rmsnorm(x, w, eps=eps),)
                return tuple(q.rmsnorm(x, w, residual=r, eps=eps, prenorm=True))
            return fn

        class QuackLayerNorm(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, b):
                y, rstd, mean = q.layernorm_fwd(x, w, b, eps=eps, return_rstd=True, return_mean=True)
                ctx.save_for_backward(x, w, rstd, mean)
                ctx.has_bias = b is not None
                return y

            @staticmethod
            def backward(ctx, dy):
                x, w, rstd, mean = ctx.saved_tensors
                dx, dw, db = q.layernorm_bwd(x, w, dy.contiguous(), rstd, mean, has_bias=ctx.has_bias)
                return dx, dw, db

        return _unfused_residual(lambda h, w, b: QuackLayerNorm.apply(h, w, b))


IMPL_CLASSES = {c.name: c for c in (Fastnorm, TorchEager, TorchCompile, Liger, Apex, Quack)}


# ------------------------------------------------------------------------------------------------ cases


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """``"1024,4096x8192"``: an N alone means (49152, N); ``RxN`` gives the rows too."""
    out = []
    for item in (s.strip().lower().replace("×", "x") for s in text.split(",")):
        if not item:
            continue
        try:
            parts = [int(p) for p in item.split("x")]
        except ValueError:
            raise ValueError(f"--shapes: {item!r} is not N or RxN") from None
        if len(parts) == 1:
            parts = [SWEEP_ROWS, parts[0]]
        if len(parts) != 2 or min(parts) < 1:
            raise ValueError(f"--shapes: {item!r} is not N or RxN with positive sizes")
        out.append((parts[0], parts[1]))
    if not out:
        raise ValueError("--shapes: no shape given")
    return out


def make_cases(op: str, dtypes, quick: bool, shapes: list[tuple[int, int]] | None, models: bool) -> list[Case]:
    cases = []
    for dtype in dtypes:
        if shapes is not None:
            cases += [Case(op, dtype, r, n, "custom") for r, n in shapes]
            continue
        cases += [Case(op, dtype, SWEEP_ROWS, n, "sweep") for n in (QUICK_N if quick else SWEEP_N)]
        if models and not quick:
            cases += [Case(op, dtype, r, n, "model", name) for name, r, n in MODEL_SHAPES]
    return cases


def case_bytes(case: Case, direction: str, residual: bool) -> int:
    s = torch.empty((), dtype=case.dtype).element_size()
    rs = s if residual else 0
    if case.op == "layernorm":
        return common.layer_norm_bytes(direction, case.rows, case.n, s, s, residual_size=rs, residual_out_size=rs)
    return common.rms_norm_bytes(direction, case.rows, case.n, s, s, residual_size=rs, residual_out_size=rs)


# ------------------------------------------------------------------------------------------------- run


def _reference_rows(op, x, w, b, r, dy, dh, eps, k):
    """float32 torch y and dx of the first ``k`` rows (what each implementation is sanity-checked against)."""
    xs = x[:k].detach().float().requires_grad_(True)
    w32 = w.detach().float()
    b32 = None if b is None else b.detach().float()
    h = xs if r is None else (xs + r[:k].float()).to(x.dtype).float()
    y = F.layer_norm(h, (x.shape[-1],), w32, b32, eps) if op == "layernorm" else F.rms_norm(h, (x.shape[-1],),
                                                                                         w32, eps)
    (dx,) = torch.autograd.grad(y, xs, dy[:k].float())
    if dh is not None:
        dx = dx + dh[:k].float()
    return y.detach().to(x.dtype), dx.to(x.dtype)


def run(args: argparse.Namespace) -> dict:
    """Run the suite described by ``args`` (see ``add_arguments``); returns the result document (also written
    as JSON to ``args.out``, with the plots)."""
    op = args.op
    device = torch.device(args.device)
    quick = bool(args.quick)
    mode = "quick" if quick else "full"
    dtypes = common.parse_dtypes(args.dtypes or ("bf16" if quick else "bf16,fp32"))
    directions = common.parse_list(args.ops, ("fwd", "bwd"), "--ops", {"forward": "fwd", "backward": "bwd"})
    impl_names, reference = common.parse_impls(args.impls, IMPLS)
    shapes = parse_shapes(args.shapes) if args.shapes else None
    residual = bool(args.residual)
    eps = EPS[op]
    budget = args.time_budget if args.time_budget is not None else BUDGET[mode]
    compile_budget = args.compile_budget if args.compile_budget is not None else COMPILE_BUDGET[mode]
    compile_n = {"subset": set(QUICK_COMPILE_N if quick else COMPILE_N), "all": None, "none": set()}[args.compile]

    timer = common.Timer(device, args.warmup_ms, args.rep_ms)
    env = common.environment(device)
    copy = common.copy_bandwidth(device, timer, int(args.copy_mib * (1 << 20)))
    print(f"{TITLES[op]}: {env['device_name']} · copy bandwidth {copy['gbps']:.0f} GB/s · {timer.describe()}",
          flush=True)

    impls, unavailable = [], {}
    if args.compile == "none" and "compile" in impl_names:
        impl_names = [n for n in impl_names if n != "compile"]
        unavailable["compile"] = "not measured (--compile none)"
    for name in impl_names:
        impl = IMPL_CLASSES[name]()
        reason = impl.available(op)
        if reason:
            unavailable[name] = reason
            print(f"  {name}: not available ({reason}); skipped", flush=True)
        else:
            impls.append(impl)

    cases = make_cases(op, dtypes, quick, shapes, models=not args.no_models)
    notes = []
    if "compile" in [i.name for i in impls]:
        if compile_n is None:
            notes.append("torch.compile measured at every shape (--compile all).")
        elif compile_n:
            notes.append(f"torch.compile measured only at N in {{{', '.join(map(str, sorted(compile_n)))}}} "
                         f"of the sweep, within a compile budget of {compile_budget:g} s (compilation dominates "
                         "the run time; --compile all measures it everywhere).")
    if residual:
        notes.append("Fused residual: fastnorm (and QuACK's RMSNorm) add x + r inside the op; the other peers run "
                     "h = x + r then the norm.")
    for note in notes:
        print(f"  {note}", flush=True)
    deadline = common.Deadline(budget)
    total = len(cases) * (len(impls) + reference) * len(directions)
    records: list[dict] = []
    compile_spent = 0.0
    with common.progress(total, f"{op}") as bar:
        meter = common.Measurer(timer, copy["gbps"], deadline, bar, graphs=not args.no_graphs)
        for case in cases:
            bar.set_postfix_str(f"{common.SHORT_DTYPE[case.dtype]} {case.label}", refresh=False)
            base = dict(suite=op, op=op, dtype=common.dtype_name(case.dtype), rows=case.rows, n=case.n,
                        group=case.group, model=case.model, label=case.label, residual=residual)
            recs = {(i.name, d): common.record(**base, impl=i.name, direction=d) for i in impls for d in directions}
            refs = {d: common.record(**base, impl=common.REFERENCE, direction=d) for d in directions if reference}
            records += [*recs.values(), *refs.values()]
            reason = meter.blocked() or _memory_reason(case, device, residual)
            if reason:
                for rec in [*recs.values(), *refs.values()]:
                    meter.skip(rec, reason)
                continue
            try:
                inputs = _make_inputs(case, device, residual, seed=args.seed)
            except Exception as exc:  # recorded against every implementation of this case
                for rec in [*recs.values(), *refs.values()]:
                    meter.fail(rec, exc)
                continue
            ref = None
            for impl in impls:
                todo = {d: recs[(impl.name, d)] for d in directions}
                if impl.name == "compile":
                    if compile_n is not None and not (case.group == "sweep" and case.n in compile_n):
                        for rec in todo.values():
                            meter.skip(rec, "torch.compile measured at a subset of N only (compile time)")
                        continue
                    if compile_spent > compile_budget:
                        for rec in todo.values():
                            meter.skip(rec, f"compile budget of {compile_budget:g} s used up (--compile-budget)")
                        continue
                if ref is None:
                    ref = _reference_rows(op, *inputs, eps, min(CHECK_ROWS, case.rows))
                t0 = time.perf_counter()
                _measure(meter, impl, case, inputs, ref, eps, todo, residual)
                if impl.name == "compile":
                    compile_spent += time.perf_counter() - t0
            _measure_reference(meter, case, inputs, refs, residual)
            del inputs, ref
            common.release(device)

    doc = {
        "suite": op, "title": TITLES[op], "mode": mode, "env": env, "copy": copy, "timer": timer.describe(),
        "settings": dict(dtypes=[common.dtype_name(d) for d in dtypes], directions=directions,
                         impls=[i.name for i in impls] + ([common.REFERENCE] if reference else []),
                         residual=residual, eps=eps, sweep_rows=SWEEP_ROWS,
                         compile_n=None if compile_n is None else sorted(compile_n), time_budget_s=budget,
                         compile_budget_s=compile_budget, graphs=not args.no_graphs and device.type == "cuda",
                         reference_captured_forward=common.REFERENCE_CAPTURED_FORWARD if reference else None),
        "unavailable": unavailable, "notes": notes, "elapsed_s": round(deadline.elapsed(), 1),
        "records": records,
    }
    out = Path(args.out)
    doc["plots"] = [] if args.no_plots else plot(doc, out)
    common.write_json(doc, out / f"{op}.json")
    print(markdown(doc, heading_level=2), flush=True)
    return doc


def _memory_reason(case: Case, device: torch.device, residual: bool) -> str | None:
    free = common.free_device_bytes(device)
    if free is None:
        return None
    s = torch.empty((), dtype=case.dtype).element_size()
    # x, dy, y, dx, and as much again for an implementation's temporaries; twice that with a residual.
    need = case.rows * case.n * s * (12 if residual else 7)
    if need > 0.92 * free:
        return f"needs about {need / common.GIB:.1f} GiB, {free / common.GIB:.1f} GiB free"
    return None


def _make_inputs(case: Case, device: torch.device, residual: bool, seed: int):
    g = torch.Generator(device=device).manual_seed(seed)
    kw = dict(device=device, dtype=case.dtype, generator=g)
    x = torch.randn(case.rows, case.n, **kw).requires_grad_(True)
    w = (1.0 + 0.1 * torch.randn(case.n, **kw)).requires_grad_(True)
    b = (0.1 * torch.randn(case.n, **kw)).requires_grad_(True) if case.op == "layernorm" else None
    dy = torch.randn(case.rows, case.n, **kw)
    r = torch.randn(case.rows, case.n, **kw).requires_grad_(True) if residual else None
    dh = torch.randn(case.rows, case.n, **kw) if residual else None
    return x, w, b, r, dy, dh


def _measure(meter: common.Measurer, impl: Impl, case: Case, inputs, ref, eps: float, todo: dict[str, dict],
             residual: bool) -> None:
    """Fill ``todo`` (direction -> record) for one implementation on one case."""
    x, w0, b0, r, dy, dh = inputs
    tol = 2 * OUTPUT_TOL[common.dtype_name(case.dtype)]
    k = ref[0].shape[0]
    outs = grads = None
    try:
        w, b = impl.params(case.op, w0, b0)
        fn = impl.build(case.op, case.n, eps, residual)
        targets = [t for t in (x, w, b, r) if t is not None]
        grad_outs = [dy] if dh is None else [dy, dh]
        t0 = time.perf_counter()
        outs = fn(x, w, b, r)
        err = common.rel_err(outs[0][:k], ref[0])
        if "bwd" in todo:
            grads = torch.autograd.grad(outs, targets, grad_outs, retain_graph=True)
            err = max(err, common.rel_err(grads[0][:k], ref[1]))
            grads = None
        if x.device.type == "cuda":
            torch.cuda.synchronize()
        setup_s = time.perf_counter() - t0
    except Exception as exc:
        for rec in todo.values():
            meter.fail(rec, exc)
        return
    for rec in todo.values():
        rec["max_rel_err_vs_fp32"] = err
        if not err <= tol:
            rec["mismatch"] = err
        if impl.name == "compile":
            rec["compile_s"] = round(setup_s, 2)

    def forward():
        return fn(x, w, b, r)

    def backward():
        """A backward after a forward of its own from leaves of its own (see ``batchnorm._measure``'s ``make``)."""
        leaves = {id(t): t.detach().requires_grad_() for t in targets}
        outs = fn(*(None if t is None else leaves.get(id(t), t) for t in (x, w, b, r)))
        return lambda: torch.autograd.grad(outs, list(leaves.values()), grad_outs, retain_graph=True)
    if "fwd" in todo:
        meter.time(todo["fwd"], case_bytes(case, "fwd", residual), forward, lambda: forward)
    if "bwd" in todo:
        meter.time(todo["bwd"], case_bytes(case, "bwd", residual),
                   lambda: torch.autograd.grad(outs, targets, grad_outs, retain_graph=True), backward)


def _measure_reference(meter: common.Measurer, case: Case, inputs, todo: dict[str, dict], residual: bool) -> None:
    """Fill ``todo`` (direction -> record) with the same-bytes reference on one case (``common.measure_reference``:
    copy forward, add backward, the op's bytes); with a fused residual no single kernel moves the op's tensors."""
    if residual:
        for rec in todo.values():
            meter.skip(rec, "no single-kernel same-bytes reference with a fused residual")
        return
    common.measure_reference(meter, todo, inputs[0], inputs[4], lambda d: case_bytes(case, d, residual),
                             lambda d: d == "fwd")


# ------------------------------------------------------------------------------------ tables and plots


def markdown(doc: dict, heading_level: int = 3) -> str:
    """The suite's tables (one per dtype and direction) as Markdown, with the plots linked."""
    h = "#" * heading_level
    lines = [f"{h} {doc['title']}" + (" (fused residual)" if doc["settings"].get("residual") else ""), ""]
    intro = (f"Copy bandwidth {doc['copy']['gbps']:.0f} GB/s; x of shape (rows, N), weight in x's dtype; cells "
             "are GB/s on the fewest bytes and % of copy; the last column is fastnorm's speed-up over the fastest "
             "peer. Forward = the training forward (inputs require grad, statistics saved); backward = "
             "`torch.autograd.grad` of the parameters and x after one forward, the same for every implementation.")
    if common.REFERENCE in doc["settings"]["impls"]:
        intro += (f" The column \"{common.REFERENCE_TITLE}\" is what torch's copy kernel reaches moving the same bytes "
                  f"under the same timer ({common.reference_calls(doc)}) — the ceiling at this size, not a peer.")
    lines.append(intro)
    for name, reason in doc.get("unavailable", {}).items():
        lines.append(f"- {name}: not available ({reason})")
    lines += [f"- {n}" for n in doc.get("notes", [])]
    lines.append("")
    impls = common.ordered_impls(doc, IMPLS)
    for dtype in doc["settings"]["dtypes"]:
        for direction in doc["settings"]["directions"]:
            recs = [r for r in doc["records"] if r["dtype"] == dtype and r["direction"] == direction]
            if not recs:
                continue
            what = "forward" if direction == "fwd" else "backward (dx, dγ" + (", dβ)" if doc["suite"] == "layernorm"
                                                                               else ")")
            lines += [f"{h}# {doc['title']} {what}, {dtype}", "",
                      common.perf_table(recs, lambda r: r["label"], impls, row_header="rows×N"), ""]
    for plot_name in doc.get("plots", []):
        lines += [f"![{plot_name}]({plot_name})", ""]
    return "\n".join(lines)


def plot(doc: dict, out: Path) -> list[str]:
    """One PNG per dtype: time and GB/s vs N over the (49152, N) sweep (or the custom shapes), forward and
    backward. Returns the file names written in ``out``."""
    names = []
    for dtype in doc["settings"]["dtypes"]:
        panels = []
        for direction in doc["settings"]["directions"]:
            recs = [r for r in doc["records"] if r["dtype"] == dtype and r["direction"] == direction
                    and r["group"] in ("sweep", "custom")]
            if any(r["status"] == "ok" for r in recs):
                panels.append((f"{'forward' if direction == 'fwd' else 'backward'}", recs))
        if not panels:
            continue
        name = f"{doc['suite']}_{dtype}.png"
        rows = {r["rows"] for _, recs in panels for r in recs}
        shape = f"x ({rows.pop()}, N)" if len(rows) == 1 else "x (rows, N)"
        common.plot_sweep(panels, doc["copy"]["gbps"], out / name,
                          f"{doc['title']}, {dtype}, {shape} — {doc['env']['device_name']}")
        names.append(name)
    return names


# ------------------------------------------------------------------------------------------------- CLI


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="few shapes, bfloat16 only (about a minute)")
    p.add_argument("--dtypes", help="comma list of fp32,bf16,fp16 (default bf16,fp32; quick: bf16)")
    p.add_argument("--ops", default="fwd,bwd", help="comma list of fwd,bwd")
    p.add_argument("--impls", help=f"comma list of {','.join(IMPLS)},{common.REFERENCE} (default: all that are "
                   f"importable; {common.REFERENCE} is the same-bytes reference, not a peer)")
    p.add_argument("--shapes", help="custom shapes instead of the sweep: N (rows 49152) or RxN, comma separated")
    p.add_argument("--no-models", action="store_true", help="leave out the model shapes")
    p.add_argument("--residual", action="store_true", help="benchmark the fused residual add (y, h = norm(x + r))")
    p.add_argument("--compile", choices=("subset", "all", "none"), default="subset",
                   help="where torch.compile is measured (default: the peers' published N only)")
    common.add_run_arguments(p)


def main(argv: list[str] | None, op: str) -> int:
    p = argparse.ArgumentParser(prog=f"python -m fastnorm.bench {op}", description=__doc__.split("\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    args.op = op
    return common.run_cli(p, args, run)
