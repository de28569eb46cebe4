"""RMSNorm over the last ``normalized_ndim`` dimensions: forward and hand-derived backward.

With a row ``x`` of length ``N``:

    rstd = 1 / sqrt((1/N) Σ x_i^2 + eps)
    xhat = x * rstd
    y    = xhat * w

Backward, with ``g = dy * w``:

    dx = rstd * (g - xhat * mean(g * xhat))
    dw = Σ_rows dy * xhat
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


def _rms_eps(eps, x: np.ndarray) -> float:
    # torch's rule for eps=None is finfo(x.dtype).eps of the *tensor's* dtype; the reference only sees
    # the array it is given, so callers that upcast a low-precision tensor must pass eps explicitly.
    return float(np.finfo(x.dtype).eps) if eps is None else check_eps(eps)


def rms_norm_forward(x, weight, eps, normalized_ndim=1, *, dtype=None):
    """RMSNorm of ``x`` over its last ``normalized_ndim`` dims. Returns ``(y, rstd)``.

    ``eps=None`` means ``np.finfo(x.dtype).eps`` of the array passed in (torch's rule, applied to the
    array's own dtype: pass eps explicitly when ``x`` was upcast from float16/bfloat16).
    ``rstd`` is shaped like the leading dims. Computes in float64, or float32 when asked.
    """
    eps = _rms_eps(eps, np.asarray(x))
    dt = work_dtype(dtype)
    x = as_work(x, dt, "x")
    lead, n = split_rows(x.shape, normalized_ndim)
    pshape = x.shape[len(lead):]
    w = as_work_optional(weight, dt, "weight")
    check_param_shape(w, pshape, "weight")

    rows = x.reshape(-1, n)
    ms = (rows * rows).sum(axis=1, dtype=dt) / dt.type(max(n, 1))
    rstd = (1.0 / np.sqrt(ms + dt.type(eps))).astype(dt)
    y = rows * rstd[:, None]
    if w is not None:
        y = y * w.reshape(1, n)
    return y.reshape(x.shape).astype(dt, copy=False), rstd.reshape(lead)


def rms_norm_backward(dy, x, weight, rstd, normalized_ndim=1, *, dtype=None):
    """Gradients of RMSNorm: ``(dx, dweight)`` (``dweight`` is ``None`` without a weight)."""
    dt = work_dtype(dtype)
    dy, x, w, stats, lead, n = row_norm_backward_inputs(dy, x, weight, {"rstd": rstd}, normalized_ndim, dt)
    rstd = stats["rstd"]
    pshape = x.shape[len(lead):]

    rows, drows = x.reshape(-1, n), dy.reshape(-1, n)
    r = rstd.reshape(-1, 1)
    xhat = rows * r
    g = drows if w is None else drows * w.reshape(1, n)
    mean_gx = (g * xhat).sum(axis=1, keepdims=True, dtype=dt) / dt.type(max(n, 1))
    dx = (r * (g - xhat * mean_gx)).reshape(x.shape).astype(dt, copy=False)
    dw = None if w is None else (drows * xhat).sum(axis=0, dtype=dt).reshape(pshape)
    return dx, dw
