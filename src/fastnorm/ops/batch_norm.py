"""BatchNorm: argument checks, the autograd op, the CPU fallback, and the stage functions of SyncBatchNorm.

``batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5,
*, use_global_stats=False, fix_gamma=False, activation=None, z=None, num_batches_tracked=None)``:
torch's ``F.batch_norm`` for x of shape (N, C, *) plus the options below; y has x's shape, dtype and
memory layout.

* Batch statistics are used when ``training and not use_global_stats``, or when there are no running
  statistics (``running_mean is None``): mean and biased variance per channel; in training the running
  statistics (when given) are updated in place with the unbiased variance:
  ``r ← (1 − f)·r + f·batch`` with ``f = momentum``, or with ``momentum=None`` ``f = 1/num_batches_tracked``
  read on the device (the caller increments the counter first, as ``torch.nn.BatchNorm2d`` does).
  Nothing is read back to the host, so a training step is CUDA-graph capturable.
* Otherwise (evaluation, or ``use_global_stats=True`` in training) the running statistics normalize and
  are left untouched; the backward is then the frozen one (statistics are constants).
* ``y = act(w·(x − mean)·invstd + b + z)``, ``invstd = 1/sqrt(var + eps)``, with ``w = 1`` under
  ``fix_gamma`` (and its gradient 0) or without a weight, ``b = 0`` without a bias, ``act`` identity or
  ReLU (``activation="relu"``), ``z`` an optional residual of x's shape.
* Backward, with ``g = dy`` zeroed where the ReLU output is ``<= 0``: batch statistics
  ``dx = w·invstd·(g − Σg/n − x̂·Σg·x̂/n)``; running statistics ``dx = w·invstd·g``; ``dw = Σg·x̂``,
  ``db = Σg``, ``dz = g``. Parameter gradients are deterministic (no float atomics). With ``create_graph=True``
  the backward runs as PyTorch operations (``_backward_differentiable``), so its gradients can be differentiated
  again; forward-mode AD forms y's tangent with PyTorch operations too (``_forward_tangent``).
* An empty batch (N·prod(spatial) = 0) gives an empty y, zero parameter gradients and unchanged running
  statistics (the module still increments ``num_batches_tracked``, as torch and the reference do).
  One value per channel with batch statistics raises torch's ValueError.

Where it runs: CUDA tensors (and CPU tensors under ``TRITON_INTERPRET=1``) take the Triton kernels of
``fastnorm.kernels.batch_norm``; other CPU tensors take PyTorch operations with the same semantics
(accumulating in float64). Inputs are read in their own layout — NCHW-contiguous or channels-last
(``channels_last``, ``channels_last_3d``, (N, C) rows, (N, C, L) with channel stride 1); any other
strides cost one ``.contiguous()`` copy of x (and y is then copied back into x's layout). ``dy``, ``z``
in another layout than x are copied into x's.

Stage functions (SyncBatchNorm's autograd Function is built from them; they are not differentiable themselves:
the kernels' outputs carry no autograd history; each dispatches to the Triton kernels when
``uses_triton(x)`` and to torch operations otherwise; no host synchronization; all statistics in fp32,
fp64 for fp64 input):

* ``local_stats(x) -> (mean, m2)``: per-channel mean and M2 = Σ(x − mean)² of x (N, C, *) read in its
  layout; the count is ``x.numel() // C`` (known on the host). Empty x gives zeros.
* ``merge_stats(counts, means, m2s) -> (count, mean, var)``: counts [R], means/m2s [R, C]; Chan's merge
  folded over r = 0..R−1 on device (bitwise the same on every rank given the same inputs; shards of count
  0 are exact no-ops); count a 0-dim device tensor (the total), var = M2/count (biased; 0 when empty).
* ``update_running_stats_(running_mean, running_var, mean, var, count, momentum,
  num_batches_tracked=None)``: in place, ``r ← (1 − f)·r + f·(mean, var·count/(count − 1))``, count a
  number or a device scalar, ``f = momentum`` or, for ``momentum=None``, ``1/num_batches_tracked`` read
  on device; unchanged when count is 0.
* ``apply(x, mean, invstd, weight, bias, *, z=None, activation=None) -> y``: y = act(w·(x − mean)·invstd
  + b + z) in x's layout.
* ``backward_sums(dy, x, mean, invstd, *, y=None, activation=None) -> (sum_dy, sum_dy_xhat)``: Σg and
  Σg·x̂ per channel, g = dy masked by ``y > 0`` with ReLU (``y`` is the forward's output).
* ``backward_dx(dy, x, mean, invstd, weight, sum_dy, sum_dy_xhat, count, *, y=None, activation=None,
  need_dz=True) -> (dx, dz)``: ``dx = w·invstd·(g − sum_dy/count − x̂·sum_dy_xhat/count)`` with count a
  number or a device scalar; ``dz = g`` when ``need_dz`` (``dy`` itself without an activation), else None.
"""

from __future__ import annotations

import math

import torch

from .._runtime import apply_function, backward_in_torch_ops, forward_ad_active, needs_autograd, uses_triton, vmapped
from .._validate import FLOAT_DTYPES, check_eps, check_float, check_momentum, check_same_device
from ..kernels import batch_norm as K
from ..kernels._replay import Programs

__all__ = [
    "batch_norm",
    "local_stats",
    "merge_stats",
    "update_running_stats_",
    "apply",
    "backward_sums",
    "backward_dx",
]

_ACTIVATIONS = (None, "relu")
#: The eager kernel launches of the forward and the backward, replayed per signature (``kernels._replay``);
#: and SyncBatchNorm's through the symmetric-memory exchange (``_forward_peers``, ``_backward_peers_dx``).
_FORWARDS, _BACKWARDS = Programs(), Programs()
_PEER_FORWARDS, _PEER_BACKWARDS = Programs(), Programs()
ONE_VALUE_MESSAGE = "Expected more than 1 value per channel when training, got input size"


# ----------------------------------------------------------------------------------------------- checks


