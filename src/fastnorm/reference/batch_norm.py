"""BatchNorm over (N, C, *spatial) with channels at axis 1 or last: every mode, forward and backward.

Which statistics normalize:

* batch statistics — ``training=True`` (and not ``use_global_stats``), or no running statistics at
  all (``running_mean=None``, torch's ``track_running_stats=False``): mean and biased variance of the
  batch per channel. In training the running statistics (when present) are updated with the unbiased
  variance; see ``stats.update_running_stats``.
* running statistics — evaluation (``training=False``) or frozen training (``use_global_stats=True``):
  mean = running_mean, invstd = 1 / sqrt(running_var + eps); running statistics untouched.

Then ``y = act(w * (x - mean) * invstd + b + z)`` with ``w = 1`` under ``fix_gamma`` or without a
weight, ``b = 0`` without a bias, ``z`` an optional residual, ``act`` identity or ReLU.

Backward, with ``g = dy * [pre-activation > 0]`` (``dy`` itself without an activation):

* batch statistics:   dx = w * invstd * (g - mean(g) - xhat * mean(g * xhat))
* running statistics: dx = w * invstd * g               (the statistics are constants)
* both:               dw = Σ g * xhat (zero under fix_gamma),  db = Σ g,  dz = g
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._common import as_work, as_work_grad, as_work_optional, check_eps, work_dtype
from .stats import (
    backward_sums,
    channel_axes,
    channel_view,
    input_grad_from_sums,
    invstd_from_stats,
    shard_stats,
    update_running_stats,
)

ACTIVATIONS = (None, "relu")


@dataclass(frozen=True)
class BatchNormForward:
    """What ``batch_norm_forward`` produces and ``batch_norm_backward`` needs.

    ``mean``/``invstd`` are the per-channel statistics that normalized ``x`` (batch or running).
    ``new_running_*`` are the running statistics after this call (``None`` without running stats;
    equal to the inputs when they were not updated). ``batch_stats`` says whether the batch's own
    statistics were used; ``count`` is the number of values per channel.
    """

    y: np.ndarray
    mean: np.ndarray
    invstd: np.ndarray
    new_running_mean: np.ndarray | None
    new_running_var: np.ndarray | None
    new_num_batches_tracked: int
    batch_stats: bool
    count: int


def _check_activation(activation):
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be None or 'relu', got {activation!r}")


def _check_channel_vec(v, c, name):
    if v is not None and v.shape != (c,):
        raise ValueError(f"{name} must have shape ({c},), got {v.shape}")


def batch_norm_normalize(x, mean, invstd, weight, bias, *, axis=1, fix_gamma=False, activation=None, z=None,
                         dtype=None):
    """The elementwise part: ``act(w * (x - mean) * invstd + b + z)`` with per-channel vectors."""
    _check_activation(activation)
    dt = work_dtype(dtype)
    x = as_work(x, dt, "x")
    ch, _ = channel_axes(x.ndim, axis)

    def cv(v, name):
        return channel_view(as_work(v, dt, name), x.ndim, ch)

    y = (x - cv(mean, "mean")) * cv(invstd, "invstd")
    if weight is not None and not fix_gamma:
        y = y * cv(weight, "weight")
    if bias is not None:
        y = y + cv(bias, "bias")
    if z is not None:
        y = y + as_work(z, dt, "z")
    if activation == "relu":
        y = np.maximum(y, dt.type(0))  # NaN propagates through np.maximum
    return y.astype(dt, copy=False)


def activation_backward(dy, y, activation, *, dtype=None):
    """``dy`` through the activation, using the forward's output: ReLU passes where not ``y <= 0``.

    (``not y <= 0`` rather than ``y > 0`` so a NaN output lets the gradient through, as torch does.)
    """
    _check_activation(activation)
    dt = work_dtype(dtype)
    dy = as_work(dy, dt, "dy")
    if activation is None:
        return dy
    return np.where(as_work(y, dt, "y") <= 0, dt.type(0), dy).astype(dt, copy=False)


def batch_norm_forward(x, weight, bias, running_mean, running_var, *, training, momentum, eps, axis=1,
                       use_global_stats=False, fix_gamma=False, activation=None, z=None, num_batches_tracked=0,
                       dtype=None) -> BatchNormForward:
    """BatchNorm forward in every mode (see the module docstring). Returns a ``BatchNormForward``.

    Raises ValueError, like torch, when batch statistics would be computed from one value per
    channel. An empty batch gives an empty ``y``, running statistics unchanged (the counter still
    moves, as torch's module increments it before normalizing), mean 0 and invstd 1/sqrt(eps).
    """
    _check_activation(activation)
    dt = work_dtype(dtype)
    eps = check_eps(eps)
    x = as_work(x, dt, "x")
    ch, _ = channel_axes(x.ndim, axis)
    c = x.shape[ch]
    w = as_work_optional(weight, dt, "weight")
    b = as_work_optional(bias, dt, "bias")
    rm = as_work_optional(running_mean, dt, "running_mean")
    rv = as_work_optional(running_var, dt, "running_var")
    if (rm is None) != (rv is None):
        raise ValueError("running_mean and running_var must both be arrays or both be None")
    for v, name in ((w, "weight"), (b, "bias"), (rm, "running_mean"), (rv, "running_var")):
        _check_channel_vec(v, c, name)
    if z is not None:
        z = as_work(z, dt, "z")
        if z.shape != x.shape:
            raise ValueError(f"z must have the shape of x {x.shape}, got {z.shape}")
    if momentum is not None and (isinstance(momentum, bool) or not isinstance(momentum, (int, float, np.number))):
        raise TypeError(f"momentum must be a real number or None, got {type(momentum).__name__}")
    if use_global_stats and rm is None:
        raise ValueError("use_global_stats=True needs running_mean and running_var")

    nbt = int(num_batches_tracked)
    batch_stats = (training and not use_global_stats) or rm is None
    if batch_stats:
        count = x.size // c if c else 0
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")
        count, mean, m2 = shard_stats(x, axis, dtype=dt)
        invstd = invstd_from_stats(count, m2, eps, dtype=dt)
        if training:
            new_rm, new_rv, nbt = update_running_stats(rm, rv, count, mean, m2, momentum, nbt, dtype=dt)
        else:  # evaluation without running statistics: nothing to update
            new_rm, new_rv = None, None
    else:
        count = x.size // c if c else 0
        mean = rm.copy()
        invstd = (1.0 / np.sqrt(rv + dt.type(eps))).astype(dt)
        new_rm, new_rv = rm.copy(), rv.copy()
    y = batch_norm_normalize(x, mean, invstd, w, b, axis=axis, fix_gamma=fix_gamma, activation=activation, z=z,
                             dtype=dt)
    return BatchNormForward(y, mean, invstd, new_rm, new_rv, nbt, bool(batch_stats), int(count))


def batch_norm_backward(dy, x, weight, fwd: BatchNormForward, *, training, axis=1, use_global_stats=False,
                        fix_gamma=False, activation=None, has_z=False, has_bias=True, dtype=None):
    """Gradients of BatchNorm: ``(dx, dweight, dbias, dz)``.

    ``fwd`` is what ``batch_norm_forward`` returned for the same ``x`` and options; ``training`` and
    ``use_global_stats`` must agree with the statistics it used. ``dweight`` is ``None`` without a
    weight (zeros under ``fix_gamma``), ``dbias`` ``None`` when ``has_bias`` is false, ``dz``
    ``None`` unless ``has_z``. An empty batch gives empty dx/dz and zero dweight/dbias.
    """
    _check_activation(activation)
    dt = work_dtype(dtype)
    dy, x = as_work_grad(dy, x, dt)
    ch, red = channel_axes(x.ndim, axis)
    c = x.shape[ch]
    w = as_work_optional(weight, dt, "weight")
    _check_channel_vec(w, c, "weight")
    if use_global_stats and fwd.batch_stats:
        raise ValueError("use_global_stats=True, but the forward normalized with batch statistics")
    if training and not use_global_stats and not fwd.batch_stats:
        raise ValueError("training=True, but the forward normalized with running statistics")

    g = activation_backward(dy, fwd.y, activation, dtype=dt)
    sum_g, sum_gx = backward_sums(g, x, fwd.mean, fwd.invstd, axis, dtype=dt)
    w_eff = None if (w is None or fix_gamma) else w
    if fwd.batch_stats:
        dx = input_grad_from_sums(g, x, w_eff, fwd.mean, fwd.invstd, sum_g, sum_gx, fwd.count, axis, dtype=dt)
    else:
        scale = as_work(fwd.invstd, dt, "invstd") if w_eff is None else w_eff * as_work(fwd.invstd, dt, "invstd")
        dx = (g * channel_view(scale, x.ndim, ch)).astype(dt, copy=False)
    if w is None:
        dw = None
    elif fix_gamma:
        dw = np.zeros(c, dt)
    else:
        dw = sum_gx
    db = sum_g if has_bias else None
    dz = g.copy() if has_z else None
    return dx, dw, db, dz
