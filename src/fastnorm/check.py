"""``fastnorm check``: every op of the package against the float64 NumPy reference, forward and backward.

Each case draws inputs in the case's dtype (seeded), runs the fastnorm op on the present device — the Triton
kernels on CUDA, and on a CPU either PyTorch's implementation or, with ``TRITON_INTERPRET=1``, the Triton
kernels through the interpreter (``fastnorm._runtime.describe()`` says which) — then ``torch.autograd.grad``
with a random upstream gradient, and compares every output and gradient with ``fastnorm.reference`` run in
float64 on the exact same (upcast) values. The error is ``tolerances.max_rel_err`` (normwise, NaN-aware); the
bound is ``OUTPUT_TOL`` of the tensor's dtype for outputs and input gradients and ``PARAM_GRAD_TOL`` for
parameter gradients — the same contract the tests assert.

Quantities compared: ``y`` (output), ``h`` (residual_out = x + residual), ``dx``, ``dres`` (gradient of the
residual), ``dw``, ``db``, ``dz`` (gradient of BatchNorm's fused residual ``z``), ``rmean``/``rvar`` (running
statistics after the call), and for the BatchNorm stage functions ``mean``, ``m2``/``invstd``, ``sum_dy``,
``sum_dy_xhat``.

The battery is fixed: small shapes on a CPU (so the interpreter finishes in minutes on two cores), larger on
a GPU; shapes with 1, primes, non-powers of two and sizes either side of powers of two. Ops that are not in
this build are reported as skipped (one line per op), not failed.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from . import reference as ref
from .reference import tolerances as tol

DTYPE_NAME = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
              torch.float64: "float64"}
FP32, FP16, BF16, FP64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
MOMENTUM, BN_EPS, LN_EPS = 0.1, 1e-5, 1e-5
STANDARD_COLUMNS = ("y", "dx", "dw", "db")


@dataclass
class CheckRow:
    """One line of the check: the errors of every quantity compared, and their tolerances."""

    op: str
    variant: str
    dtype: str
    shape: tuple[int, ...]
    errors: dict[str, float] = field(default_factory=dict)
    tolerances: dict[str, float] = field(default_factory=dict)
    status: str = "pass"  # "pass", "fail" or "skip"
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status != "fail"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shape"] = list(self.shape)
        d["errors"] = {k: (v if math.isfinite(v) else str(v)) for k, v in self.errors.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> CheckRow:
        d = dict(d)
        d["shape"] = tuple(d["shape"])
        d["errors"] = {k: float(v) for k, v in d["errors"].items()}
        return cls(**d)


@dataclass
class Case:
    op: str  # a key of RUNNERS
    variant: str
    dtype: torch.dtype
    shape: tuple[int, ...]
    opts: dict[str, Any] = field(default_factory=dict)


# -------------------------------------------------------------------------------------------- helpers


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


class _Inputs:
    """Seeded random tensors, drawn in float64 on the CPU and rounded to the dtype (so the reference sees the
    exact values the op sees)."""

    def __init__(self, seed: int, device: torch.device):
        self.g = torch.Generator().manual_seed(seed)
        self.device = device

    def randn(self, shape, dtype, scale=1.0, offset=0.0, fmt=None) -> torch.Tensor:
        t = (torch.randn(shape, generator=self.g, dtype=torch.float64) * scale + offset).to(dtype).to(self.device)
        return t.contiguous(memory_format=fmt) if fmt is not None else t

    def rand(self, shape, dtype, low, high) -> torch.Tensor:
        u = torch.rand(shape, generator=self.g, dtype=torch.float64)
        return (low + (high - low) * u).to(dtype).to(self.device)


def _leaf(t: torch.Tensor | None) -> torch.Tensor | None:
    return None if t is None else t.detach().requires_grad_(True)


def _grads(outputs, inputs, grad_outputs):
    """``torch.autograd.grad`` over the inputs that are not None; an unused input's gradient is zeros."""
    live = [t for t in inputs if t is not None]
    got = iter(torch.autograd.grad(outputs, live, grad_outputs, allow_unused=True))
    out = []
    for t in inputs:
        if t is None:
            out.append(None)
            continue
        g = next(got)
        out.append(torch.zeros_like(t) if g is None else g)
    return out