def _check_channels(name: str, t: torch.Tensor | None, c: int, x: torch.Tensor) -> None:
    if t is None:
        return
    check_float(name, t)
    if t.dim() != 1 or t.shape[0] != c:
        raise ValueError(f"{name} must have shape ({c},), one value per channel of the input (C={c} at dim 1), "
                         f"got shape {tuple(t.shape)}")
    check_same_device(name, t, x)


def _check_per_channel(c: int, x: torch.Tensor, weight, bias, running_mean, running_var) -> None:
    """``_check_channels`` of batch_norm's four per-channel tensors, with one cheap test for the common case."""
    dev = x.device
    for t in (weight, bias, running_mean, running_var):
        if t is not None and not (isinstance(t, torch.Tensor) and t.dtype in FLOAT_DTYPES and t.shape == (c,)
                                  and t.device == dev):
            break
    else:
        return
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        _check_channels(name, t, c, x)


def _check_x(x: torch.Tensor, name: str = "x") -> int:
    check_float(name, x)
    if x.dim() < 2:
        raise ValueError(f"{name} must have at least 2 dims (N, C, *), got {x.dim()}D input")
    if x.shape[1] == 0:
        raise ValueError(f"{name} must have at least one channel (dim 1), got shape {tuple(x.shape)}")
    return x.shape[1]


def _check_like(name: str, t: torch.Tensor | None, x: torch.Tensor) -> None:
    if t is None:
        return
    check_float(name, t)
    if t.shape != x.shape:
        raise ValueError(f"{name} must have the input's shape {tuple(x.shape)}, got {tuple(t.shape)}")
    check_same_device(name, t, x)


def _check_grad_args(dy: torch.Tensor, x: torch.Tensor, y: torch.Tensor | None, activation) -> tuple[int, bool]:
    """The backward stages' common checks -> (channels, ReLU fused): dy and y like x, y given with ReLU."""
    c = _check_x(x)
    _check_like("dy", dy, x)
    relu = _check_activation(activation)
    if relu and y is None:
        raise ValueError("activation='relu' needs y, the forward's output")
    _check_like("y", y, x)
    return c, relu


def _check_activation(activation) -> bool:
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be None or 'relu', got {activation!r}")
    return activation == "relu"


