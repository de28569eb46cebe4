"""Argument checks shared by every op, run before any kernel launches.

Each raises ``TypeError`` (wrong kind of object or dtype) or ``ValueError`` (wrong shape or value)
with a message that names the argument and says what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_tensor(name: str, t: object) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    return t


def check_float(name: str, t: torch.Tensor) -> None:
    """``t`` is a tensor of a floating dtype fastnorm supports (fp16, bf16, fp32, fp64)."""
    check_tensor(name, t)
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must have a floating dtype (float16, bfloat16, float32 or float64), got {t.dtype}"
        )


def check_optional_param(name: str, p: torch.Tensor | None, shape: Sequence[int], x: torch.Tensor) -> None:
    """An optional parameter (weight, bias, running stat) has ``shape``, a float dtype and x's device."""
    if p is None:
        return
    check_float(name, p)
    if tuple(p.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(p.shape)}")
    check_same_device(name, p, x)


def check_same_device(name: str, t: torch.Tensor, x: torch.Tensor) -> None:
    if t.device != x.device:
        raise RuntimeError(f"{name} is on {t.device} but the input is on {x.device}; move them to one device")


def check_eps(eps: float, name: str = "eps") -> float:
    """A finite float >= 0 (an int is converted). Runs on every eager call: the valid float returns first."""
    if type(eps) is float and 0.0 <= eps < math.inf:
        return eps
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"{name} must be a float, got {type(eps).__name__}")
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {eps}")
    return float(eps)


def check_momentum(momentum: float | None) -> float | None:
    """``None`` (cumulative moving average) or a float in [0, 1] (an int is converted); the valid float returns
    first (this runs on every eager call)."""
    if momentum is None or (type(momentum) is float and 0.0 <= momentum <= 1.0):
        return momentum
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"momentum must be a float in [0, 1] or None, got {type(momentum).__name__}")
    if not (0.0 <= momentum <= 1.0):
        raise ValueError(f"momentum must be in [0, 1] or None, got {momentum}")
    return float(momentum)


def normalize_shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    """torch's rule: an int means a 1-tuple; every entry a positive int."""
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        shape: tuple[int, ...] = (normalized_shape,)
    elif isinstance(normalized_shape, (torch.Size, tuple, list)):
        shape = tuple(normalized_shape)
    else:
        raise TypeError(f"normalized_shape must be an int or a sequence of ints, got {normalized_shape!r}")
    if len(shape) == 0 or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"normalized_shape must be a non-empty sequence of ints >= 0, got {normalized_shape!r}")
    return shape
