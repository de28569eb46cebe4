"""Helpers shared by the tests: conversions to the float64 reference and dtype-aware comparison."""

from __future__ import annotations

import numpy as np
import torch

from fastnorm.reference.tolerances import OUTPUT_TOL, PARAM_GRAD_TOL, max_rel_err

DTYPE_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
               torch.float64: "float64"}


def to_np64(t: torch.Tensor) -> np.ndarray:
    """The exact values of ``t`` as a float64 NumPy array (bf16/fp16 upcast losslessly)."""
    return t.detach().to("cpu", torch.float64).numpy()


def assert_close(what: str, actual: torch.Tensor, expected: np.ndarray, dtype: torch.dtype,
                 param_grad: bool = False) -> None:
    """``actual`` matches the float64 ``expected`` within the tolerance of ``dtype``."""
    tol = (PARAM_GRAD_TOL if param_grad else OUTPUT_TOL)[DTYPE_NAMES[dtype]]
    err = max_rel_err(to_np64(actual), np.asarray(expected, dtype=np.float64))
    assert err <= tol, f"{what}: max relative error {err:.3g} > tolerance {tol:g} ({dtype})"


def poisoned_like(t: torch.Tensor) -> torch.Tensor:
    """A tensor shaped like ``t`` filled with NaN, so any element a kernel fails to write shows."""
    return torch.full_like(t, float("nan"))
