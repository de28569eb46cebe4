"""Finite-difference check of a hand-written backward, in float64.

``gradcheck(fn, inputs)`` draws a random cotangent ``c`` for each output of ``fn``, forms the scalar
loss ``L = Σ_k <out_k, c_k>`` and compares the analytic gradients ``vjp(c)`` with central finite
differences of ``L``, element by element of every differentiated input.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from .tolerances import max_rel_err


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _loss(fn, inputs, cots) -> float:
    outs, _ = fn(**inputs)
    return math.fsum(float(np.sum(np.asarray(o, np.float64) * c)) for o, c in zip(_as_tuple(outs), cots, strict=True))


def gradcheck(fn: Callable, inputs: Mapping[str, np.ndarray], eps: float = 1e-3, *, seed: int = 0) -> dict[str, float]:
    """Max relative error of ``fn``'s analytic gradients against central finite differences.

    ``fn(**inputs)`` returns ``(outputs, vjp)``: ``outputs`` is an array or a tuple of arrays, and
    ``vjp(cotangents)`` (one array, or a tuple in the same structure as ``outputs``) returns a dict
    ``{input name: gradient}`` for the inputs it differentiates; the others are held fixed, and a
    ``None`` gradient is skipped. Inputs are taken as float64 (``None`` inputs pass through).

    Each element ``t`` is moved by ``±h`` and ``±2h``, where ``h`` is ``eps`` rounded down to a power
    of two (at least the float spacing at ``|t|``), so every moved value is exact. The derivative is
    the five-point central difference

        dL/dt ≈ (8 (L(t+h) - L(t-h)) - (L(t+2h) - L(t-2h))) / (12 h)

    whose truncation error is O(h^4). That permits a step near 1e-3, which keeps the rounding noise
    of L (about 1e-16 |L| / h) small even for inputs with a large offset such as 1e4 + randn, where
    the two-point difference with h = 1e-6 is only good to about 1e-5.

    Returns ``{name: max_rel_err(analytic, numeric)}``: normwise, ``max|a - n| / max|n|``.
    """
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    rng = np.random.default_rng(seed)
    base = {k: (None if v is None else np.array(v, dtype=np.float64)) for k, v in inputs.items()}
    outs, vjp = fn(**base)
    outs = _as_tuple(outs)
    cots = tuple(rng.standard_normal(np.shape(o)) for o in outs)
    analytic = vjp(cots if len(cots) > 1 else cots[0])
    unknown = set(analytic) - set(base)
    if unknown:
        raise ValueError(f"vjp returned gradients for names that are not inputs: {sorted(unknown)}")
    h0 = 2.0 ** math.floor(math.log2(eps))
    errors = {}
    for name, grad in analytic.items():
        if grad is None:
            continue
        t = base[name]
        if np.shape(grad) != t.shape:
            raise ValueError(f"gradient of {name} has shape {np.shape(grad)}, input has {t.shape}")
        numeric = np.zeros(t.shape)
        flat, nflat = t.reshape(-1), numeric.reshape(-1)  # views: writing flat moves the input fn sees
        for i in range(flat.size):
            orig = flat[i]
            h = max(h0, float(np.spacing(abs(orig))))

            def loss_at(k, flat=flat, i=i, orig=orig, h=h):
                flat[i] = orig + k * h
                return _loss(fn, base, cots)

            nflat[i] = (8.0 * (loss_at(1) - loss_at(-1)) - (loss_at(2) - loss_at(-2))) / (12.0 * h)
            flat[i] = orig
        errors[name] = max_rel_err(np.asarray(grad, np.float64), numeric)
    return errors
