"""LayerNorm and RMSNorm: argument checks, torch custom ops with autograd, and the CPU fallback.

Two custom ops carry both norms (``is_rms`` selects):

- ``fastnorm::norm_fwd(x, weight, bias, residual, normalized_ndim, eps, weight_offset, is_rms,
  residual_dtype) -> (y, residual_out, mean, rstd)``
- ``fastnorm::norm_bwd(dy, dresidual_out, s, weight, mean, rstd, ...) -> (dx, dresidual, dweight, dbias)``

``mean`` is the row mean of ``s - s[..., 0]`` (the kernels centre on the row's first element; see
``fastnorm.kernels.layer_norm``). Both are ``torch.library.triton_op``s (their Triton kernels are
visible to torch.compile, and their bodies double as the fake implementation), and ``norm_fwd``'s
autograd calls ``norm_bwd``. Absent outputs are empty tensors. torch.compile traces through the ops
with no graph break; eager calls skip the dispatcher and run the same launchers through a
``torch.autograd.Function`` (or directly, when no gradient is needed), which keeps the per-call host
cost to the argument checks and the launches. A backward run with ``create_graph=True`` takes PyTorch
operations instead of the kernels (``_backward_differentiable``), so its gradients can be differentiated again;
forward-mode AD forms the tangents with PyTorch operations too (``_forward_tangent``).

CPU tensors without ``TRITON_INTERPRET=1`` use PyTorch's own ``F.layer_norm`` / ``F.rms_norm`` (plus
plain torch arithmetic for the residual and weight offset), with the same semantics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import is_fake

from .._runtime import apply_function, backward_in_torch_ops, forward_ad_active, needs_autograd, uses_triton
from .._validate import FLOAT_DTYPES, check_eps, check_float, check_optional_param, check_same_device, normalize_shape
from ..kernels import layer_norm as K
from ..kernels._replay import Programs

__all__ = ["layer_norm", "rms_norm"]

#: The eager kernel launches of the forward and the backward, replayed per signature (``kernels._replay``).
_FORWARDS, _BACKWARDS = Programs(), Programs()
#: torch's default RMSNorm eps per dtype (``torch.finfo`` builds a new object on every call).
_FINFO_EPS = {dt: torch.finfo(dt).eps for dt in FLOAT_DTYPES}


# ----------------------------------------------------------------------------- checks


def _check_args(
    x: torch.Tensor,
    normalized_shape: int | Sequence[int],
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    residual: torch.Tensor | None,
    residual_dtype: torch.dtype | None,
    weight_offset: float,
    compiling: bool,
) -> tuple[int, ...]:
    # Each check first compares attributes directly (the common, valid case) and only calls the shared
    # checker, which raises with the message, when that comparison fails: this runs on every eager call.
    if not isinstance(x, torch.Tensor) or x.dtype not in FLOAT_DTYPES:
        check_float("x", x)
    if type(normalized_shape) is int:
        if normalized_shape < 0:
            normalize_shape(normalized_shape)
        shape = (normalized_shape,)
    else:
        shape = normalize_shape(normalized_shape)
    nd = len(shape)
    xshape = x.shape
    if len(xshape) < nd or tuple(xshape[len(xshape) - nd:]) != shape:
        expected = ", ".join(str(s) for s in shape)
        raise ValueError(
            f"normalized_shape={list(shape)} expects an input of shape [*, {expected}], "
            f"but the input has shape {list(xshape)}"
        )
    device = x.device
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (
            not isinstance(p, torch.Tensor) or p.dtype not in FLOAT_DTYPES or p.shape != shape or p.device != device
        ):
            check_optional_param(name, p, shape, x)
    if residual is not None:
        check_float("residual", residual)
        if residual.shape != xshape:
            raise ValueError(f"residual must have the input's shape {list(xshape)}, got {list(residual.shape)}")
        check_same_device("residual", residual, x)
    if residual_dtype is not None:
        if residual_dtype not in FLOAT_DTYPES:
            raise TypeError(
                f"residual_dtype must be a floating dtype (float16, bfloat16, float32 or float64), got {residual_dtype}"
            )
        if residual is None:
            raise ValueError("residual_dtype is given but residual is None")
    if not compiling:  # under dynamic shapes the float arguments may be symbolic
        if type(weight_offset) is not float or not math.isfinite(weight_offset):
            if isinstance(weight_offset, bool) or not isinstance(weight_offset, (int, float)) or not math.isfinite(
                weight_offset
            ):
                raise TypeError(f"weight_offset must be a finite float, got {weight_offset!r}")
        if weight_offset != 0.0 and weight is None:
            raise ValueError("weight_offset shifts the weight, but weight is None")
    return shape


# ----------------------------------------------------------------------------- Triton path (shared by all entries)


def _forward(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    residual: torch.Tensor | None,
    nd: int,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    residual_dtype: torch.dtype | None,
    store_stats: bool,
    traceable: bool,
):
    """``(y, residual_out | None, mean | None, rstd | None)`` with y/residual_out shaped like x."""
    n = math.prod(x.shape[x.dim() - nd:])
    if x.numel() == 0:
        m = math.prod(x.shape[: x.dim() - nd])
        stat = torch.float64 if x.dtype == torch.float64 else torch.float32
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        res_out = None
        if residual is not None:
            res_out = torch.empty(x.shape, dtype=residual_dtype or x.dtype, device=x.device)
        rstd = torch.empty((m,), dtype=stat, device=x.device) if store_stats else None
        mean = torch.empty((m,), dtype=stat, device=x.device) if store_stats and not is_rms else None
        return y, res_out, mean, rstd
    inputs = (x, weight, bias, residual)
    options = (n, eps, weight_offset, is_rms, residual_dtype, store_stats)
    if traceable:
        return _forward_rows(*inputs, *options, True)
    return _FORWARDS.run(options, inputs, lambda: _forward_rows(*inputs, *options, False))


def _forward_rows(x, weight, bias, residual, n: int, eps: float, weight_offset: float, is_rms: bool,
                  residual_dtype, store_stats: bool, traceable: bool):
    """``_forward`` of a non-empty x through the kernels, on rows of ``n``."""
    x2d = K.as_rows(x, n)
    r2d = None if residual is None else K.as_rows(residual, n)
    return K.norm_fwd(x2d, weight, bias, r2d, eps, weight_offset, is_rms, residual_dtype, store_stats, traceable,
                      out_shape=x.shape)


def _backward(
    dy: torch.Tensor | None,
    dres_out: torch.Tensor | None,
    s: torch.Tensor,
    weight: torch.Tensor | None,
    mean: torch.Tensor | None,
    rstd: torch.Tensor,
    nd: int,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    bias_dtype: torch.dtype | None,
    x_dtype: torch.dtype,
    residual_in_dtype: torch.dtype | None,
    traceable: bool,
):
    """``(dx, dresidual | None, dweight | None, dbias | None)``; ``s`` is what was normalized."""
    pshape = s.shape[s.dim() - nd:]
    if s.numel() == 0:
        dx = torch.zeros(s.shape, dtype=x_dtype, device=s.device)
        dres = None if residual_in_dtype is None else torch.zeros(s.shape, dtype=residual_in_dtype, device=s.device)
        dw = None if weight is None else torch.zeros_like(weight)
        db = None if bias_dtype is None else torch.zeros(pshape, dtype=bias_dtype, device=s.device)
        return dx, dres, dw, db
    if dy is None:  # only residual_out was used downstream
        dy = torch.zeros(s.shape, dtype=x_dtype, device=s.device)
    inputs = (s, dy, dres_out, weight, mean, rstd)
    options = (pshape, eps, weight_offset, is_rms, bias_dtype, x_dtype, residual_in_dtype)
    if traceable:
        return _backward_rows(*inputs, *options, True)
    return _BACKWARDS.run(options, inputs, lambda: _backward_rows(*inputs, *options, False))


def _backward_rows(s, dy, dres_out, weight, mean, rstd, pshape, eps: float, weight_offset: float, is_rms: bool,
                   bias_dtype, x_dtype, residual_in_dtype, traceable: bool):
    """``_backward`` of a non-empty ``s`` through the kernels, on rows of prod(pshape)."""
    n = math.prod(pshape)
    return K.norm_bwd(
        K.as_rows(dy, n), K.as_rows(s, n), weight, bias_dtype is not None, mean, rstd,
        None if dres_out is None else K.as_rows(dres_out, n), x_dtype, residual_in_dtype, eps, weight_offset, is_rms,
        bias_dtype=bias_dtype, traceable=traceable, out_shape=s.shape, param_shape=pshape,
    )


def _row_stats(s, nd: int, eps: float, is_rms: bool):
    """``(x̂, rstd, acc, cols, rows)`` of the rows of ``s`` (its last ``nd`` dims) as PyTorch operations, in float32
    (float64 for float64 ``s``): x̂ = (s − mean)·rstd, rstd = 1/sqrt(mean((s − mean)²) + eps) (RMS: x̂ = s·rstd,
    rstd = 1/sqrt(mean(s²) + eps)), rstd keeping its reduced dims; ``cols`` and ``rows`` the row's dims and the
    others."""
    acc = torch.promote_types(torch.float32, s.dtype)
    cols = tuple(range(s.dim() - nd, s.dim()))
    rows = tuple(range(s.dim() - nd))
    xc = s.to(acc)
    if not is_rms:
        xc = xc - xc.mean(cols, keepdim=True)
    rstd = torch.rsqrt(xc.square().mean(cols, keepdim=True) + eps)
    return xc * rstd, rstd, acc, cols, rows


def _through_xhat(v, xhat, rstd, cols, is_rms: bool):
    """rstd·(v − mean(v) − x̂·mean(v·x̂)) over the row (RMS: without mean(v)): x̂'s derivative in s applied to v —
    the backward's ds from g and the tangent's x̂ from ṡ alike (the map is symmetric)."""
    out = v - xhat * (v * xhat).mean(cols, keepdim=True)
    if not is_rms:
        out = out - v.mean(cols, keepdim=True)
    return out * rstd


def _backward_differentiable(dy, dres_out, s, weight, nd: int, eps: float, weight_offset: float, is_rms: bool,
                             bias_dtype, x_dtype, residual_in_dtype):
    """``_backward`` as PyTorch operations, where ``backward_in_torch_ops`` sends a backward: with
    ``create_graph=True`` (a gradient penalty, a Hessian-vector product) its results are then differentiable again,
    inside a dual level they carry tangents, under vmap they are batched — none of which the kernels' are. The row
    statistics are formed again from ``s`` (``_row_stats``: the saved mean and rstd are constants to autograd). With
    g = dy·(weight + weight_offset): ds = rstd·(g − mean(g) − x̂·mean(g·x̂)) (RMS: without mean(g)) +
    dresidual_out, dweight = Σ dy·x̂ and dbias = Σ dy over the rows. -> ``(dx, dresidual, dweight, dbias)`` as
    ``_backward`` (dx and dresidual are ds)."""
    xhat, rstd, acc, cols, rows = _row_stats(s, nd, eps, is_rms)
    dy = torch.zeros_like(xhat) if dy is None else dy.to(acc)
    dw = None if weight is None else (dy * xhat).sum(rows).to(weight.dtype)
    db = None if bias_dtype is None else dy.sum(rows).to(bias_dtype)
    g = dy if weight is None else dy * (weight.to(acc) + weight_offset)
    ds = _through_xhat(g, xhat, rstd, cols, is_rms)
    if dres_out is not None:
        ds = ds + dres_out.to(acc)
    return ds.to(x_dtype), (None if residual_in_dtype is None else ds.to(residual_in_dtype)), dw, db


def _forward_tangent(s, weight, nd: int, eps: float, weight_offset: float, is_rms: bool, x_dtype, ds, dw, db):
    """y's tangent (forward-mode AD) from the tangents of s (``ds``), the weight (``dw``) and the bias (``db``), each
    None when it has none, as PyTorch operations: ẏ = rstd·(ṡ − mean(ṡ) − x̂·mean(ṡ·x̂))·(weight + weight_offset) +
    ẇ·x̂ + ḃ (RMS: without mean(ṡ)), in x's dtype."""
    xhat, rstd, acc, cols, _ = _row_stats(s, nd, eps, is_rms)
    t = torch.zeros_like(xhat)
    if ds is not None:
        u = _through_xhat(ds.to(acc), xhat, rstd, cols, is_rms)
        t = t + (u if weight is None else u * (weight.to(acc) + weight_offset))
    if dw is not None:
        t = t + dw.to(acc) * xhat
    if db is not None:
        t = t + db.to(acc)
    return t.to(x_dtype)