class _Compare:
    def __init__(self, row: CheckRow):
        self.row = row

    def __call__(self, name: str, actual, expected, dtype: torch.dtype, param: bool = False) -> None:
        if expected is None:
            return
        if actual is None:
            raise AssertionError(f"{name}: fastnorm returned no value")
        table = tol.PARAM_GRAD_TOL if param else tol.OUTPUT_TOL
        a = _np(actual) if isinstance(actual, torch.Tensor) else np.asarray(actual, dtype=np.float64)
        err = tol.max_rel_err(a, np.asarray(expected, dtype=np.float64))
        # A quantity compared more than once (per shard, say) keeps its worst error.
        prev = self.row.errors.get(name)
        self.row.errors[name] = err if prev is None or not prev >= err else prev
        self.row.tolerances[name] = min(table[DTYPE_NAME[dtype]], self.row.tolerances.get(name, math.inf))


def _layout(shape, layout: str):
    if layout != "channels_last":
        return None
    return torch.channels_last if len(shape) == 4 else torch.channels_last_3d


# ------------------------------------------------------------------------------------------ runners


def _run_norm(case: Case, device: torch.device, cmp: _Compare, rms: bool) -> None:
    import fastnorm

    o, dt = case.opts, case.dtype
    k = o.get("ndim", 1)
    pshape = case.shape[len(case.shape) - k:]
    pdt = o.get("param_dtype") or dt
    rnd = _Inputs(o.get("seed", 0), device)
    x = rnd.randn(case.shape, dt, offset=0.5)
    wo = o.get("weight_offset", 0.0)
    w = rnd.randn(pshape, pdt, scale=0.3, offset=0.0 if wo else 1.0) if o.get("weight", True) else None
    b = rnd.randn(pshape, pdt, scale=0.3) if o.get("bias", True) and not rms else None
    r = rnd.randn(case.shape, dt) if o.get("residual") else None
    rdt = o.get("residual_dtype")
    eps = o.get("eps", None if rms else LN_EPS)
    xs, ws, bs, rs = map(_leaf, (x, w, b, r))
    kw = dict(residual=rs, residual_dtype=rdt, weight_offset=wo) if (r is not None or wo) else {}
    if rms:
        out = fastnorm.rms_norm(xs, pshape, ws, eps, **kw)
    else:
        out = fastnorm.layer_norm(xs, pshape, ws, bs, eps, **kw)
    y, h = (out if r is not None else (out, None))
    dy = rnd.randn(y.shape, dt)
    dh = rnd.randn(h.shape, h.dtype) if h is not None else None
    gx, gw, gb, gr = _grads([y] + ([h] if h is not None else []), [xs, ws, bs, rs],
                            [dy] + ([dh] if dh is not None else []))

    hdt = rdt or dt
    if r is not None:
        h_ref_t = (x.double() + r.double()).to(hdt)
        inp = _np(h_ref_t)
    else:
        inp = _np(x)
    w_eff = None if w is None else _np(w) + wo
    eps_ref = torch.finfo(dt).eps if eps is None else eps
    if rms:
        y_ref, rstd = ref.rms_norm_forward(inp, w_eff, eps_ref, k)
        dx_ref, dw_ref = ref.rms_norm_backward(_np(dy), inp, w_eff, rstd, k)
        db_ref = None
    else:
        y_ref, mean, rstd = ref.layer_norm_forward(inp, w_eff, None if b is None else _np(b), eps_ref, k)
        dx_ref, dw_ref, db_ref = ref.layer_norm_backward(_np(dy), inp, w_eff, mean, rstd, k, has_bias=b is not None)
    cmp("y", y, y_ref, dt)
    if r is not None:
        cmp("h", h, _np(h_ref_t), hdt)
        dx_ref = dx_ref + _np(dh)
        cmp("dres", gr, dx_ref, dt)
    cmp("dx", gx, dx_ref, dt)
    cmp("dw", gw, dw_ref, pdt, param=True)
    cmp("db", gb, db_ref, pdt, param=True)


def _run_layer_norm(case, device, cmp):
    _run_norm(case, device, cmp, rms=False)


def _run_rms_norm(case, device, cmp):
    _run_norm(case, device, cmp, rms=True)


