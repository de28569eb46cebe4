"""BatchNorm2d side by side with torch: ``python -m fastnorm.bench batchnorm``.

Shapes (N, C, H, W): the five of ``../shared/BENCHMARKS.md`` and three more (a ResNet stem at 112×112, a
small-batch mid stage, a detection feature map at batch 2); contiguous NCHW and channels_last, each read in
its own layout; bfloat16 input with float32 parameters and running statistics (mixed precision), and float32.

Modes, each on the same inputs for every implementation:

* ``train_fwd``  — training forward: batch statistics, running statistics updated (x, γ, β require grad).
* ``train_bwd``  — one training forward, then ``torch.autograd.grad(y, [x, γ, β], dy, retain_graph=True)``.
* ``eval_fwd``   — inference forward with the running statistics, under ``torch.no_grad()``.
* ``frozen_bwd`` — the frozen backward: dx = dy·γ·invstd, dγ = Σ dy·x̂, dβ = Σ dy with the running statistics.
  fastnorm runs ``batch_norm(..., training=True, use_global_stats=True)``; the torch peer (and torch.compile)
  is ``F.batch_norm(..., training=False)`` differentiated with autograd — eval-mode BatchNorm's backward is
  exactly the frozen backward (torchvision's FrozenBatchNorm2d computes dx the same way, without dγ, dβ).

Implementations: fastnorm, torch eager (cuDNN / native), ``torch.compile`` of the same ``F.batch_norm`` call
(``torch._dynamo.reset()`` per case; by default on the five published shapes only, within a compile budget).
Each implementation's y (forward) or dx (backward) is compared with a float32 torch computation; beyond twice
the output tolerance of the dtype the figure is flagged. Bytes: ``common.batch_norm_bytes``.

The same-bytes reference (``common.REFERENCE``, the last column; leave it out of ``--impls`` to skip it): torch's
copy kernel moving the mode's tensors under the same timer — the forwards ``y.copy_(x)`` (in GPU time
``torch.add(x, 0, out=y)``: see ``common.measure_reference``), the backwards
``torch.add(x, dy, out=dx)`` — counted with the mode's bytes: the ceiling of a single pass at that size, not a peer
(the two-pass training modes read x, or x and dy, once more).
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

PUBLISHED_SHAPES = ((256, 64, 56, 56), (256, 256, 28, 28), (256, 1024, 14, 14), (128, 2048, 7, 7), (8, 256, 128, 128))
#: ResNet-50 at batch 32 on one GPU: 32×2048×7² (layer4) and 32×256×14² (layer3) fit the single-read training forward.
MORE_SHAPES = ((128, 64, 112, 112), (32, 512, 28, 28), (2, 256, 200, 304), (32, 2048, 7, 7), (32, 256, 14, 14))
QUICK_SHAPES = ((256, 64, 56, 56), (128, 2048, 7, 7))
LAYOUTS = ("nchw", "channels_last")
MODES = common.BN_MODES
MODE_TITLES = {"train_fwd": "train fwd", "train_bwd": "train bwd", "eval_fwd": "eval fwd", "frozen_bwd": "frozen bwd"}
IMPLS = ("fastnorm", "torch", "compile")
MOMENTUM, EPS = 0.1, 1e-5
BUDGET = {"full": 480.0, "quick": 100.0}
COMPILE_BUDGET = {"full": 240.0, "quick": 45.0}


@dataclass(frozen=True)
class Case:
    shape: tuple[int, ...]
    layout: str
    dtype: torch.dtype

    @property
    def label(self) -> str:
        return "×".join(map(str, self.shape))

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


# --------------------------------------------------------------------------------------- implementations

# ``functions()`` returns {"train", "eval", "frozen"} -> f(x, running_mean, running_var, weight, bias) -> y.


def _torch_functions() -> dict[str, Callable]:
    def train(x, rm, rv, w, b):
        return F.batch_norm(x, rm, rv, w, b, training=True, momentum=MOMENTUM, eps=EPS)

    def evaluate(x, rm, rv, w, b):
        return F.batch_norm(x, rm, rv, w, b, training=False, momentum=MOMENTUM, eps=EPS)

    return {"train": train, "eval": evaluate, "frozen": evaluate}


class Fastnorm:
    name = "fastnorm"

    @staticmethod
    def available() -> str | None:
        import fastnorm

        return None if hasattr(fastnorm, "batch_norm") else "fastnorm.batch_norm is not in this build"

    @staticmethod
    def functions() -> dict[str, Callable]:
        import fastnorm

        def train(x, rm, rv, w, b):
            return fastnorm.batch_norm(x, rm, rv, w, b, training=True, momentum=MOMENTUM, eps=EPS)

        def evaluate(x, rm, rv, w, b):
            return fastnorm.batch_norm(x, rm, rv, w, b, training=False, momentum=MOMENTUM, eps=EPS)

        def frozen(x, rm, rv, w, b):
            return fastnorm.batch_norm(x, rm, rv, w, b, training=True, momentum=MOMENTUM, eps=EPS,
                                       use_global_stats=True)

        return {"train": train, "eval": evaluate, "frozen": frozen}


class TorchEager:
    name = "torch"

    @staticmethod
    def available() -> str | None:
        return None

    @staticmethod
    def functions() -> dict[str, Callable]:
        return _torch_functions()


class TorchCompile:
    name = "compile"

    @staticmethod
    def available() -> str | None:
        return None

    @staticmethod
    def functions() -> dict[str, Callable]:
        torch._dynamo.reset()  # one fresh cache per case (shape, layout, dtype)
        fns = _torch_functions()
        compiled = {"train": common.compile_in_process(fns["train"]), "eval": common.compile_in_process(fns["eval"])}
        compiled["frozen"] = compiled["eval"]  # the same function, called with grad (dynamo guards on it)
        return compiled


IMPL_CLASSES = {c.name: c for c in (Fastnorm, TorchEager, TorchCompile)}


# ------------------------------------------------------------------------------------------------ cases


def parse_shapes(text: str) -> list[tuple[int, ...]]:
    """``"256x64x56x56,8x256x128x128"`` (N×C×H×W; 2-D N×C and 3-D N×C×L run in NCHW only)."""
    out = []
    for item in (s.strip().lower().replace("×", "x") for s in text.split(",")):
        if not item:
            continue
        try:
            shape = tuple(int(p) for p in item.split("x"))
        except ValueError:
            raise ValueError(f"--shapes: {item!r} is not NxCxHxW") from None
        if len(shape) < 2 or min(shape) < 1:
            raise ValueError(f"--shapes: {item!r} needs at least N and C, all positive")
        out.append(shape)
    if not out:
        raise ValueError("--shapes: no shape given")
    return out


def make_cases(dtypes, layouts, quick: bool, shapes) -> list[Case]:
    if shapes is None:
        shapes = QUICK_SHAPES if quick else PUBLISHED_SHAPES + MORE_SHAPES
    return [Case(tuple(s), layout, d) for d in dtypes for layout in layouts for s in shapes
            if layout == "nchw" or len(s) == 4]


def _memory_format(layout: str):
    return torch.channels_last if layout == "channels_last" else torch.contiguous_format


def _make_inputs(case: Case, device: torch.device, seed: int):
    g = torch.Generator(device=device).manual_seed(seed)
    c = case.shape[1]
    fmt = _memory_format(case.layout)
    x = (0.5 + torch.randn(case.shape, device=device, generator=g)).to(case.dtype).contiguous(memory_format=fmt)
    dy = torch.randn(case.shape, device=device, generator=g).to(case.dtype).contiguous(memory_format=fmt)
    x.requires_grad_(True)
    w = (1.0 + 0.1 * torch.randn(c, device=device, generator=g)).requires_grad_(True)
    b = (0.1 * torch.randn(c, device=device, generator=g)).requires_grad_(True)
    rm = 0.1 * torch.randn(c, device=device, generator=g)
    rv = 1.0 + torch.rand(c, device=device, generator=g)
    return x, dy, w, b, rm, rv


def _references(x, dy, w, b, rm, rv, modes) -> dict[str, torch.Tensor]:
    """float32 torch results each mode is sanity-checked against: y for forwards, dx for backwards."""
    x32 = x.detach().float().requires_grad_(True)
    out = {}
    if "train_fwd" in modes or "train_bwd" in modes:
        y = F.batch_norm(x32, rm.clone(), rv.clone(), w.detach(), b.detach(), training=True, momentum=MOMENTUM,
                         eps=EPS)
        out["train_fwd"] = y.detach().to(x.dtype)
        out["train_bwd"] = torch.autograd.grad(y, x32, dy.float())[0].to(x.dtype)
    if "eval_fwd" in modes or "frozen_bwd" in modes:
        y = F.batch_norm(x32, rm, rv, w.detach(), b.detach(), training=False, eps=EPS)
        out["eval_fwd"] = y.detach().to(x.dtype)
        out["frozen_bwd"] = torch.autograd.grad(y, x32, dy.float())[0].to(x.dtype)
    return out


def case_bytes(case: Case, mode: str) -> int:
    s = torch.empty((), dtype=case.dtype).element_size()
    return common.batch_norm_bytes(mode, case.numel, case.shape[1], s, 4)


def _memory_reason(case: Case, device: torch.device) -> str | None:
    free = common.free_device_bytes(device)
    if free is None:
        return None
    s = torch.empty((), dtype=case.dtype).element_size()
    need = case.numel * (8 * s + 16)  # x, dy, y, dx, temporaries; float32 reference copies
    if need > 0.92 * free:
        return f"needs about {need / common.GIB:.1f} GiB, {free / common.GIB:.1f} GiB free"
    return None


# ------------------------------------------------------------------------------------------------- run


def run(args: argparse.Namespace) -> dict:
    """Run the suite described by ``args`` (see ``add_arguments``); returns the result document (also written to
    ``args.out/batchnorm.json``, with the plots)."""
    device = torch.device(args.device)
    quick = bool(args.quick)
    mode_name = "quick" if quick else "full"
    dtypes = common.parse_dtypes(args.dtypes or ("bf16" if quick else "bf16,fp32"))
    layouts = common.parse_list(args.layouts, LAYOUTS, "--layouts", {"nhwc": "channels_last", "cl": "channels_last"})
    aliases = {k.replace("_", "-"): k for k in MODES}
    modes = common.parse_list(args.ops, MODES, "--ops", aliases) if args.ops else list(MODES)
    impl_names, reference = common.parse_impls(args.impls, IMPLS)
    shapes = parse_shapes(args.shapes) if args.shapes else None
    budget = args.time_budget if args.time_budget is not None else BUDGET[mode_name]
    compile_budget = args.compile_budget if args.compile_budget is not None else COMPILE_BUDGET[mode_name]
    compile_shapes = {"subset": set(QUICK_SHAPES[:1] if quick else PUBLISHED_SHAPES), "all": None,
                      "none": set()}[args.compile]

    timer = common.Timer(device, args.warmup_ms, args.rep_ms)
    env = common.environment(device)
    copy = common.copy_bandwidth(device, timer, int(args.copy_mib * (1 << 20)))
    print(f"BatchNorm: {env['device_name']} · copy bandwidth {copy['gbps']:.0f} GB/s · {timer.describe()}", flush=True)

    impls, unavailable = [], {}
    if args.compile == "none" and "compile" in impl_names:
        impl_names = [n for n in impl_names if n != "compile"]
        unavailable["compile"] = "not measured (--compile none)"
    for name in impl_names:
        reason = IMPL_CLASSES[name].available()
        if reason:
            unavailable[name] = reason
            print(f"  {name}: not available ({reason}); skipped", flush=True)
        else:
            impls.append(IMPL_CLASSES[name])

    cases = make_cases(dtypes, layouts, quick, shapes)
    notes = ["Parameters and running statistics are float32 for every input dtype (mixed precision).",
             "frozen bwd: fastnorm batch_norm(use_global_stats=True); torch and torch.compile: F.batch_norm("
             "training=False) differentiated with autograd (the same dx, dγ, dβ)."]
    if any(i.name == "compile" for i in impls) and compile_shapes is not None and compile_shapes:
        notes.append("torch.compile measured only on the published shapes "
                     f"({', '.join('×'.join(map(str, s)) for s in sorted(compile_shapes))}) within a compile "
                     f"budget of {compile_budget:g} s (compilation dominates the run time; --compile all "
                     "measures it everywhere).")
    for note in notes:
        print(f"  {note}", flush=True)
    deadline = common.Deadline(budget)
    records: list[dict] = []
    compile_spent = 0.0
    with common.progress(len(cases) * (len(impls) + reference) * len(modes), "batchnorm") as bar:
        meter = common.Measurer(timer, copy["gbps"], deadline, bar, graphs=not args.no_graphs)
        for case in cases:
            bar.set_postfix_str(f"{common.SHORT_DTYPE[case.dtype]} {case.layout} {case.label}", refresh=False)
            base = dict(suite="batchnorm", op="batchnorm", dtype=common.dtype_name(case.dtype), param_dtype="float32",
                        shape=list(case.shape), layout=case.layout, label=case.label)
            recs = {(i.name, m): common.record(**base, impl=i.name, mode=m) for i in impls for m in modes}
            same = {m: common.record(**base, impl=common.REFERENCE, mode=m) for m in modes if reference}
            records += [*recs.values(), *same.values()]
            reason = meter.blocked() or _memory_reason(case, device)
            if reason:
                for rec in [*recs.values(), *same.values()]:
                    meter.skip(rec, reason)
                continue
            try:
                inputs = _make_inputs(case, device, args.seed)
                refs = _references(*inputs, modes)
            except Exception as exc:
                for rec in [*recs.values(), *same.values()]:
                    meter.fail(rec, exc)
                continue
            for impl in impls:
                todo = {m: recs[(impl.name, m)] for m in modes}
                if impl.name == "compile":
                    if compile_shapes is not None and case.shape not in compile_shapes:
                        for rec in todo.values():
                            meter.skip(rec, "torch.compile measured on a subset of shapes only (compile time)")
                        continue
                    if compile_spent > compile_budget:
                        for rec in todo.values():
                            meter.skip(rec, f"compile budget of {compile_budget:g} s used up (--compile-budget)")
                        continue
                t0 = time.perf_counter()
                _measure(meter, impl, case, inputs, refs, todo)
                if impl.name == "compile":
                    compile_spent += time.perf_counter() - t0
            common.measure_reference(meter, same, inputs[0], inputs[1], lambda m, case=case: case_bytes(case, m),
                                     lambda m: m.endswith("fwd"))
            del inputs, refs
            common.release(device)

    doc = {
        "suite": "batchnorm", "title": "BatchNorm", "mode": mode_name, "env": env, "copy": copy,
        "timer": timer.describe(),
        "settings": dict(dtypes=[common.dtype_name(d) for d in dtypes], layouts=layouts, modes=modes,
                         impls=[i.name for i in impls] + ([common.REFERENCE] if reference else []),
                         momentum=MOMENTUM, eps=EPS,
                         compile_shapes=None if compile_shapes is None else [list(s) for s in sorted(compile_shapes)],
                         time_budget_s=budget, compile_budget_s=compile_budget,
                         graphs=not args.no_graphs and device.type == "cuda",
                         reference_captured_forward=common.REFERENCE_CAPTURED_FORWARD if reference else None),
        "unavailable": unavailable, "notes": notes, "elapsed_s": round(deadline.elapsed(), 1), "records": records,
    }
    out = Path(args.out)
    doc["plots"] = [] if args.no_plots else plot(doc, out)
    common.write_json(doc, out / "batchnorm.json")
    print(markdown(doc, heading_level=2), flush=True)
    return doc


def _measure(meter: common.Measurer, impl, case: Case, inputs, refs: dict, todo: dict[str, dict]) -> None:
    x, dy, w, b, rm0, rv0 = inputs
    tol = 2 * OUTPUT_TOL[common.dtype_name(case.dtype)]
    try:
        fns = impl.functions()
    except Exception as exc:
        for rec in todo.values():
            meter.fail(rec, exc)
        return
    rm_t, rv_t = rm0.clone(), rv0.clone()  # updated by the training calls
    for mode, rec in todo.items():
        if meter.blocked():
            meter.skip(rec, meter.blocked())
            continue
        try:
            t0 = time.perf_counter()
            if mode == "eval_fwd":
                def forward(x, w, b):
                    with torch.no_grad():
                        return fns["eval"](x, rm0, rv0, w, b)
            else:
                f = fns["train" if mode.startswith("train") else "frozen"]
                rm, rv = (rm_t, rv_t) if mode.startswith("train") else (rm0, rv0)

                def forward(x, w, b, f=f, rm=rm, rv=rv):
                    return f(x, rm, rv, w, b)
            backward = mode.endswith("bwd")

            def make(forward=forward, backward=backward):
                """The timed call. A backward's comes after a forward of its own from leaves of its own: made on
                a graph's capturing stream, nothing of it is tied to another stream (a leaf's gradient accumulator
                made on the default stream and kept alive makes autograd's capture touch that stream)."""
                if not backward:
                    return lambda: forward(x, w, b)
                leaves = [t.detach().requires_grad_() for t in (x, w, b)]
                y = forward(*leaves)
                return lambda: torch.autograd.grad(y, leaves, dy, retain_graph=True)
            call = make()
            first = call()
            first = first[0] if backward else first
            err = common.rel_err(first, refs[mode])
            if x.device.type == "cuda":
                torch.cuda.synchronize()
            setup_s = time.perf_counter() - t0
        except Exception as exc:
            meter.fail(rec, exc)
            continue
        rec["max_rel_err_vs_fp32"] = err
        if not err <= tol:
            rec["mismatch"] = err
        if impl.name == "compile":
            rec["compile_s"] = round(setup_s, 2)
        meter.time(rec, case_bytes(case, mode), call, make)