# ----------------------------------------------------------------------------- custom ops (torch.compile)


def _empty(x: torch.Tensor) -> torch.Tensor:
    return x.new_empty((0,))


def _check_kernel_device(op: str, t: torch.Tensor) -> None:
    """The custom ops run the Triton kernels only; ``fastnorm.layer_norm``/``rms_norm`` route other tensors to
    PyTorch's implementation before reaching them, so a direct call with such a tensor gets a clear error. Fake
    tensors (tracing, where nothing launches) pass."""
    if not uses_triton(t) and not is_fake(t):
        raise RuntimeError(
            f"torch.ops.fastnorm.{op} runs fastnorm's Triton kernels: it needs CUDA tensors (or CPU tensors with "
            f"TRITON_INTERPRET=1), got a tensor on {t.device}; call fastnorm.layer_norm / fastnorm.rms_norm, "
            f"which use PyTorch's implementation there"
        )


@torch.library.triton_op("fastnorm::norm_fwd", mutates_args=())
def norm_fwd_op(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    residual: torch.Tensor | None,
    normalized_ndim: int,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    residual_dtype: torch.dtype | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm/RMSNorm forward: ``(y, residual_out, mean, rstd)``; absent ones are empty tensors."""
    _check_kernel_device("norm_fwd", x)
    y, res_out, mean, rstd = _forward(x, weight, bias, residual, normalized_ndim, eps, weight_offset, is_rms,
                                      residual_dtype, True, True)
    return (y, _empty(x) if res_out is None else res_out, _empty(rstd) if mean is None else mean, rstd)


@torch.library.triton_op("fastnorm::norm_bwd", mutates_args=())
def norm_bwd_op(
    dy: torch.Tensor,
    dres_out: torch.Tensor | None,
    s: torch.Tensor,
    weight: torch.Tensor | None,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    normalized_ndim: int,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    bias_dtype: torch.dtype | None,
    x_dtype: torch.dtype,
    residual_in_dtype: torch.dtype | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm/RMSNorm backward: ``(dx, dresidual, dweight, dbias)``; absent ones are empty tensors."""
    _check_kernel_device("norm_bwd", s)
    dx, dres, dw, db = _backward(dy, dres_out, s, weight, None if is_rms else mean, rstd, normalized_ndim, eps,
                                 weight_offset, is_rms, bias_dtype, x_dtype, residual_in_dtype, True)
    return (dx, _empty(dx) if dres is None else dres, _empty(dx) if dw is None else dw,
            _empty(dx) if db is None else db)


def _op_setup_context(ctx, inputs, output):
    x, weight, bias, residual, nd, eps, weight_offset, is_rms, _rdt = inputs
    _y, res_out, mean, rstd = output
    ctx.save_for_backward(x if residual is None else res_out, weight, mean, rstd)
    ctx.meta = (nd, eps, weight_offset, is_rms, None if bias is None else bias.dtype, x.dtype,
                None if residual is None else residual.dtype)
    ctx.set_materialize_grads(False)


def _op_backward(ctx, dy, dres_out, _dmean, _drstd):
    s, weight, mean, rstd = ctx.saved_tensors
    nd, eps, weight_offset, is_rms, bias_dtype, x_dtype, res_dtype = ctx.meta
    # create_graph=True, vmapped gradients (compiled graphs never take this: aot_autograd refuses double backward and
    # does not vmap a backward)
    if backward_in_torch_ops(dy, dres_out):
        dx, dres, dw, db = _backward_differentiable(dy, dres_out, s, weight, nd, eps, weight_offset, is_rms,
                                                    bias_dtype, x_dtype, res_dtype)
        return dx, dw, db, dres, None, None, None, None, None
    if dy is None:
        dy = torch.zeros(s.shape, dtype=x_dtype, device=s.device)
    dx, dres, dw, db = torch.ops.fastnorm.norm_bwd(dy, dres_out, s, weight, mean, rstd, nd, eps, weight_offset,
                                                   is_rms, bias_dtype, x_dtype, res_dtype)
    return (dx, None if weight is None else dw, None if bias_dtype is None else db,
            None if res_dtype is None else dres, None, None, None, None, None)


torch.library.register_autograd("fastnorm::norm_fwd", _op_backward, setup_context=_op_setup_context)


# ----------------------------------------------------------------------------- eager autograd


class _NormFunction(torch.autograd.Function):
    """Eager twin of ``norm_fwd``'s registered autograd: same launchers, no dispatcher round trip.

    The non-tensor arguments travel as one tuple ``(nd, eps, weight_offset, is_rms, residual_dtype)``:
    ``Function.apply`` inspects every argument in Python, so fewer arguments cost less host time.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, residual, args):
        nd, eps, weight_offset, is_rms, residual_dtype = args
        y, res_out, mean, rstd = _forward(x, weight, bias, residual, nd, eps, weight_offset, is_rms, residual_dtype,
                                          True, False)
        ctx.save_for_backward(x if residual is None else res_out, weight, mean, rstd)
        if forward_ad_active():
            ctx.save_for_forward(x if residual is None else res_out, weight)
        ctx.meta = (nd, eps, weight_offset, is_rms, None if bias is None else bias.dtype, x.dtype,
                    None if residual is None else residual.dtype)
        ctx.set_materialize_grads(False)
        if residual is None:
            return y
        return y, res_out

    @staticmethod
    def jvp(ctx, dx, dw, db, dres, _dargs):
        s, weight = ctx.saved_tensors
        nd, eps, weight_offset, is_rms, _, x_dtype, res_dtype = ctx.meta
        ds = dx
        if dres is not None:  # s = x + residual, added in float32 (float64) as the forward adds it
            wide = torch.promote_types(torch.promote_types(torch.float32, s.dtype), x_dtype)
            ds = dres.to(wide) if dx is None else dx.to(wide) + dres.to(wide)
        dy = _forward_tangent(s, weight, nd, eps, weight_offset, is_rms, x_dtype, ds, dw, db)
        if res_dtype is None:
            return dy
        return dy, (torch.zeros_like(s) if ds is None else ds.to(s.dtype))

    @staticmethod
    def backward(ctx, dy, dres_out=None):
        s, weight, mean, rstd = ctx.saved_tensors
        nd, eps, weight_offset, is_rms, bias_dtype, x_dtype, res_dtype = ctx.meta
        if backward_in_torch_ops(dy, dres_out):  # create_graph=True, dual inputs, vmapped gradients
            dx, dres, dw, db = _backward_differentiable(dy, dres_out, s, weight, nd, eps, weight_offset, is_rms,
                                                        bias_dtype, x_dtype, res_dtype)
        else:
            dx, dres, dw, db = _backward(dy, dres_out, s, weight, mean, rstd, nd, eps, weight_offset, is_rms,
                                         bias_dtype, x_dtype, res_dtype, False)
        return dx, dw, db, dres, None


_apply_norm = apply_function(_NormFunction)


def _norm_triton(x, weight, bias, residual, nd, eps, weight_offset, is_rms, residual_dtype, compiling):
    # The kernels index weight and bias as dense vectors; a strided or expanded view is made dense here,
    # inside the autograd graph, so its gradient still flows back to the view.
    if weight is not None and not weight.is_contiguous():
        weight = weight.contiguous()
    if bias is not None and not bias.is_contiguous():
        bias = bias.contiguous()
    if compiling:
        y, res_out, _, _ = torch.ops.fastnorm.norm_fwd(x, weight, bias, residual, nd, eps, weight_offset, is_rms,
                                                       residual_dtype)
        return y if residual is None else (y, res_out)
    if needs_autograd(x, weight, bias, residual):
        return _apply_norm(x, weight, bias, residual, (nd, eps, weight_offset, is_rms, residual_dtype))
    y, res_out, _, _ = _forward(x, weight, bias, residual, nd, eps, weight_offset, is_rms, residual_dtype, False,
                                False)
    return y if residual is None else (y, res_out)


# ----------------------------------------------------------------------------- PyTorch path (CPU)


def _norm_torch(x, shape, weight, bias, residual, eps, weight_offset, is_rms, residual_dtype):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    res_out = None
    s = x
    if residual is not None:
        acc = torch.promote_types(acc, residual.dtype)
        res_out = (x.to(acc) + residual.to(acc)).to(residual_dtype or x.dtype)
        s = res_out
    simple = (s.dtype == x.dtype and weight_offset == 0.0 and (weight is None or weight.dtype == x.dtype)
              and (bias is None or bias.dtype == x.dtype))
    if simple:
        y = F.rms_norm(s, shape, weight, eps) if is_rms else F.layer_norm(s, shape, weight, bias, eps)
    else:
        y = F.rms_norm(s.to(acc), shape, None, eps) if is_rms else F.layer_norm(s.to(acc), shape, None, None, eps)
        if weight is not None:
            y = y * (weight.to(torch.float32).to(acc) + weight_offset)
        if bias is not None:
            y = y + bias.to(acc)
        y = y.to(x.dtype)
    return y if residual is None else (y, res_out)


# ----------------------------------------------------------------------------- public functions


def layer_norm(
    x: torch.Tensor,
    normalized_shape: int | Sequence[int],
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
    *,
    residual: torch.Tensor | None = None,
    residual_dtype: torch.dtype | None = None,
    weight_offset: float = 0.0,
):
    """LayerNorm over the trailing ``normalized_shape`` dims, as ``torch.nn.functional.layer_norm``.

    ``y = (s - mean) / sqrt(var + eps) * (weight + weight_offset) + bias`` per row, with the biased
    variance, where ``s = x``, or ``s = x + residual`` rounded to ``residual_dtype`` (default x's dtype)
    when ``residual`` is given; then ``(y, s)`` is returned (the pre-norm transformer pattern). The
    effective weight is formed in float32; statistics accumulate in float32 (float64 for float64 input).
    ``y`` has x's dtype. Differentiable in x, weight, bias and residual. ``weight``/``bias`` may be in
    x's dtype or float32.
    """
    compiling = torch.compiler.is_compiling()
    shape = _check_args(x, normalized_shape, weight, bias, residual, residual_dtype, weight_offset, compiling)
    if not compiling:  # eps may be a symbolic float under dynamic shapes
        eps = check_eps(eps)
        weight_offset = float(weight_offset)
    if not uses_triton(x):
        return _norm_torch(x, shape, weight, bias, residual, eps, weight_offset, False, residual_dtype)
    return _norm_triton(x, weight, bias, residual, len(shape), eps, weight_offset, False, residual_dtype, compiling)


def rms_norm(
    x: torch.Tensor,
    normalized_shape: int | Sequence[int],
    weight: torch.Tensor | None = None,
    eps: float | None = None,
    *,
    residual: torch.Tensor | None = None,
    residual_dtype: torch.dtype | None = None,
    weight_offset: float = 0.0,
):
    """RMSNorm over the trailing ``normalized_shape`` dims, as ``torch.nn.functional.rms_norm``.

    ``y = s / sqrt(mean(s²) + eps) * (weight + weight_offset)`` per row (``s`` as in :func:`layer_norm`);
    ``eps=None`` means ``torch.finfo(x.dtype).eps``. Returns ``y``, or ``(y, s)`` with a residual.
    """
    compiling = torch.compiler.is_compiling()
    shape = _check_args(x, normalized_shape, weight, None, residual, residual_dtype, weight_offset, compiling)
    if eps is None:
        eps = _FINFO_EPS[x.dtype]
    elif not compiling:  # eps may be a symbolic float under dynamic shapes, hence not while compiling
        eps = check_eps(eps)
    if not compiling:
        weight_offset = float(weight_offset)
    if not uses_triton(x):
        return _norm_torch(x, shape, weight, None, residual, eps, weight_offset, True, residual_dtype)
    return _norm_triton(x, weight, None, residual, len(shape), eps, weight_offset, True, residual_dtype, compiling)