def _bn_inputs(case: Case, device: torch.device):
    o, dt = case.opts, case.dtype
    c = case.shape[1]
    pdt = o.get("param_dtype") or FP32
    fmt = _layout(case.shape, o.get("layout", "contiguous"))
    rnd = _Inputs(o.get("seed", 0), device)
    x = rnd.randn(case.shape, dt, offset=o.get("offset", 0.5), fmt=fmt)
    affine = o.get("affine", True)
    w = rnd.randn(c, pdt, scale=0.3, offset=1.0) if affine else None
    b = rnd.randn(c, pdt, scale=0.3) if affine else None
    rm = rnd.randn(c, pdt, scale=0.2)
    rv = rnd.rand(c, pdt, 0.5, 1.5)
    z = rnd.randn(case.shape, dt, fmt=fmt) if o.get("z") else None
    dy = rnd.randn(case.shape, dt, fmt=fmt)
    return x, w, b, rm, rv, z, dy, pdt


def _run_batch_norm(case: Case, device: torch.device, cmp: _Compare) -> None:
    import fastnorm

    o, dt = case.opts, case.dtype
    mode = o["mode"]
    training, ugs = mode in ("train", "frozen"), mode == "frozen"
    act = "relu" if o.get("relu") else None
    fix_gamma = bool(o.get("fix_gamma"))
    x, w, b, rm, rv, z, dy, pdt = _bn_inputs(case, device)
    rm_in, rv_in = _np(rm), _np(rv)
    xs, ws, bs, zs = map(_leaf, (x, w, b, z))
    extra = {}
    if ugs:
        extra["use_global_stats"] = True
    if fix_gamma:
        extra["fix_gamma"] = True
    if act:
        extra["activation"] = act
    if zs is not None:
        extra["z"] = zs
    y = fastnorm.batch_norm(xs, rm, rv, ws, bs, training=training, momentum=MOMENTUM, eps=BN_EPS, **extra)
    gx, gw, gb, gz = _grads([y], [xs, ws, bs, zs], [dy])

    fwd = ref.batch_norm_forward(_np(x), None if w is None else _np(w), None if b is None else _np(b), rm_in, rv_in,
                                 training=training, momentum=MOMENTUM, eps=BN_EPS, axis=1, use_global_stats=ugs,
                                 fix_gamma=fix_gamma, activation=act, z=None if z is None else _np(z))
    dx_ref, dw_ref, db_ref, dz_ref = ref.batch_norm_backward(
        _np(dy), _np(x), None if w is None else _np(w), fwd, training=training, axis=1, use_global_stats=ugs,
        fix_gamma=fix_gamma, activation=act, has_z=z is not None, has_bias=b is not None)
    cmp("y", y, fwd.y, dt)
    cmp("dx", gx, dx_ref, dt)
    cmp("dw", gw, dw_ref, pdt, param=True)
    cmp("db", gb, db_ref, pdt, param=True)
    cmp("dz", gz, dz_ref, dt)
    cmp("rmean", rm, fwd.new_running_mean, pdt)
    cmp("rvar", rv, fwd.new_running_var, pdt)