# ------------------------------------------------------------------------------------ tables and plots


def markdown(doc: dict, heading_level: int = 3) -> str:
    h = "#" * heading_level
    impls = common.ordered_impls(doc, IMPLS)
    intro = (f"Copy bandwidth {doc['copy']['gbps']:.0f} GB/s; cells are GB/s on the fewest bytes and % of copy; "
             "the last column is fastnorm's speed-up over the fastest peer.")
    if common.REFERENCE in doc["settings"]["impls"]:
        intro += (f" The column \"{common.REFERENCE_TITLE}\" is what torch's copy kernel reaches moving the mode's "
                  f"tensors under the same timer ({common.reference_calls(doc, plural=True)}) — the ceiling of one "
                  "pass at this size, not a peer.")
    lines = [f"{h} {doc['title']}", "", intro]
    for name, reason in doc.get("unavailable", {}).items():
        lines.append(f"- {name}: not available ({reason})")
    lines += [f"- {n}" for n in doc.get("notes", [])]
    lines.append("")
    for dtype in doc["settings"]["dtypes"]:
        for layout in doc["settings"]["layouts"]:
            recs = [r for r in doc["records"] if r["dtype"] == dtype and r["layout"] == layout]
            if not recs:
                continue
            lines += [f"{h}# BatchNorm, {dtype} input, {layout}", "",
                      common.perf_table(recs, lambda r: f"{r['label']} {MODE_TITLES[r['mode']]}", impls,
                                        row_header="shape, mode"), ""]
    for plot_name in doc.get("plots", []):
        lines += [f"![{plot_name}]({plot_name})", ""]
    return "\n".join(lines)


