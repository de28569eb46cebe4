"""LayerNorm over the last ``normalized_ndim`` dimensions: forward and hand-derived backward.

With a row ``x`` of length ``N`` (the normalized dimensions flattened):

    mean = (1/N) Σ x_i
    var  = (1/N) Σ (x_i - mean)^2          (two passes: centre first, never E[x^2] - E[x]^2)
    rstd = 1 / sqrt(var + eps)
    xhat = (x - mean) * rstd
    y    = xhat * w + b

Backward, with ``g = dy * w`` (``w = 1`` when there is no weight):

    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dw = Σ_rows dy * xhat
    db = Σ_rows dy

``docs/math.md`` derives these.
"""

from __future__ import annotations

import numpy as np

from ._common import (
    as_work,
    as_work_optional,
    check_eps,
    check_param_shape,
    row_norm_backward_inputs,
    split_rows,
    work_dtype,
)


def layer_norm_forward(x, weight, bias, eps, normalized_ndim=1, *, dtype=None):
    """LayerNorm of ``x`` over its last ``normalized_ndim`` dims.

    ``weight`` and ``bias`` are ``None`` or arrays shaped like those dims. Returns ``(y, mean, rstd)``:
    ``y`` shaped like ``x``; ``mean`` and ``rstd`` shaped like the leading dims (what backward needs).
    Computes in float64, or float32 when ``dtype=np.float32``; all results have that dtype.
    A row of zero elements has mean 0 and variance 0 (its ``y`` is empty anyway).
    """
    dt = work_dtype(dtype)
    x = as_work(x, dt, "x")
    eps = check_eps(eps)
    lead, n = split_rows(x.shape, normalized_ndim)
    pshape = x.shape[len(lead):]
    w = as_work_optional(weight, dt, "weight")
    b = as_work_optional(bias, dt, "bias")
    check_param_shape(w, pshape, "weight")
    check_param_shape(b, pshape, "bias")

    rows = x.reshape(-1, n)
    denom = dt.type(max(n, 1))
    mean = rows.sum(axis=1, dtype=dt) / denom
    centred = rows - mean[:, None]
    var = (centred * centred).sum(axis=1, dtype=dt) / denom
    rstd = (1.0 / np.sqrt(var + dt.type(eps))).astype(dt)
    y = centred * rstd[:, None]
    if w is not None:
        y = y * w.reshape(1, n)
    if b is not None:
        y = y + b.reshape(1, n)
    return y.reshape(x.shape).astype(dt, copy=False), mean.reshape(lead), rstd.reshape(lead)


def layer_norm_backward(dy, x, weight, mean, rstd, normalized_ndim=1, has_bias=True, *, dtype=None):
    """Gradients of LayerNorm: ``(dx, dweight, dbias)``.

    ``mean`` and ``rstd`` are the ones ``layer_norm_forward`` returned. ``dweight`` is ``None`` when
    ``weight`` is ``None``; ``dbias`` is ``None`` when ``has_bias`` is false. With no rows,
    ``dx`` is empty and ``dweight``/``dbias`` are zeros.
    """
    dt = work_dtype(dtype)
    dy, x, w, stats, lead, n = row_norm_backward_inputs(dy, x, weight, {"mean": mean, "rstd": rstd},
                                                        normalized_ndim, dt)
    mean, rstd = stats["mean"], stats["rstd"]
    pshape = x.shape[len(lead):]

    rows, drows = x.reshape(-1, n), dy.reshape(-1, n)
    r = rstd.reshape(-1, 1)
    xhat = (rows - mean.reshape(-1, 1)) * r
    g = drows if w is None else drows * w.reshape(1, n)
    denom = dt.type(max(n, 1))
    mean_g = g.sum(axis=1, keepdims=True, dtype=dt) / denom
    mean_gx = (g * xhat).sum(axis=1, keepdims=True, dtype=dt) / denom
    dx = (r * (g - mean_g - xhat * mean_gx)).reshape(x.shape).astype(dt, copy=False)
    dw = None if w is None else (drows * xhat).sum(axis=0, dtype=dt).reshape(pshape)
    db = drows.sum(axis=0, dtype=dt).reshape(pshape) if has_bias else None
    return dx, dw, db