def _run_bn_stages(case: Case, device: torch.device, cmp: _Compare) -> None:
    """The BatchNorm stage functions SyncBatchNorm is built on (``fastnorm.ops.batch_norm``), as
    ``fastnorm.distributed`` chains them: per-shard ``local_stats``, ``merge_stats`` of the shards, ``apply``,
    ``backward_sums`` and ``backward_dx`` — each against the reference's piece, fed the same inputs."""
    from .ops import batch_norm as bn

    dt = case.dtype
    x, w, b, _rm, _rv, z, dy, _pdt = _bn_inputs(case, device)
    act = "relu" if case.opts.get("relu") else None
    c = x.shape[1]
    counts, means, m2s = [], [], []
    for s in torch.tensor_split(x, case.opts.get("shards", 3), dim=0):
        mean_s, m2_s = bn.local_stats(s)
        _n, e_mean_s, e_m2_s = ref.shard_stats(_np(s), 1)
        cmp("mean", mean_s, e_mean_s, FP32)
        cmp("m2", m2_s, e_m2_s, FP32)
        counts.append(float(s.numel() // c))
        means.append(mean_s)
        m2s.append(m2_s)
    count, mean, var = bn.merge_stats(torch.tensor(counts, dtype=torch.float32, device=device),
                                      torch.stack(means), torch.stack(m2s))
    e_count, e_mean, e_m2 = ref.merge_stats([int(n) for n in counts], [_np(m) for m in means], [_np(m) for m in m2s])
    cmp("mean", mean, e_mean, FP32)
    cmp("var", var, e_m2 / e_count, FP32)
    invstd = torch.rsqrt(var + BN_EPS)
    mean64, invstd64 = _np(mean), _np(invstd)
    y = bn.apply(x, mean, invstd, w, b, z=z, activation=act)
    y_ref = ref.batch_norm_normalize(_np(x), mean64, invstd64, _np(w), _np(b), axis=1, activation=act,
                                     z=None if z is None else _np(z))
    cmp("y", y, y_ref, dt)
    g = ref.activation_backward(_np(dy), y_ref, act)
    saved_y = y if act is not None else None
    sum_dy, sum_dy_xhat = bn.backward_sums(dy, x, mean, invstd, y=saved_y, activation=act)
    e_sdy, e_sdyx = ref.backward_sums(g, _np(x), mean64, invstd64, 1)
    cmp("sum_dy", sum_dy, e_sdy, FP32, param=True)
    cmp("sum_dy_xhat", sum_dy_xhat, e_sdyx, FP32, param=True)
    dx, dz = bn.backward_dx(dy, x, mean, invstd, w, sum_dy, sum_dy_xhat, count, y=saved_y, activation=act)
    e_dx = ref.input_grad_from_sums(g, _np(x), _np(w), mean64, invstd64, _np(sum_dy), _np(sum_dy_xhat),
                                    int(e_count), 1)
    cmp("dx", dx, e_dx, dt)
    if z is not None:
        cmp("dz", dz, g, dt)


def _module_params(mod, rnd: _Inputs, c_shape, dtype):
    with torch.no_grad():
        if getattr(mod, "weight", None) is not None:
            mod.weight.copy_(rnd.randn(c_shape, dtype, scale=0.3, offset=1.0))
        if getattr(mod, "bias", None) is not None:
            mod.bias.copy_(rnd.randn(c_shape, dtype, scale=0.3))


def _run_module(case: Case, device: torch.device, cmp: _Compare) -> None:
    """The ``fastnorm.nn`` modules, as a user calls them (parameters and buffers in the module)."""
    import fastnorm.nn as fnn

    name, dt = case.opts["module"], case.dtype
    rnd = _Inputs(case.opts.get("seed", 0), device)
    x = rnd.randn(case.shape, dt, offset=0.5)
    n = case.shape[-1] if name in ("LayerNorm", "RMSNorm") else case.shape[1]
    mod = getattr(fnn, name)(n).to(device)
    _module_params(mod, rnd, (n,), FP32)
    if name in ("BatchNorm2d", "FrozenBatchNorm2d"):
        with torch.no_grad():
            mod.running_mean.copy_(rnd.randn(n, FP32, scale=0.2))
            mod.running_var.copy_(rnd.rand(n, FP32, 0.5, 1.5))
    mod.train(name == "BatchNorm2d")
    rm0 = _np(mod.running_mean) if hasattr(mod, "running_mean") else None
    rv0 = _np(mod.running_var) if hasattr(mod, "running_var") else None
    w = mod.weight
    b = getattr(mod, "bias", None)
    xs = _leaf(x)
    y = mod(xs)
    dy = rnd.randn(y.shape, dt)
    trainable = [p if isinstance(p, torch.nn.Parameter) else None for p in (w, b)]
    gx, gw, gb = _grads([y], [xs, *trainable], [dy])
    w64 = _np(w)
    b64 = None if b is None else _np(b)
    if name == "LayerNorm":
        y_ref, mean, rstd = ref.layer_norm_forward(_np(x), w64, b64, mod.eps)
        dx_ref, dw_ref, db_ref = ref.layer_norm_backward(_np(dy), _np(x), w64, mean, rstd)
    elif name == "RMSNorm":
        eps = torch.finfo(dt).eps if mod.eps is None else mod.eps
        y_ref, rstd = ref.rms_norm_forward(_np(x), w64, eps)
        dx_ref, dw_ref = ref.rms_norm_backward(_np(dy), _np(x), w64, rstd)
        db_ref = None
    else:
        training = name == "BatchNorm2d"
        fwd = ref.batch_norm_forward(_np(x), w64, b64, rm0, rv0, training=training, momentum=MOMENTUM,
                                     eps=mod.eps, axis=1)
        dx_ref, dw_ref, db_ref, _ = ref.batch_norm_backward(_np(dy), _np(x), w64, fwd, training=training, axis=1)
        y_ref = fwd.y
        if trainable[0] is None:  # FrozenBatchNorm2d: weight and bias are buffers, no gradient
            dw_ref = db_ref = None
        cmp("rmean", mod.running_mean, fwd.new_running_mean, FP32)
        cmp("rvar", mod.running_var, fwd.new_running_var, FP32)
    cmp("y", y, y_ref, dt)
    cmp("dx", gx, dx_ref, dt)
    cmp("dw", gw if trainable[0] is not None else None, dw_ref, FP32, param=True)
    cmp("db", gb if trainable[1] is not None else None, db_ref, FP32, param=True)


RUNNERS: dict[str, Callable[[Case, torch.device, _Compare], None]] = {
    "layer_norm": _run_layer_norm,
    "rms_norm": _run_rms_norm,
    "batch_norm": _run_batch_norm,
    "bn stages": _run_bn_stages,
    "module": _run_module,
}


def _missing(op: str) -> str | None:
    """Why ``op``'s cases cannot run in this build (None when they can)."""
    import fastnorm

    if op in ("layer_norm", "rms_norm", "batch_norm"):
        return None if hasattr(fastnorm, op) else f"fastnorm.{op} is not in this build"
    if op == "bn stages":
        try:
            from .ops import batch_norm as bn
        except ImportError:
            return "fastnorm.ops.batch_norm is not in this build"
        names = ("local_stats", "merge_stats", "backward_sums", "backward_dx")
        absent = [n for n in names if not hasattr(bn, n)]
        return f"fastnorm.ops.batch_norm lacks {', '.join(absent)}" if absent else None
    return None


# ------------------------------------------------------------------------------------------- battery


def battery(quick: bool, device: torch.device | str) -> list[Case]:
    """The fixed list of cases for ``device`` (small on a CPU, larger on a GPU); ``quick`` keeps a subset."""
    gpu = torch.device(device).type == "cuda"
    cases: list[Case] = []
    cases += _norm_cases("layer_norm", quick, gpu)
    cases += _norm_cases("rms_norm", quick, gpu)
    cases += _bn_cases(quick, gpu)
    cases += _stage_cases(quick, gpu)
    cases += _module_cases(gpu)
    return cases


def _rows_for(n: int, gpu: bool) -> int:
    if not gpu:
        return 3
    return max(1, min(257, (1 << 22) // n))


def _norm_cases(op: str, quick: bool, gpu: bool) -> list[Case]:
    if gpu:
        ns = [1, 2, 3, 7, 31, 64, 65, 127, 128, 129, 255, 257, 1000, 1023, 1024, 1025, 2049, 4095, 4097, 8193,
              16385, 32769, 65537, 262144]
        if quick:
            ns = [1, 7, 129, 1000, 1025, 4097, 8193, 16385, 65537]  # 8193: 16-bit rows whole, weight re-read
    else:
        # 4099 and 8197 pass the backward's whole-row limit (float64 / float32 accumulation: chunked rows)
        ns = [7, 129, 1025] if quick else [1, 7, 64, 129, 1000, 1025, 4099, 8197]
    dtypes = [FP32, BF16] if quick else [FP32, FP16, BF16, FP64]
    rms = op == "rms_norm"
    if rms:
        # RMSNorm of one element is ill-conditioned: dx = g·rstd·eps/(x² + eps) is the difference of two
        # numbers equal to within eps, so no finite precision (the float64 reference included) meets a
        # normwise bound there. LayerNorm's N = 1 is exact (x - mean = 0) and stays.
        ns = [n for n in ns if n > 1]
    cases = [Case(op, "affine", dt, (_rows_for(n, gpu), n)) for dt in dtypes for n in ns]
    mid = 1000 if not gpu else 4097
    rows = _rows_for(mid, gpu)
    opt_dtypes = [BF16] if quick else [FP32, BF16]
    variants: list[tuple[str, dict]] = [
        ("no affine", dict(weight=False, bias=False)),
        ("residual", dict(residual=True)),
        ("residual→fp32", dict(residual=True, residual_dtype=FP32)),
        ("weight_offset=1", dict(weight_offset=1.0)),
        ("fp32 params", dict(param_dtype=FP32)),
    ]
    variants.append(("eps=None", dict(eps=None)) if rms else ("no bias", dict(bias=False)))
    for name, opts in variants:
        for dt in opt_dtypes:
            if name == "fp32 params" and dt == FP32:
                continue
            cases.append(Case(op, name, dt, (rows, mid), opts))
    if not quick:
        if not gpu:  # past the forward's whole-row limit for float32 accumulation: chunked rows
            cases += [Case(op, "long row", dt, (2, 32771)) for dt in (FP32, BF16)]
        cases.append(Case(op, "normalized (5, 7)", FP32, (2, 3, 5, 7), dict(ndim=2)))
        cases.append(Case(op, "3-D input", BF16, (2, 3, 129)))
        cases.append(Case(op, "one row", FP32, (1, mid)))
    return cases


def _bn_cases(quick: bool, gpu: bool) -> list[Case]:
    if gpu:
        shapes = [(2, 3, 5, 7), (32, 64, 28, 28), (8, 2048, 7, 7), (64, 3, 33, 33), (16, 129, 1, 1),
                  (3, 65, 31, 17), (256, 7), (4, 32, 9, 10, 11), (2, 17, 300)]
        if quick:
            shapes = [(2, 3, 5, 7), (32, 64, 28, 28), (16, 129, 1, 1), (256, 7)]
    else:
        shapes = [(2, 3, 5, 7), (3, 65, 2, 3)] if quick else [(2, 3, 5, 7), (3, 65, 2, 3), (4, 1, 3, 3),
                                                             (6, 4, 1, 1), (5, 17), (2, 6, 9), (2, 3, 2, 3, 4)]
    dtypes = [FP32, BF16] if quick else [FP32, FP16, BF16]
    cases = []
    for mode in ("train", "eval", "frozen"):
        for dt in dtypes:
            for s in shapes:
                layouts = ["contiguous"] + (["channels_last"] if len(s) in (4, 5) else [])
                for layout in layouts:
                    cases.append(Case("batch_norm", f"{mode} {layout}", dt, s, dict(mode=mode, layout=layout)))
    s = shapes[0]
    variants = [("relu", dict(relu=True)), ("relu+z", dict(relu=True, z=True)), ("z", dict(z=True)),
                ("fix_gamma", dict(fix_gamma=True)), ("no affine", dict(affine=False)),
                ("params bf16", dict(param_dtype=BF16))]
    for name, opts in variants:
        for mode in ("train", "eval", "frozen"):
            if quick and mode != "train":
                continue
            for layout in ("contiguous", "channels_last"):
                dt = BF16 if name == "params bf16" else FP32
                cases.append(Case("batch_norm", f"{mode} {layout} {name}", dt, s,
                                  dict(mode=mode, layout=layout, **opts)))
    return cases


def _stage_cases(quick: bool, gpu: bool) -> list[Case]:
    shapes = [(7, 5, 3, 4), (4, 65, 2, 2)] if not gpu else [(7, 5, 3, 4), (9, 64, 14, 14), (5, 129, 7, 7)]
    dtypes = [FP32] if quick else [FP32, BF16]
    cases = [Case("bn stages", f"{layout}, 3 shards", dt, s, dict(layout=layout, shards=3))
             for dt in dtypes for s in shapes for layout in ("contiguous", "channels_last")]
    cases.append(Case("bn stages", "relu+z, 3 shards", FP32, shapes[0], dict(shards=3, relu=True, z=True)))
    return cases


def _module_cases(gpu: bool) -> list[Case]:
    del gpu
    return [Case("module", "nn.LayerNorm", FP32, (3, 33), dict(module="LayerNorm")),
            Case("module", "nn.RMSNorm", FP32, (3, 33), dict(module="RMSNorm")),
            Case("module", "nn.BatchNorm2d train", FP32, (2, 3, 4, 5), dict(module="BatchNorm2d")),
            Case("module", "nn.FrozenBatchNorm2d", FP32, (2, 3, 4, 5), dict(module="FrozenBatchNorm2d"))]


# ----------------------------------------------------------------------------------------------- run


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _row(case: Case, **status) -> CheckRow:
    """The row of ``case`` (``status``/``message`` given for a case that did not run)."""
    return CheckRow(case.op, case.variant, DTYPE_NAME[case.dtype], tuple(case.shape), **status)


def run_case(case: Case, device: torch.device) -> CheckRow:
    """One case -> one row: ``pass`` when every error is within its tolerance, else ``fail`` (an exception
    is a failure, with its message)."""
    row = _row(case)
    try:
        RUNNERS[case.op](case, device, _Compare(row))
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        row.status, row.message = "fail", f"{type(exc).__name__}: {first}"[:200]
        return row
    bad = [k for k, e in row.errors.items() if not e <= row.tolerances[k]]
    if bad:
        row.status = "fail"
        row.message = "over tolerance: " + ", ".join(bad)
    return row


def default_jobs(device: torch.device) -> int:
    """Worker processes for the check: on a GPU about half the CPU cores, up to 8 (the time of a first check on a
    machine goes into compiling kernels, one CPU core each); one on a CPU (the interpreter needs the cores)."""
    if device.type != "cuda":
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
    return max(1, min(8, cores // 2))


def _run_case_in_worker(case: Case, device: str) -> CheckRow:
    return run_case(case, torch.device(device))


def _run_parallel(cases: Sequence[Case], device: torch.device, jobs: int, bar,
                  worker: Callable[[Case, str], CheckRow] = _run_case_in_worker) -> list[CheckRow]:
    """``worker(case, device)`` (``run_case``) of every case in ``jobs`` spawned processes, rows in the cases'
    order. A dying worker breaks the pool and fails every unfinished case with it: those are run again one per
    fresh process, so only a case that kills its own process is reported as such. On an interrupt the workers are
    terminated (a spawned worker would otherwise keep its CUDA context)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("spawn")
    rows: list[CheckRow | None] = [None] * len(cases)

    def run(indices: list[int], processes: int) -> list[int]:
        """Runs ``indices``; returns those lost to a broken pool."""
        broken = []
        pool = ProcessPoolExecutor(processes, mp_context=ctx)
        try:
            futures = {pool.submit(worker, cases[i], str(device)): i for i in indices}
            for f in as_completed(futures):
                i = futures[f]
                try:
                    rows[i] = f.result()
                except BrokenProcessPool:
                    broken.append(i)
                    continue
                except Exception as exc:  # the case could not reach its worker (or its row could not come back)
                    rows[i] = _row(cases[i], status="fail", message=f"{type(exc).__name__}: {exc}"[:200])
                if bar is not None:
                    bar.update(1)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in list(getattr(pool, "_processes", {}).values()):  # private, but the only handle on them
                proc.terminate()
            raise
        pool.shutdown()
        return broken

    for i in run(list(range(len(cases))), jobs):
        if run([i], 1):
            rows[i] = _row(cases[i], status="fail", message="the worker process running this case died")
            if bar is not None:
                bar.update(1)
    return rows  # type: ignore[return-value]


def run_check(quick: bool, device: torch.device | str | None = None, cases: Sequence[Case] | None = None,
              show_progress: bool = True, jobs: int | None = None) -> list[CheckRow]:
    """Run the battery (or ``cases``) on ``device`` (default: CUDA when present, else CPU), in ``jobs`` worker
    processes (default :func:`default_jobs`). Ops missing from this build give one ``skip`` row each instead of
    their cases."""
    device = default_device() if device is None else torch.device(device)
    jobs = default_jobs(device) if jobs is None else jobs
    cases = list(battery(quick, device) if cases is None else cases)
    rows: list[CheckRow] = []
    missing: dict[str, str | None] = {}
    runnable = []
    for c in cases:
        key = c.op if c.op != "module" else f"module:{c.opts['module']}"
        if key not in missing:
            missing[key] = _missing_module(c.opts["module"]) if c.op == "module" else _missing(c.op)
            if missing[key]:
                rows.append(CheckRow(c.op if c.op != "module" else c.variant, "all", "-", (), status="skip",
                                     message=missing[key]))
        if not missing[key]:
            runnable.append(c)
    bar = None
    if show_progress:
        from tqdm import tqdm

        tty = sys.stderr.isatty()
        bar = tqdm(total=len(runnable), desc="fastnorm check", file=sys.stderr, mininterval=0.5 if tty else 20.0,
                   dynamic_ncols=tty, ncols=None if tty else 100)
    try:
        if jobs > 1 and len(runnable) > 1:
            rows += _run_parallel(runnable, device, jobs, bar)
        else:
            for c in runnable:
                if bar is not None:
                    bar.set_postfix_str(f"{c.op} {DTYPE_NAME[c.dtype]} {c.shape}", refresh=False)
                rows.append(run_case(c, device))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rows


def _missing_module(name: str) -> str | None:
    try:
        import fastnorm.nn as fnn
    except ImportError as exc:
        return f"fastnorm.nn cannot be imported ({exc})"
    return None if hasattr(fnn, name) else f"fastnorm.nn.{name} is not in this build"


# ---------------------------------------------------------------------------------------------- output


def _fmt(e: float | None) -> str:
    if e is None:
        return ""
    if math.isnan(e):
        return "nan"
    if math.isinf(e):
        return "inf"
    return "0" if e == 0 else f"{e:.1e}"


def _tol_text(row: CheckRow) -> str:
    out_t = {row.tolerances[k] for k in row.tolerances if k not in ("dw", "db")}
    par_t = {row.tolerances[k] for k in row.tolerances if k in ("dw", "db")}
    parts = ["/".join(f"{t:.2g}" for t in sorted(out_t))] if out_t else []
    if par_t:
        parts.append("/".join(f"{t:.2g}" for t in sorted(par_t)))
    return " · ".join(parts)


def table(rows: Sequence[CheckRow]) -> str:
    """The check as a Markdown table: op, variant, dtype, shape, the error of each quantity, tolerance (outputs
    · parameter gradients), result."""
    from .bench.common import markdown_table

    body = []
    for r in rows:
        if r.status == "skip":
            body.append([r.op, r.variant, r.dtype, "", "", "", "", "", "", "", f"skip: {r.message}"])
            continue
        other = ", ".join(f"{k} {_fmt(v)}" for k, v in r.errors.items() if k not in STANDARD_COLUMNS)
        shape = "×".join(map(str, r.shape))
        result = "pass" if r.status == "pass" else f"FAIL: {r.message}"
        body.append([r.op, r.variant, r.dtype, shape, *[_fmt(r.errors.get(k)) for k in STANDARD_COLUMNS], other,
                     _tol_text(r), result])
    header = ["op", "variant", "dtype", "shape", "y", "dx", "dw", "db", "other", "tol (out · param)", "result"]
    return markdown_table(header, body)


def summary(rows: Sequence[CheckRow]) -> str:
    n_pass = sum(r.status == "pass" for r in rows)
    n_fail = sum(r.status == "fail" for r in rows)
    skipped = [r for r in rows if r.status == "skip"]
    text = f"{n_pass} passed, {n_fail} failed"
    if skipped:
        text += f"; not in this build, skipped: {', '.join(r.op for r in skipped)}"
    return text


def where() -> str:
    """Where the kernels ran (``fastnorm._runtime.describe()``)."""
    from ._runtime import describe

    return describe()


def main(quick: bool, device: str | None, json_path: str | None, ops: Sequence[str] | None = None,
         jobs: int | None = None) -> int:
    """``fastnorm check``: print the table; exit status 1 when any case fails."""
    dev = default_device() if device is None else torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("fastnorm check: --device cuda, but no CUDA device is available", file=sys.stderr)
        return 2
    cases = battery(quick, dev)
    if ops:
        cases = [c for c in cases if c.op in ops]
    print(f"fastnorm check ({'quick' if quick else 'full'} battery, {len(cases)} cases) on {dev}: {where()}",
          flush=True)
    rows = run_check(quick, dev, cases, jobs=jobs)
    print(table(rows))
    print(summary(rows))
    if json_path:
        from .bench.common import write_json

        write_json({"where": where(), "device": str(dev), "quick": quick, "rows": [r.to_dict() for r in rows]},
                   json_path)
    return 0 if all(r.passed for r in rows) else 1
