"""Accuracy contract: the largest error each dtype may show against the float64 reference.

The error measure is normwise: ``max|actual - expected| / max|expected|`` (see
``max_rel_err``). It is what ``fastnorm check`` prints and what the tests assert. Inputs are the
same low-precision values for both sides (the reference upcasts them to float64), so the error is
accumulation in float32 plus the final rounding to the output dtype (fp16: 2^-11, bf16: 2^-8
relative).
"""

from __future__ import annotations

import numpy as np

#: Outputs (y, residual sums) and input gradients (dx).
OUTPUT_TOL = {"float64": 1e-10, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}

#: Parameter gradients (dweight, dbias): sums over many rows, accumulated in float32, then rounded
#: to the parameter's dtype. Slightly looser than outputs for float32 because the sums are longer.
PARAM_GRAD_TOL = {"float64": 1e-9, "float32": 5e-5, "float16": 4e-3, "bfloat16": 2e-2}


def max_rel_err(actual: np.ndarray, expected: np.ndarray, least_scale: float = 0.0) -> float:
    """Normwise relative error ``max|a - e| / max(max|e|, least_scale)``; absolute error where both are zero.

    An identically zero reference (LayerNorm's dx over rows of one element, say) has no scale of its
    own, so there the error is measured against 1: rounding noise of 1e-14 passes, a wrong value fails.
    ``least_scale``: a floor on the scale for sums that cancel (the size of their terms, where float32
    summation errs relative to the terms, not to what is left).
    NaNs must match position for position (a NaN where the reference has none, or the reverse, is an
    infinite error); positions where both are NaN, or both are the same infinity, are ignored.
    """
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise ValueError(f"shape mismatch: actual {a.shape} vs expected {e.shape}")
    if a.size == 0:
        return 0.0
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    if np.any(nan_a != nan_e):
        return float("inf")
    inf_same = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
    if np.any(np.isinf(a) != np.isinf(e)) or np.any(np.isinf(a) & ~inf_same):
        return float("inf")
    ok = ~(nan_a | inf_same)
    if not np.any(ok):
        return 0.0
    largest = max(float(np.max(np.abs(e[ok]))), least_scale)
    scale = largest if largest > 0.0 else 1.0
    return float(np.max(np.abs(a[ok] - e[ok])) / scale)
