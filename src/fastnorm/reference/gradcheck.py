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


def _derivative(loss_at, h0: float, max_halvings: int) -> float:
    """dL/dt by five-point central differences, halving the step until successive estimates agree.

    ``loss_at(offset)`` evaluates L with the element moved by ``offset`` (a multiple of a power of
    two, hence exact). Each estimate ``D(h)`` has truncation error O(h^4); the difference of two
    successive estimates bounds the error of the finer one. Halving stops when that bound is below
    1e-10 of the estimate, or when it grows again (rounding noise of L, about 1e-16 |L| / h, has
    taken over); the estimate with the smallest bound is returned.
    """
    cache: dict[float, float] = {}

    def lval(off: float) -> float:
        if off not in cache:
            cache[off] = loss_at(off)
        return cache[off]

    def d5(h: float) -> float:
        return (8.0 * (lval(h) - lval(-h)) - (lval(2 * h) - lval(-2 * h))) / (12.0 * h)

    h = h0
    prev = d5(h)
    best, best_bound = prev, math.inf
    for _ in range(max_halvings):
        h /= 2
        cur = d5(h)
        bound = abs(cur - prev)
        if bound < best_bound:
            best, best_bound = cur, bound
        elif bound > 4 * best_bound:
            break
        if bound <= 1e-10 * abs(cur):
            break
        prev = cur
    return best


def gradcheck(fn: Callable, inputs: Mapping[str, np.ndarray], eps: float = 1e-3, *, seed: int = 0) -> dict[str, float]:
    """Max relative error of ``fn``'s analytic gradients against central finite differences.

    ``fn(**inputs)`` returns ``(outputs, vjp)``: ``outputs`` is an array or a tuple of arrays, and
    ``vjp(cotangents)`` (one array, or a tuple in the same structure as ``outputs``) returns a dict
    ``{input name: gradient}`` for the inputs it differentiates; the others are held fixed, and a
    ``None`` gradient is skipped. Inputs are taken as float64 (``None`` inputs pass through).

    The numeric derivative of each element ``t`` is the five-point central difference

        dL/dt ≈ (8 (L(t+h) - L(t-h)) - (L(t+2h) - L(t-2h))) / (12 h)

    with truncation error O(h^4), starting from ``h`` = ``eps`` rounded down to a power of two (at
    least the float spacing at ``|t|``, so every moved value is exact) and halving ``h`` while the
    estimates keep converging (up to 20 times). A step near 1e-3 keeps the rounding noise of L
    (about 1e-16 |L| / h) small even for inputs like 1e4 + randn, where a two-point difference with
    h = 1e-6 is good only to about 1e-5; halving handles inputs whose natural scale is much smaller
    than ``eps`` (e.g. a batch of two nearly equal values).

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
    unknown = {k for k, g in analytic.items() if g is not None} - set(base)
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

            def loss_at(off, flat=flat, i=i, orig=orig):
                flat[i] = orig + off
                return _loss(fn, base, cots)

            spacing = float(np.spacing(abs(orig)))
            h = max(h0, 2.0 ** math.ceil(math.log2(spacing))) if spacing > 0 and math.isfinite(spacing) else h0
            nflat[i] = _derivative(loss_at, h, max_halvings=20)
            flat[i] = orig
        errors[name] = max_rel_err(np.asarray(grad, np.float64), numeric)
    return errors