def _acc(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def _red_dims(x: torch.Tensor) -> list[int]:
    return [0, *range(2, x.dim())]


def _cv(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A per-channel vector shaped to broadcast against x (N, C, *)."""
    return v.reshape(1, -1, *([1] * (x.dim() - 2)))


def _c(t: torch.Tensor | None) -> torch.Tensor | None:
    """A per-channel vector the kernels can index densely (a strided view costs one small copy)."""
    return t if t is None or t.is_contiguous() else t.contiguous()


def _write_back(view: torch.Tensor, dense: torch.Tensor) -> None:
    """After a kernel updated ``dense = _c(view)`` in place, make the update reach a strided ``view``."""
    if dense is not view:
        view.copy_(dense)


def _back_to_x(t: torch.Tensor | None, xv: K.View, x: torch.Tensor) -> torch.Tensor | None:
    """A kernel output ``t`` written in the layout of ``xv.x``, in x's own layout (None stays None): ``t``
    itself, or one copy when x was read through a contiguous copy."""
    return t if t is None or xv.x is x else _like_x(t, x)


def _like_x(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``t`` (computed in any layout) in x's memory layout and dtype."""
    return torch.empty_like(x).copy_(t)


# ------------------------------------------------------------------------------------- implementations


def _empty_stats(x, running_mean, running_var, batch_stats, eps):
    c = x.shape[1]
    acc = _acc(x.dtype)
    if batch_stats:
        return (torch.zeros(c, dtype=acc, device=x.device),
                torch.full((c,), 1.0 / math.sqrt(eps) if eps > 0 else math.inf, dtype=acc, device=x.device))
    return running_mean.to(acc).clone(), torch.rsqrt(running_var.to(acc) + eps)


def _forward_impl(x, weight, bias, z, running_mean, running_var, nbt, batch_stats: bool, update: bool,
                  momentum: float | None, eps: float, fix_gamma: bool, relu: bool):
    """-> (y, shift, mean_rel (empty when 0), invstd); updates the running statistics when ``update``."""
    if x.numel() == 0:
        shift, rstd = _empty_stats(x, running_mean, running_var, batch_stats, eps)
        return torch.empty_like(x), shift, x.new_empty(0, dtype=_acc(x.dtype)), rstd
    if not uses_triton(x):
        return _forward_torch(x, weight, bias, z, running_mean, running_var, nbt, batch_stats, update, momentum,
                              eps, fix_gamma, relu)
    inputs = (x, weight, bias, z, running_mean, running_var, nbt)
    options = (batch_stats, update, momentum, eps, fix_gamma, relu)
    return _FORWARDS.run(options, inputs, lambda: _forward_triton(*inputs, *options))


def _forward_triton(x, weight, bias, z, running_mean, running_var, nbt, batch_stats: bool, update: bool,
                    momentum: float | None, eps: float, fix_gamma: bool, relu: bool):
    """``_forward_impl`` through the kernels (x not empty)."""
    xv = K.view(x)
    y = torch.empty_like(xv.x)
    zv = K.in_layout(z, xv.x) if z is not None else None
    weight, bias, rm, rv = _c(weight), _c(bias), _c(running_mean), _c(running_var)
    if batch_stats:
        shift, mrel, rstd = K.forward_train(xv, y, zv, weight, bias, rm if update else None, rv if update else None,
                                            nbt, momentum, eps, fix_gamma, relu)
        if update:
            _write_back(running_mean, rm)
            _write_back(running_var, rv)
    else:
        shift, rstd = K.apply(xv, y, zv, weight, bias, rm, None, rv, is_var=True, eps=eps, fix_gamma=fix_gamma,
                              relu=relu, save=True)
        mrel = x.new_empty(0, dtype=_acc(x.dtype))  # no mean relative to the shift: running stats are used
    y = _back_to_x(y, xv, x)
    return y, shift, mrel, rstd


def _forward_torch(x, weight, bias, z, running_mean, running_var, nbt, batch_stats, update, momentum, eps,
                   fix_gamma, relu):
    """The CPU implementation in torch operations, accumulating in float64."""
    acc = _acc(x.dtype)
    xa = x.to(torch.float64)
    if batch_stats:
        var, mean = torch.var_mean(xa, dim=_red_dims(x), correction=0)
        n = x.numel() // x.shape[1]
        if update:
            f = (1.0 / nbt.to(torch.float64)) if momentum is None else momentum
            with torch.no_grad():
                running_mean.copy_((1 - f) * running_mean.to(torch.float64) + f * mean)
                running_var.copy_((1 - f) * running_var.to(torch.float64) + f * var * (n / (n - 1)))
    else:
        mean = running_mean.to(torch.float64)
        var = running_var.to(torch.float64)
    rstd = torch.rsqrt(var + eps)
    scale = rstd if (weight is None or fix_gamma) else rstd * weight.to(torch.float64)
    y = (xa - _cv(mean, x)) * _cv(scale, x)
    if bias is not None:
        y = y + _cv(bias.to(torch.float64), x)
    if z is not None:
        y = y + z.to(torch.float64)
    if relu:
        y = torch.where(y < 0, 0.0, y)
    return _like_x(y, x), mean.to(acc), x.new_empty(0, dtype=acc), rstd.to(acc)


def _backward_impl(dy, x, y, weight, shift, mrel, rstd, batch_stats: bool, fix_gamma: bool, relu: bool,
                   need_dx: bool, need_dw: bool, need_db: bool, need_dz: bool, w_dtype, b_dtype):
    """-> (dx, dw, db, dz), each None when not needed (dz only with ReLU: otherwise it is dy itself)."""
    c = x.shape[1]
    need_dz = need_dz and relu
    needs = (need_dx, need_dw, need_db, need_dz)
    if x.numel() == 0:
        return _needed((torch.empty_like(x), torch.zeros(c, dtype=w_dtype, device=x.device),
                        torch.zeros(c, dtype=b_dtype, device=x.device), torch.empty_like(x)), needs)
    if not uses_triton(x):  # the CPU forward saves the mean itself as the shift
        return _backward_differentiable(dy, x, y, weight, shift, rstd, batch_stats, None, fix_gamma, relu, w_dtype,
                                        b_dtype, needs)
    dw = torch.empty(c, dtype=w_dtype, device=x.device) if need_dw else None
    db = torch.empty(c, dtype=b_dtype, device=x.device) if need_db else None
    inputs = (x, dy, y, weight, shift, mrel, rstd, dw, db)
    options = (batch_stats, fix_gamma, relu, need_dx, need_dz)
    return _BACKWARDS.run(options, inputs, lambda: _backward_triton(*inputs, *options))


def _backward_triton(x, dy, y, weight, shift, mrel, rstd, dw, db, batch_stats: bool, fix_gamma: bool, relu: bool,
                     need_dx: bool, need_dz: bool):
    """``_backward_impl`` through the kernels (x not empty; ``dw``, ``db`` allocated when needed)."""
    need_dw, need_db = dw is not None, db is not None
    xv = K.view(x)
    dyv = K.in_layout(dy, xv.x)
    yv = K.in_layout(y, xv.x) if relu else None
    dx = torch.empty_like(xv.x) if need_dx else None
    dz = torch.empty_like(xv.x) if need_dz and need_dx else None  # the kernels write dz = g beside dx only
    mrel_ = mrel if mrel.numel() else None
    w = _c(weight) if (weight is not None and not fix_gamma) else None
    common = dict(is_var=False, eps=0.0, fix_gamma=fix_gamma, relu=relu)
    if batch_stats and need_dx:
        K.backward("train", xv, dyv, yv, dx, dz, w, shift, mrel_, rstd, dw=dw, db=db, **common)
    elif need_dw or need_db:
        K.backward("frozen" if need_dx else "sums", xv, dyv, yv, dx, dz, w, shift, mrel_, rstd, dw=dw, db=db,
                   **common)
    elif need_dx:
        K.backward_dx(xv, dyv, yv, dx, dz, w, None, None, rstd, None, 0.0, train=False, **common)
    if need_dz and not need_dx:  # dz without dx: the masked dy
        dz = dy.masked_fill(y <= 0, 0)
    dx, dz = _back_to_x(dx, xv, x), _back_to_x(dz, xv, x)
    return dx, dw, db, dz


def _needed(grads, needs):
    """``grads`` with None where ``needs`` says a gradient is not needed."""
    return tuple(t if need else None for t, need in zip(grads, needs, strict=True))


def _normalized(x, shift, rstd, batch_stats: bool, eps: float | None):
    """``(x̂, invstd, acc, dims, n)`` as PyTorch operations, in float32 (float64 for float64 x, and on the CPU path, as
    its forward): with batch statistics and an ``eps`` the mean and invstd formed again from x (the saved ones are
    constants to autograd); else — running statistics, an empty batch, or ``eps`` None where the saved shift is the
    mean (the CPU path's first-order backward) — the saved ones. ``dims``: the reduced dims, ``n`` the values a
    channel."""
    acc = _acc(x.dtype) if uses_triton(x) else torch.float64
    dims = _red_dims(x)
    n = x.numel() // x.shape[1]
    xa = x.to(acc)
    if batch_stats and n > 0 and eps is not None:
        var, mean = torch.var_mean(xa, dim=dims, correction=0)
        invstd = torch.rsqrt(var + eps)
    else:
        mean, invstd = shift.to(acc), rstd.to(acc)
    return (xa - _cv(mean, x)) * _cv(invstd, x), invstd, acc, dims, n


def _through_xhat(v, xhat, scale, mean_v, mean_vxhat, x):
    """scale·(v − mean(v) − x̂·mean(v·x̂)) per channel, the means given: x̂'s derivative in x (times invstd, or
    w·invstd) applied to v — the backward's dx from g and the tangent from ẋ alike (the map is symmetric)."""
    return _cv(scale, x) * (v - _cv(mean_v, x) - xhat * _cv(mean_vxhat, x))


def _backward_differentiable(dy, x, y, weight, shift, rstd, batch_stats: bool, eps: float | None, fix_gamma: bool,
                             relu: bool, w_dtype, b_dtype, needs: tuple[bool, bool, bool, bool]):
    """``_backward_impl`` as PyTorch operations: the CPU path's backward (``eps`` None: the saved statistics), and
    where ``backward_in_torch_ops`` sends a backward: with ``create_graph=True`` (a gradient penalty, a Hessian-vector
    product) its results are then differentiable again, inside a dual level they carry tangents, under vmap they are
    batched — none of which the kernels' are (statistics: ``_normalized``). The ReLU mask comes from the saved y.
    -> (dx, dw, db, dz) as the module docstring states them (dz = dy itself without ReLU), None where ``needs`` (as
    ``_backward_impl``'s need_* flags) says a gradient is not needed."""
    need_dx, need_dw, need_db, need_dz = needs
    xhat, invstd, acc, dims, n = _normalized(x, shift, rstd, batch_stats, eps)
    g = dy.to(acc)
    if relu:
        g = torch.where(y <= 0, 0.0, g)
    sg, sgx = g.sum(dims), (g * xhat).sum(dims)
    dx = dz = None
    in_x_layout = (lambda t: t.to(x.dtype)) if vmapped(dy) else (lambda t: _like_x(t, x))  # batched: not copied
    if need_dx:
        k = invstd if (weight is None or fix_gamma) else invstd * weight.to(acc)
        if batch_stats:
            dx = in_x_layout(_through_xhat(g, xhat, k, sg / max(n, 1), sgx / max(n, 1), x))
        else:
            dx = in_x_layout(_cv(k, x) * g)
    if need_dz:
        dz = in_x_layout(g) if relu else dy
    dw = (torch.zeros_like(sgx) if fix_gamma else sgx).to(w_dtype) if need_dw else None
    return dx, dw, sg.to(b_dtype) if need_db else None, dz


def _forward_tangent(x, weight, y, shift, rstd, batch_stats: bool, eps: float, fix_gamma: bool, relu: bool, dx, dw,
                     db, dz):
    """y's tangent (forward-mode AD) from the tangents of x, the weight, the bias and z (each None when it has none),
    as PyTorch operations (statistics: ``_normalized``): x̂'s tangent is invstd·(ẋ − mean(ẋ) − x̂·mean(ẋ·x̂)) with
    batch statistics, invstd·ẋ with running ones; ẏ = w·that + ẇ·x̂ + ḃ + ż (w = 1 and no ẇ under fix_gamma or
    without a weight), zeroed where the ReLU output is <= 0; in x's dtype (autograd gives it y's layout)."""
    xhat, invstd, acc, dims, _ = _normalized(x, shift, rstd, batch_stats, eps)
    t = torch.zeros_like(xhat)
    if dx is not None:
        u = dx.to(acc)
        u = _through_xhat(u, xhat, invstd, u.mean(dims), (u * xhat).mean(dims), x) if batch_stats \
            else u * _cv(invstd, x)
        t = t + (u if (weight is None or fix_gamma) else u * _cv(weight.to(acc), x))
    if dw is not None and not fix_gamma:
        t = t + _cv(dw.to(acc), x) * xhat
    if db is not None:
        t = t + _cv(db.to(acc), x)
    if dz is not None:
        t = t + dz.to(acc)
    if relu:
        t = torch.where(y <= 0, 0.0, t)
    return t.to(x.dtype)  # not copied into x's layout: under vmap (a forward-mode Jacobian) t is batched, x not


# ---------------------------------------------------------------------------------- custom ops / autograd

@torch.library.custom_op("fastnorm::batch_norm_fwd", mutates_args=())
def _fwd_op(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, z: torch.Tensor | None,
            running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
            num_batches_tracked: torch.Tensor | None, batch_stats: bool, update: bool, momentum: float,
            momentum_none: bool, eps: float, fix_gamma: bool, relu: bool
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Functional form for torch.compile: -> (y, shift, mean_rel, invstd, new_running_mean, new_running_var),
    the last two empty without an update (the caller copies them into the buffers)."""
    rm = running_mean.clone() if update else running_mean
    rv = running_var.clone() if update else running_var
    y, shift, mrel, rstd = _forward_impl(x, weight, bias, z, rm, rv, num_batches_tracked, batch_stats, update,
                                         None if momentum_none else momentum, eps, fix_gamma, relu)
    return y, shift, mrel, rstd, (rm if update else x.new_empty(0)), (rv if update else x.new_empty(0))


@_fwd_op.register_fake
def _(x, weight, bias, z, running_mean, running_var, num_batches_tracked, batch_stats, update, momentum,
      momentum_none, eps, fix_gamma, relu):
    c = x.shape[1]
    acc = _acc(x.dtype)
    rel = c if (batch_stats and uses_triton(x) and x.numel() > 0) else 0
    return (torch.empty_like(x), x.new_empty(c, dtype=acc), x.new_empty(rel, dtype=acc),
            x.new_empty(c, dtype=acc), torch.empty_like(running_mean) if update else x.new_empty(0),
            torch.empty_like(running_var) if update else x.new_empty(0))


@torch.library.custom_op("fastnorm::batch_norm_bwd", mutates_args=())
def _bwd_op(dy: torch.Tensor, x: torch.Tensor, y: torch.Tensor | None, weight: torch.Tensor | None,
            shift: torch.Tensor, mrel: torch.Tensor, rstd: torch.Tensor, batch_stats: bool, fix_gamma: bool,
            relu: bool, need_dx: bool, need_dw: bool, need_db: bool, need_dz: bool, w_dtype: torch.dtype,
            b_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    dx, dw, db, dz = _backward_impl(dy, x, y, weight, shift, mrel, rstd, batch_stats, fix_gamma, relu, need_dx,
                                    need_dw, need_db, need_dz, w_dtype, b_dtype)
    return tuple(x.new_empty(0) if t is None else t for t in (dx, dw, db, dz))


@_bwd_op.register_fake
def _(dy, x, y, weight, shift, mrel, rstd, batch_stats, fix_gamma, relu, need_dx, need_dw, need_db, need_dz,
      w_dtype, b_dtype):
    c = x.shape[1]
    return (torch.empty_like(x) if need_dx else x.new_empty(0), x.new_empty(c, dtype=w_dtype) if need_dw else
            x.new_empty(0), x.new_empty(c, dtype=b_dtype) if need_db else x.new_empty(0),
            torch.empty_like(x) if (need_dz and relu) else x.new_empty(0))


def _grads(ctx, dy):
    x, weight, y, shift, mrel, rstd = ctx.saved_tensors
    need_dx, need_dw, need_db, need_dz = ctx.needs_input_grad[:4]
    need_dw = need_dw and weight is not None
    w_dtype = weight.dtype if weight is not None else x.dtype
    # create_graph=True, dual inputs (forward-over-reverse), vmapped gradients (compiled graphs never take this:
    # aot_autograd refuses the first two and does not vmap a backward)
    if backward_in_torch_ops(dy):
        return _backward_differentiable(dy, x, y, weight, shift, rstd, ctx.batch_stats, ctx.eps, ctx.fix_gamma,
                                        ctx.relu, w_dtype, ctx.b_dtype, (need_dx, need_dw, need_db, need_dz))
    args = (dy, x, y if ctx.relu else None, weight, shift, mrel, rstd, ctx.batch_stats, ctx.fix_gamma, ctx.relu,
            need_dx, need_dw, need_db, need_dz, w_dtype, ctx.b_dtype)
    if ctx.eager:
        dx, dw, db, dz = _backward_impl(*args)
    else:
        dx, dw, db, dz = (t if t.numel() or need else None
                          for t, need in zip(_bwd_op(*args), (need_dx, need_dw, need_db, need_dz and ctx.relu),
                                             strict=True))
    if need_dz and not ctx.relu:
        dz = dy
    return dx, (dw if need_dw else None), (db if need_db else None), (dz if need_dz else None)


def _setup_context(ctx, inputs, output):
    x, weight, bias, z, _, _, _, batch_stats, _, _, _, eps, fix_gamma, relu = inputs
    y, shift, mrel, rstd, _, _ = output
    ctx.save_for_backward(x, weight, y if relu else None, shift, mrel, rstd)
    ctx.batch_stats, ctx.fix_gamma, ctx.relu, ctx.eager, ctx.eps = batch_stats, fix_gamma, relu, False, eps
    ctx.b_dtype = bias.dtype if bias is not None else x.dtype


def _op_backward(ctx, dy, _dshift, _dmrel, _drstd, _drm, _drv):
    dx, dw, db, dz = _grads(ctx, dy)
    return dx, dw, db, dz, None, None, None, None, None, None, None, None, None, None


torch.library.register_autograd("fastnorm::batch_norm_fwd", _op_backward, setup_context=_setup_context)


class _BatchNormFunction(torch.autograd.Function):
    """Eager path: the same implementation without the dispatcher's per-call cost. The arguments that take
    no gradient travel as one tuple ``(running_mean, running_var, nbt, batch_stats, update, momentum, eps,
    fix_gamma, relu)``: ``Function.apply`` inspects every argument in Python, so fewer cost less host time."""

    @staticmethod
    def forward(ctx, x, weight, bias, z, rest):
        running_mean, running_var, nbt, batch_stats, update, momentum, eps, fix_gamma, relu = rest
        y, shift, mrel, rstd = _forward_impl(x, weight, bias, z, running_mean, running_var, nbt, batch_stats,
                                             update, momentum, eps, fix_gamma, relu)
        ctx.save_for_backward(x, weight, y if relu else None, shift, mrel, rstd)
        if forward_ad_active():
            ctx.save_for_forward(x, weight, y if relu else None, shift, rstd)
        ctx.batch_stats, ctx.fix_gamma, ctx.relu, ctx.eager, ctx.eps = batch_stats, fix_gamma, relu, True, eps
        ctx.b_dtype = bias.dtype if bias is not None else x.dtype
        return y

    @staticmethod
    def jvp(ctx, dx, dw, db, dz, _drest):
        x, weight, y, shift, rstd = ctx.saved_tensors
        return _forward_tangent(x, weight, y, shift, rstd, ctx.batch_stats, ctx.eps, ctx.fix_gamma, ctx.relu, dx, dw,
                                db, dz)

    @staticmethod
    def backward(ctx, dy):
        dx, dw, db, dz = _grads(ctx, dy)
        return dx, dw, db, dz, None


_apply_batch_norm = apply_function(_BatchNormFunction)


# ------------------------------------------------------------------------------------------- public op


def batch_norm(x: torch.Tensor, running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
               weight: torch.Tensor | None = None, bias: torch.Tensor | None = None, training: bool = False,
               momentum: float | None = 0.1, eps: float = 1e-5, *, use_global_stats: bool = False,
               fix_gamma: bool = False, activation: str | None = None, z: torch.Tensor | None = None,
               num_batches_tracked: torch.Tensor | None = None) -> torch.Tensor:
    """BatchNorm of x (N, C, *) with torch's ``F.batch_norm`` semantics and fastnorm's options (see the
    module docstring). ``num_batches_tracked`` is needed only for ``momentum=None`` with an update."""
    c = _check_x(x)
    _check_per_channel(c, x, weight, bias, running_mean, running_var)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must both be tensors or both be None")
    _check_like("z", z, x)
    relu = _check_activation(activation)
    compiling = torch.compiler.is_compiling()
    if not compiling:  # under dynamic shapes eps/momentum may be symbolic floats
        eps = check_eps(eps)
        momentum = check_momentum(momentum)
    if use_global_stats and running_mean is None:
        raise ValueError("use_global_stats=True needs running_mean and running_var")
    batch_stats = (bool(training) and not use_global_stats) or running_mean is None
    update = bool(training) and batch_stats and running_mean is not None
    if update and momentum is None:
        if num_batches_tracked is None:
            raise ValueError("momentum=None (cumulative average) needs num_batches_tracked, the already "
                             "incremented count of batches")
        check_same_device("num_batches_tracked", num_batches_tracked, x)
    if batch_stats and x.numel() // c == 1:
        raise ValueError(f"{ONE_VALUE_MESSAGE} {x.size()}")
    nbt = num_batches_tracked if (update and momentum is None) else None
    if compiling:
        y, _, _, _, new_rm, new_rv = _fwd_op(x, weight, bias, z, running_mean, running_var, nbt, batch_stats, update,
                                             0.0 if momentum is None else momentum, momentum is None, eps,
                                             fix_gamma, relu)
        if update:
            with torch.no_grad():
                running_mean.copy_(new_rm)
                running_var.copy_(new_rv)
        return y
    if needs_autograd(x, weight, bias, z):
        return _apply_batch_norm(x, weight, bias, z, (running_mean, running_var, nbt, batch_stats, update, momentum,
                                                      eps, fix_gamma, relu))
    # Nothing to differentiate (inference, torch.no_grad()): no autograd Function and no saved tensors.
    return _forward_impl(x, weight, bias, z, running_mean, running_var, nbt, batch_stats, update, momentum, eps,
                         fix_gamma, relu)[0]


# ------------------------------------------------------------------------------------------ stage functions


def local_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel (mean, M2) of x (N, C, *) in fp32 (fp64 for fp64 x); zeros for an empty x."""
    c = _check_x(x)
    packed = _local_stats(x, c)
    return packed[:c], packed[c:2 * c]


def _local_stats(x: torch.Tensor, c: int, out: torch.Tensor | None = None) -> torch.Tensor:
    """Statistics of an already checked x packed as ``[mean (C) | M2 (C) | count]`` in the accumulation
    dtype: SyncBatchNorm's all-gather buffer, written by one launch (into ``out``, dense [2C + 1], when
    given)."""
    acc = _acc(x.dtype)
    if x.numel() == 0:
        return x.new_zeros(2 * c + 1, dtype=acc) if out is None else out.zero_()
    if uses_triton(x):
        return K.stats(K.view(x), out)
    var, mean = torch.var_mean(x.to(torch.float64), dim=_red_dims(x), correction=0)
    n = x.numel() // c
    packed = torch.cat((mean, var * n, mean.new_full((1,), float(n)))).to(acc)
    return packed if out is None else out.copy_(packed)


def merge_stats(counts: torch.Tensor, means: torch.Tensor, m2s: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Chan's merge of R shards folded in rank order, on device -> (count (0-dim), mean [C], biased var [C])."""
    for name, t in (("counts", counts), ("means", means), ("m2s", m2s)):
        check_float(name, t)
    if means.dim() != 2 or m2s.shape != means.shape or counts.shape != (means.shape[0],):
        raise ValueError(f"merge_stats needs counts [R] and means, m2s [R, C]; got {tuple(counts.shape)}, "
                         f"{tuple(means.shape)}, {tuple(m2s.shape)}")
    check_same_device("counts", counts, means)
    check_same_device("m2s", m2s, means)
    return _merge_stats(counts, means, m2s.to(means.dtype), None)[:3]


def _unit_cols(t: torch.Tensor) -> torch.Tensor:
    """``t`` [R, C] with unit column stride: itself (any row stride), else one copy."""
    return t if t.shape[1] <= 1 or t.stride(1) == 1 else t.contiguous()


def _merge_stats(counts: torch.Tensor, means: torch.Tensor, m2s: torch.Tensor, eps: float | None,
                 running: tuple | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``merge_stats`` of checked inputs (m2s in means' dtype; row-strided views are read in place), and
    invstd = 1/sqrt(var + eps) computed in the same launch when ``eps`` is given (else None). ``running``:
    ``(running_mean, running_var, momentum, num_batches_tracked)`` to update as ``update_running_stats_``
    does, in the same launch (SyncBatchNorm's forward)."""
    if uses_triton(means):
        if running is not None:
            rm, rv, momentum, nbt = running
            drm, drv = _c(rm), _c(rv)
            out = K.merge_stats(counts.to(means.dtype), _unit_cols(means), _unit_cols(m2s), eps, drm, drv, momentum,
                                nbt)
            _write_back(rm, drm)
            _write_back(rv, drv)
            return out
        return K.merge_stats(counts.to(means.dtype), _unit_cols(means), _unit_cols(m2s), eps)
    n = torch.zeros((), dtype=means.dtype, device=means.device)
    mean = torch.zeros_like(means[0])
    m2 = torch.zeros_like(means[0])
    for r in range(means.shape[0]):
        nb = counts[r]
        tot = n + nb
        w = nb / torch.where(tot > 0, tot, 1.0)
        delta = means[r] - mean
        take = nb > 0
        first = n == 0
        mean = torch.where(take, torch.where(first, means[r], mean + delta * w), mean)
        m2 = torch.where(take, torch.where(first, m2s[r], m2 + m2s[r] + delta * delta * (n * w)), m2)
        n = tot
    var = torch.where(n > 0, m2 / torch.where(n > 0, n, 1.0), 0.0)
    if running is not None:
        rm, rv, momentum, nbt = running
        _update_running_stats_(rm, rv, mean, var, n, momentum, nbt)
    return n, mean, var, (None if eps is None else torch.rsqrt(var + eps))


def _apply_peers(x, peers, weight, bias, z, relu: bool, eps: float, running: tuple | None = None):
    """SyncBatchNorm's forward after the statistics launch, with the symmetric-memory exchange: the apply
    launch merges the ranks' packed statistics from their symmetric buffers (``peers``:
    ``kernels.batch_norm.Peers``; CUDA; it runs for an empty x too), updates ``running`` (``(running_mean,
    running_var, momentum, num_batches_tracked)``) and writes y -> (y, count (0-dim), mean, invstd)."""
    xv = K.view(x)
    y = torch.empty_like(xv.x)
    rm = rv = momentum = nbt = None
    if running is not None:
        rm, rv, momentum, nbt = running
        drm, drv = _c(rm), _c(rv)
    count, mean, _, invstd = K.apply_peers(
        xv, y, K.in_layout(z, xv.x) if z is not None else None, _c(weight), _c(bias), peers, eps=eps, relu=relu,
        running_mean=None if running is None else drm, running_var=None if running is None else drv,
        momentum=momentum, nbt=nbt)
    if running is not None:
        _write_back(rm, drm)
        _write_back(rv, drv)
    return _back_to_x(y, xv, x), count, mean, invstd


def _forward_peers(x, weight, bias, z, running, row, peers, relu: bool, eps: float):
    """SyncBatchNorm's forward on one host (``fastnorm._symm_exchange``): this rank's packed statistics into
    ``row`` (its symmetric buffer's first 2C + 1 words), then ``_apply_peers`` -> (y, count, mean, invstd). The
    two launches are replayed per signature (``_PEER_FORWARDS``); the exchange's buffers are inputs of the key,
    ``peers``' numbers options. An empty x takes the full path (its statistics are zeroed by a torch op)."""
    c = x.shape[1]

    def launch():
        _local_stats(x, c, out=row)
        return _apply_peers(x, peers, weight, bias, z, relu, eps, running)

    if x.numel() == 0:
        return launch()
    rm, rv, momentum, nbt = running if running is not None else (None, None, None, None)
    inputs = (x, weight, bias, z, rm, rv, nbt, row, peers.ptrs, peers.flags)
    options = (relu, eps, momentum, peers.rank, peers.world, peers.flags_at, peers.sums_at)
    return _PEER_FORWARDS.run(options, inputs, launch)


def update_running_stats_(running_mean: torch.Tensor, running_var: torch.Tensor, mean: torch.Tensor,
                          var: torch.Tensor, count, momentum: float | None,
                          num_batches_tracked: torch.Tensor | None = None) -> None:
    """In place on device: r ← (1 − f)·r + f·(mean, var·count/(count − 1)); f = momentum or 1/num_batches_tracked
    (momentum None); unchanged when count is 0. ``count`` is a number or a device scalar tensor."""
    momentum = check_momentum(momentum)
    if momentum is None and num_batches_tracked is None:
        raise ValueError("momentum=None (cumulative average) needs num_batches_tracked")
    check_float("running_mean", running_mean)
    if running_mean.dim() != 1:
        raise ValueError(f"running_mean must be 1-D (C,), got shape {tuple(running_mean.shape)}")
    c = running_mean.shape[0]
    for name, t in (("running_var", running_var), ("mean", mean), ("var", var)):
        check_float(name, t)
        if t.shape != (c,):
            raise ValueError(f"{name} must have running_mean's shape ({c},), got {tuple(t.shape)}")
        check_same_device(name, t, running_mean)
    _check_count(count, running_mean)
    if num_batches_tracked is not None:
        check_same_device("num_batches_tracked", num_batches_tracked, running_mean)
    _update_running_stats_(running_mean, running_var, mean, var, count, momentum, num_batches_tracked)


def _check_count(count, ref: torch.Tensor) -> None:
    """``count``: a number, or a one-element tensor on ``ref``'s device."""
    if isinstance(count, torch.Tensor):
        if count.numel() != 1:
            raise ValueError(f"count must be a number or a one-element tensor, got shape {tuple(count.shape)}")
        check_same_device("count", count, ref)
    elif isinstance(count, bool) or not isinstance(count, (int, float)):
        raise TypeError(f"count must be a number or a one-element tensor, got {type(count).__name__}")


def _update_running_stats_(running_mean, running_var, mean, var, count, momentum, num_batches_tracked) -> None:
    """``update_running_stats_`` with checked arguments (SyncBatchNorm's forward)."""
    if uses_triton(running_mean):
        rm, rv = _c(running_mean), _c(running_var)
        K.update_running(rm, rv, _c(mean), _c(var), count, momentum, num_batches_tracked)
        _write_back(running_mean, rm)
        _write_back(running_var, rv)
        return
    n = torch.as_tensor(count, dtype=torch.float64, device=running_mean.device)
    f = (1.0 / num_batches_tracked.to(torch.float64)) if momentum is None else momentum
    with torch.no_grad():
        rm = (1 - f) * running_mean.to(torch.float64) + f * mean.to(torch.float64)
        rv = (1 - f) * running_var.to(torch.float64) + f * var.to(torch.float64) * (n / (n - 1))
        running_mean.copy_(torch.where(n > 0, rm, running_mean.to(torch.float64)))
        running_var.copy_(torch.where(n > 0, rv, running_var.to(torch.float64)))


def apply(x: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor, weight: torch.Tensor | None,
          bias: torch.Tensor | None, *, z: torch.Tensor | None = None, activation: str | None = None
          ) -> torch.Tensor:
    """y = act(w·(x − mean)·invstd + b + z), in x's layout."""
    c = _check_x(x)
    for name, t in (("mean", mean), ("invstd", invstd), ("weight", weight), ("bias", bias)):
        _check_channels(name, t, c, x)
    _check_like("z", z, x)
    return _apply(x, mean, invstd, weight, bias, z, _check_activation(activation))


def _apply(x, mean, invstd, weight, bias, z, relu: bool) -> torch.Tensor:
    """``apply`` with checked arguments (SyncBatchNorm's forward)."""
    if x.numel() == 0:
        return torch.empty_like(x)
    if not uses_triton(x):
        y, *_ = _forward_torch(x, weight, bias, z, mean, 1.0 / invstd.to(torch.float64) ** 2, None, False, False,
                               0.0, 0.0, False, relu)
        return y
    xv = K.view(x)
    y = torch.empty_like(xv.x)
    K.apply(xv, y, K.in_layout(z, xv.x) if z is not None else None, _c(weight), _c(bias), _c(mean), None, _c(invstd),
            is_var=False, eps=0.0, fix_gamma=False, relu=relu, save=False)
    return _back_to_x(y, xv, x)


def backward_sums(dy: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor, *,
                  y: torch.Tensor | None = None, activation: str | None = None
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σg, Σg·x̂) per channel, x̂ = (x − mean)·invstd, g = dy (zeroed where y <= 0 with ReLU)."""
    c, relu = _check_grad_args(dy, x, y, activation)
    for name, t in (("mean", mean), ("invstd", invstd)):
        _check_channels(name, t, c, x)
    sums = _backward_sums(dy, x, mean, invstd, y, relu)
    return sums[:c], sums[c:]


def _backward_sums(dy, x, mean, invstd, y, relu: bool, dw: torch.Tensor | None = None,
                   db: torch.Tensor | None = None) -> torch.Tensor:
    """``backward_sums`` with checked arguments, packed as one [2C] tensor ``[Σg | Σg·x̂]`` in the
    accumulation dtype (SyncBatchNorm sums it over the ranks as it is). ``dw``/``db`` (dense [C], any float
    dtype), when given, receive the same local sums Σg·x̂ and Σg from the same call."""
    c = x.shape[1]
    acc = _acc(x.dtype)
    if x.numel() == 0:
        sums = x.new_zeros(2 * c, dtype=acc)
    elif not uses_triton(x):
        g = dy.to(torch.float64)
        if relu:
            g = torch.where(y <= 0, 0.0, g)
        xh = (x.to(torch.float64) - _cv(mean.to(torch.float64), x)) * _cv(invstd.to(torch.float64), x)
        sums = torch.cat((g.sum(_red_dims(x)), (g * xh).sum(_red_dims(x)))).to(acc)
    else:
        xv = K.view(x)
        return K.backward("sums", xv, K.in_layout(dy, xv.x), K.in_layout(y, xv.x) if relu else None, None, None,
                          None, _c(mean), None, _c(invstd), is_var=False, eps=0.0, fix_gamma=False, relu=relu,
                          dw=dw, db=db)
    if dw is not None:
        dw.copy_(sums[c:])
    if db is not None:
        db.copy_(sums[:c])
    return sums


def backward_dx(dy: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                weight: torch.Tensor | None, sum_dy: torch.Tensor, sum_dy_xhat: torch.Tensor, count, *,
                y: torch.Tensor | None = None, activation: str | None = None, need_dz: bool = True
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """dx = w·invstd·(g − sum_dy/count − x̂·sum_dy_xhat/count) and dz = g (None unless ``need_dz``)."""
    c, relu = _check_grad_args(dy, x, y, activation)
    for name, t in (("mean", mean), ("invstd", invstd), ("weight", weight), ("sum_dy", sum_dy),
                    ("sum_dy_xhat", sum_dy_xhat)):
        _check_channels(name, t, c, x)
    _check_count(count, x)
    sums = torch.cat((sum_dy.to(_acc(x.dtype)), sum_dy_xhat.to(_acc(x.dtype))))
    return _backward_dx(dy, x, mean, invstd, weight, sums, count, y, relu, need_dz)


def _backward_dx(dy, x, mean, invstd, weight, sums, count, y, relu: bool, need_dz: bool
                 ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``backward_dx`` with checked arguments and the sums packed as one [2C] tensor ``[Σg | Σg·x̂]`` in the
    accumulation dtype, which the kernel reads as it is."""
    c = x.shape[1]
    if x.numel() == 0:
        return torch.empty_like(x), (torch.empty_like(x) if need_dz else None)
    dz_alias = need_dz and not relu
    if not uses_triton(x):
        g = dy.to(torch.float64)
        if relu:
            g = torch.where(y <= 0, 0.0, g)
        n = torch.as_tensor(count, dtype=torch.float64, device=x.device)
        k1 = invstd.to(torch.float64) if weight is None else invstd.to(torch.float64) * weight.to(torch.float64)
        xh = (x.to(torch.float64) - _cv(mean.to(torch.float64), x)) * _cv(invstd.to(torch.float64), x)
        sg, sgx = sums[:c].to(torch.float64), sums[c:].to(torch.float64)
        dx = _cv(k1, x) * (g - _cv(sg / n, x) - xh * _cv(sgx / n, x))
        dz = dy if dz_alias else (_like_x(g, x) if need_dz else None)
        return _like_x(dx, x), dz
    xv = K.view(x)
    dx = torch.empty_like(xv.x)
    dz = torch.empty_like(xv.x) if (need_dz and relu) else None
    if isinstance(count, torch.Tensor):
        count = count.reshape(())
    K.backward_dx(xv, K.in_layout(dy, xv.x), K.in_layout(y, xv.x) if relu else None, dx, dz, _c(weight), _c(mean),
                  None, _c(invstd), sums, count, train=True, is_var=False, eps=0.0, fix_gamma=False, relu=relu)
    dx, dz = _back_to_x(dx, xv, x), _back_to_x(dz, xv, x)
    return dx, (dy if dz_alias else dz)


def _backward_peers(dy, x, mean, invstd, weight, count, y, relu: bool, need_dz: bool, dw, db, peers
                    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """SyncBatchNorm's training backward on one host: sums, their exchange with the other ranks through the
    symmetric buffers of ``peers`` (``kernels.batch_norm.Peers``), and dx, in one launch that runs for an
    empty x too (it is this rank's part of the exchange). ``count``: the group's count, a 0-dim device tensor;
    ``dw``/``db`` (dense [C] or None) receive this rank's local sums Σg·x̂ and Σg. -> (dx, dz or None, the
    group's sums [2C])."""
    xv = K.view(x)
    dx = torch.empty_like(xv.x)
    dz = torch.empty_like(xv.x) if (need_dz and relu) else None
    sums = K.backward_peers(xv, K.in_layout(dy, xv.x), K.in_layout(y, xv.x) if relu else None, dx, dz, _c(weight),
                            _c(mean), _c(invstd), dw, db, count, peers, relu=relu)
    dx, dz = _back_to_x(dx, xv, x), _back_to_x(dz, xv, x)
    return dx, (dy if need_dz and not relu else dz), sums


def _backward_peers_dx(dy, x, mean, invstd, weight, count, y, relu: bool, need_dz: bool, dw, db, peers):
    """``_backward_peers`` -> (dx, dz or None) without the group's sums, its launch replayed per signature
    (``_PEER_BACKWARDS``; an empty x takes the full path)."""
    def launch():
        return _backward_peers(dy, x, mean, invstd, weight, count, y, relu, need_dz, dw, db, peers)[:2]

    if x.numel() == 0:
        return launch()
    inputs = (x, dy, y, weight, mean, invstd, count, dw, db, peers.ptrs, peers.flags)
    options = (relu, need_dz, peers.rank, peers.world, peers.flags_at, peers.sums_at)
    return _PEER_BACKWARDS.run(options, inputs, launch)