def plot(doc: dict, out: Path) -> list[str]:
    """One PNG per dtype and layout: a panel per mode, bars of % of copy per shape and implementation."""
    names = []
    for dtype in doc["settings"]["dtypes"]:
        for layout in doc["settings"]["layouts"]:
            panels = []
            for mode in doc["settings"]["modes"]:
                recs = [r for r in doc["records"]
                        if r["dtype"] == dtype and r["layout"] == layout and r["mode"] == mode]
                if any(r["status"] == "ok" for r in recs):
                    panels.append((MODE_TITLES[mode], recs))
            if not panels:
                continue
            name = f"batchnorm_{dtype}_{layout}.png"
            common.plot_bars(panels, out / name, f"BatchNorm2d, {dtype} input (float32 parameters), {layout} — "
                                                 f"{doc['env']['device_name']}")
            names.append(name)
    return names


# ------------------------------------------------------------------------------------------------- CLI


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="two shapes, bfloat16 only (about a minute)")
    p.add_argument("--dtypes", help="comma list of bf16,fp32,fp16 input dtypes (default bf16,fp32; quick: bf16)")
    p.add_argument("--layouts", default="nchw,channels_last", help="comma list of nchw,channels_last")
    p.add_argument("--ops", help=f"comma list of {','.join(MODES)} (default: all)")
    p.add_argument("--impls", help=f"comma list of {','.join(IMPLS)},{common.REFERENCE} (default: all; "
                   f"{common.REFERENCE} is the same-bytes reference, not a peer)")
    p.add_argument("--shapes", help="custom shapes NxCxHxW, comma separated")
    p.add_argument("--compile", choices=("subset", "all", "none"), default="subset",
                   help="where torch.compile is measured (default: the published shapes only)")
    common.add_run_arguments(p)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fastnorm.bench batchnorm", description=__doc__.split("\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    return common.run_cli(p, args, run)
