"""Shared plumbing of the reference: the working precision and reshaping helpers (NumPy only)."""

from __future__ import annotations

import numpy as np

#: The precisions the reference computes in. float64 is the default and the one the tests trust;
#: float32 exists so the reference itself can be run the way a float32 kernel accumulates.
_PRECISIONS = {np.dtype(np.float64), np.dtype(np.float32)}


def work_dtype(dtype) -> np.dtype:
    """The precision to compute in: float64 unless ``dtype`` asks for float32."""
    if dtype is None:
        return np.dtype(np.float64)
    dt = np.dtype(dtype)
    if dt not in _PRECISIONS:
        raise ValueError(f"dtype must be None, float64 or float32, got {dt}")
    return dt


def as_work(a, dt: np.dtype, name: str) -> np.ndarray:
    """``a`` as an array of the working precision (a copy whenever a conversion is needed)."""
    if a is None:
        raise TypeError(f"{name} must be an array, got None")
    arr = np.asarray(a)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    return arr.astype(dt, copy=False)


def as_work_optional(a, dt: np.dtype, name: str) -> np.ndarray | None:
    return None if a is None else as_work(a, dt, name)


def as_work_grad(dy, x, dt: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(dy, x)`` of a backward in the working precision; ``dy`` must have the shape of ``x``."""
    x = as_work(x, dt, "x")
    dy = as_work(dy, dt, "dy")
    if dy.shape != x.shape:
        raise ValueError(f"dy must have the shape of x {x.shape}, got {dy.shape}")
    return dy, x


def split_rows(shape: tuple[int, ...], normalized_ndim: int, name: str = "x") -> tuple[tuple[int, ...], int]:
    """``(leading_shape, row_length)`` for normalizing over the last ``normalized_ndim`` dims."""
    if not isinstance(normalized_ndim, (int, np.integer)) or isinstance(normalized_ndim, bool):
        raise TypeError(f"normalized_ndim must be an int, got {type(normalized_ndim).__name__}")
    if not 1 <= normalized_ndim <= len(shape):
        raise ValueError(f"normalized_ndim must be in [1, {name}.ndim={len(shape)}], got {normalized_ndim}")
    lead = tuple(shape[: len(shape) - normalized_ndim])
    n = int(np.prod(shape[len(shape) - normalized_ndim:], dtype=np.int64))
    return lead, n


def check_param_shape(p: np.ndarray | None, shape: tuple[int, ...], name: str) -> None:
    if p is not None and p.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {p.shape}")


def row_norm_backward_inputs(dy, x, weight, stats: dict, normalized_ndim: int, dt: np.dtype):
    """The checked, working-precision inputs of a LayerNorm/RMSNorm backward:
    ``(dy, x, weight | None, {name: per-row statistic}, leading_shape, row_length)``."""
    dy, x = as_work_grad(dy, x, dt)
    lead, n = split_rows(x.shape, normalized_ndim)
    w = as_work_optional(weight, dt, "weight")
    check_param_shape(w, x.shape[len(lead):], "weight")
    checked = {}
    for name, value in stats.items():
        checked[name] = as_work(value, dt, name)
        check_param_shape(checked[name], lead, name)
    return dy, x, w, checked, lead, n


def check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
        raise TypeError(f"eps must be a real number, got {type(eps).__name__}")
    eps = float(eps)
    if not (np.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"eps must be a finite number >= 0, got {eps}")
    return eps
