"""The NumPy reference checked against finite differences, against itself sharded, and against torch.

Every hand-written backward must agree with five-point central differences (``gradcheck``) to 1e-6
in float64, on rows of 1, 2, 3, 7 and 129 elements, batches of 1, 2, 3, 7 and 129, and inputs with
a large mean offset (1e4 + randn). torch's CPU float64 ops are a second, independent opinion.
"""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fastnorm.reference
from fastnorm.reference import (
    activation_backward,
    backward_sums,
    batch_norm_backward,
    batch_norm_forward,
    batch_norm_normalize,
    gradcheck,
    input_grad_from_sums,
    invstd_from_stats,
    layer_norm_backward,
    layer_norm_forward,
    merge_stats,
    rms_norm_backward,
    rms_norm_forward,
    shard_stats,
    update_running_stats,
)
from fastnorm.reference.tolerances import max_rel_err

REFERENCE_DIR = Path(fastnorm.reference.__file__).parent
GRAD_TOL = 1e-6
OFFSETS = [0.0, 1e4]


def eps_for(count: int) -> float:
    """The normalization eps of a gradient check over ``count`` values per row or channel.

    With one or two values, x - mean spans at most one direction, which normalization removes: the
    true dx is then of the order of eps / var, and with eps = 1e-5 it sinks below the finite
    differences' rounding noise. eps = 0.5 makes it O(1), so those cases check the eps terms of the
    formulas instead of noise. Longer rows use the usual 1e-5.
    """
    return 0.5 if count <= 2 else 1e-5


def rng_for(*key) -> np.random.Generator:
    """A generator seeded by ``key`` — the same on every run (``hash()`` of a str is salted per process)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def assert_grads(errors: dict, tol: float = GRAD_TOL) -> None:
    assert errors, "gradcheck compared nothing"
    bad = {k: v for k, v in errors.items() if not v <= tol}
    assert not bad, f"gradient errors above {tol:g}: {bad}"


def close_to_torch(ref: np.ndarray, t: torch.Tensor, tol: float = 1e-12) -> bool:
    """Within ``tol`` of torch's float64 result, relative to its largest magnitude or 1 (torch's own
    rounding noise, e.g. 5e-14 where a 1-element LayerNorm row has dx exactly 0, is not an error)."""
    e = t.detach().numpy()
    assert ref.shape == e.shape
    return bool(np.all(np.isnan(ref) == np.isnan(e))) and bool(
        np.nanmax(np.abs(ref - e), initial=0.0) <= tol * max(1.0, np.nanmax(np.abs(e), initial=0.0)))


# --------------------------------------------------------------------------------------------------
# The reference imports NumPy only


def test_reference_does_not_import_torch():
    # ``import fastnorm`` loads the torch-based package, so the reference is loaded here as a package
    # of its own, from its directory, with torch made unimportable: any torch import inside it fails.
    code = f"""
import importlib.util, sys
sys.modules["torch"] = None
spec = importlib.util.spec_from_file_location(
    "isolated_reference", {str(REFERENCE_DIR / "__init__.py")!r}, submodule_search_locations=[{str(REFERENCE_DIR)!r}])
ref = importlib.util.module_from_spec(spec)
sys.modules["isolated_reference"] = ref
spec.loader.exec_module(ref)
import isolated_reference.tolerances
assert not [m for m in sys.modules if m.startswith("fastnorm")], "the reference imported the fastnorm package"
y, mean, rstd = ref.layer_norm_forward([[1.0, 2.0, 4.0]], None, None, 1e-5)
print(len(ref.__all__))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert int(out.stdout) >= 15


# --------------------------------------------------------------------------------------------------
# gradcheck itself


def test_gradcheck_detects_a_wrong_backward():
    x = rng_for("wrong").standard_normal((3, 7))

    def fn(x):
        y, mean, rstd = layer_norm_forward(x, None, None, 1e-5)
        return y, lambda c: {"x": 1.001 * layer_norm_backward(c, x, None, mean, rstd)[0]}

    err = gradcheck(fn, {"x": x})["x"]
    assert 5e-4 < err < 2e-3


def test_gradcheck_handles_several_outputs_and_fixed_inputs():
    a = rng_for("multi").standard_normal(5)
    b = rng_for("multi", 2).standard_normal(5)

    def fn(a, b):
        return (a * b, np.sin(a)), lambda c: {"a": c[0] * b + c[1] * np.cos(a)}

    assert_grads(gradcheck(fn, {"a": a, "b": b}), 1e-9)


# --------------------------------------------------------------------------------------------------
# LayerNorm and RMSNorm


def ln_fn(eps, nd, has_bias):
    def fn(x, w=None, b=None):
        y, mean, rstd = layer_norm_forward(x, w, b, eps, nd)

        def vjp(c):
            dx, dw, db = layer_norm_backward(c, x, w, mean, rstd, nd, has_bias=has_bias)
            return {"x": dx, "w": dw, "b": db}

        return y, vjp

    return fn


def rms_fn(eps, nd):
    def fn(x, w=None):
        y, rstd = rms_norm_forward(x, w, eps, nd)
        return y, lambda c: dict(zip(("x", "w"), rms_norm_backward(c, x, w, rstd, nd), strict=True))

    return fn


ROW_SHAPES = [(4, 1), (1, 2), (3, 3), (2, 7), (3, 129), (2, 3, 5)]


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_gradcheck(shape, offset, affine):
    rng = rng_for("ln", shape, offset, affine)
    x = rng.standard_normal(shape) + offset
    inputs = {"x": x}
    if affine:
        inputs |= {"w": rng.standard_normal(shape[-1:]), "b": rng.standard_normal(shape[-1:])}
    assert_grads(gradcheck(ln_fn(eps_for(shape[-1]), 1, affine), inputs))


def test_layer_norm_gradcheck_two_normalized_dims():
    rng = rng_for("ln2")
    x = rng.standard_normal((2, 3, 5)) + 1e4
    inputs = {"x": x, "w": rng.standard_normal((3, 5)), "b": rng.standard_normal((3, 5))}
    assert_grads(gradcheck(ln_fn(1e-5, 2, True), inputs))


# RMSNorm has no mean to subtract, so an offset is no hazard for it. With a large offset x is nearly
# parallel to (1, ..., 1) and the part of dx that survives the projection is relatively of the order of
# std / offset; in rows of 1 or 2 it sinks below rounding (e.g. a 1-element row at 1e4 has a true dx
# of eps / (x^2 + eps)^1.5 ~ 1e-17). The offset cases therefore use rows of 3 or more.
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("has_weight", [True, False])
def test_rms_norm_gradcheck(shape, offset, has_weight):
    if offset and shape[-1] <= 2:
        pytest.skip("ill-conditioned: the true dx is below the rounding of the loss (see comment)")
    rng = rng_for("rms", shape, offset, has_weight)
    inputs = {"x": rng.standard_normal(shape) + offset}
    if has_weight:
        inputs["w"] = rng.standard_normal(shape[-1:])
    assert_grads(gradcheck(rms_fn(eps_for(shape[-1]), 1), inputs))


def test_rms_norm_eps_none_is_finfo_eps_of_the_array():
    x = np.full((1, 1), 1e-5, np.float32)
    _, rstd = rms_norm_forward(x, None, None)
    v = float(x[0, 0])
    expected = 1 / np.sqrt(v * v + float(np.finfo(np.float32).eps))
    assert rstd.dtype == np.float64 and abs(rstd[0] - expected) / expected < 1e-14


def test_layer_norm_large_offset_is_accurate():
    # The two-pass variance keeps every significant digit of xhat at a 1e4 offset (a one-pass
    # E[x^2] - E[x]^2 in float64 loses about 8 of them here).
    base = rng_for("offset").standard_normal((4, 64))
    y0, _, _ = layer_norm_forward(base, None, None, 0.0)
    y1, _, rstd = layer_norm_forward(base + 1e4, None, None, 0.0)
    assert max_rel_err(y1, y0) < 1e-11
    assert np.all(np.isfinite(rstd))


def test_layer_norm_nan_stays_in_its_row():
    x = rng_for("nan").standard_normal((3, 5))
    x[1, 2] = np.nan
    y, _, _ = layer_norm_forward(x, None, None, 1e-5)
    assert np.all(np.isnan(y[1])) and np.all(np.isfinite(y[[0, 2]]))


def test_layer_norm_empty():
    x = np.zeros((0, 6))
    y, mean, rstd = layer_norm_forward(x, np.ones(6), np.zeros(6), 1e-5)
    assert y.shape == (0, 6) and mean.shape == (0,) and rstd.shape == (0,)
    dx, dw, db = layer_norm_backward(x, x, np.ones(6), mean, rstd)
    assert dx.shape == (0, 6) and np.array_equal(dw, np.zeros(6)) and np.array_equal(db, np.zeros(6))
    y, rstd = rms_norm_forward(x, np.ones(6), 1e-5)
    dx, dw = rms_norm_backward(x, x, np.ones(6), rstd)
    assert dx.shape == (0, 6) and np.array_equal(dw, np.zeros(6))


@pytest.mark.parametrize("shape, nd", [((4, 1), 1), ((3, 129), 1), ((2, 3, 5), 2)], ids=str)
def test_layer_and_rms_norm_match_torch(shape, nd):
    rng = rng_for("torch-ln", shape)
    x = rng.standard_normal(shape) * 3 + 2
    w, b = rng.standard_normal(shape[-nd:]), rng.standard_normal(shape[-nd:])
    dy = rng.standard_normal(shape)
    for fwd in ("ln", "rms"):
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
        if fwd == "ln":
            ty = F.layer_norm(tx, shape[-nd:], tw, tb, 1e-5)
            y, mean, rstd = layer_norm_forward(x, w, b, 1e-5, nd)
            grads = dict(zip(("x", "w", "b"), layer_norm_backward(dy, x, w, mean, rstd, nd), strict=True))
        else:
            ty = F.rms_norm(tx, shape[-nd:], tw, 1e-5)
            y, rstd = rms_norm_forward(x, w, 1e-5, nd)
            grads = dict(zip(("x", "w"), rms_norm_backward(dy, x, w, rstd, nd), strict=True))
        ty.backward(torch.tensor(dy))
        assert close_to_torch(y, ty)
        for name, t in (("x", tx), ("w", tw), ("b", tb)):
            if name in grads:
                assert close_to_torch(grads[name], t.grad), (fwd, name)


def test_float32_precision_on_request():
    rng = rng_for("f32")
    x = rng.standard_normal((5, 33)).astype(np.float32)
    w = rng.standard_normal(33).astype(np.float32)
    y32, mean32, rstd32 = layer_norm_forward(x, w, None, 1e-5, dtype=np.float32)
    y64, _, _ = layer_norm_forward(x, w, None, 1e-5)
    assert y32.dtype == np.float32 and mean32.dtype == np.float32 and rstd32.dtype == np.float32
    assert y64.dtype == np.float64
    assert max_rel_err(y32, y64) < 1e-6
    dy = rng.standard_normal((5, 33)).astype(np.float32)
    dx32, dw32, _ = layer_norm_backward(dy, x, w, mean32, rstd32, dtype=np.float32)
    assert dx32.dtype == np.float32 and dw32.dtype == np.float32
    f = batch_norm_forward(x, w, None, np.zeros(33), np.ones(33), training=True, momentum=0.1, eps=1e-5,
                           dtype=np.float32)
    assert f.y.dtype == np.float32 and f.new_running_var.dtype == np.float32
    with pytest.raises(ValueError, match="dtype"):
        layer_norm_forward(x, None, None, 1e-5, dtype=np.float16)


def test_row_ops_reject_bad_arguments():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="weight"):
        layer_norm_forward(x, np.ones(4), None, 1e-5)
    with pytest.raises(ValueError, match="normalized_ndim"):
        layer_norm_forward(x, None, None, 1e-5, normalized_ndim=3)
    with pytest.raises(ValueError, match="eps"):
        rms_norm_forward(x, None, -1.0)
    with pytest.raises(ValueError, match="dy"):
        layer_norm_backward(np.zeros((3, 2)), x, None, np.zeros(2), np.ones(2))


# --------------------------------------------------------------------------------------------------
# BatchNorm

MODES = {
    # name: (training, use_global_stats, fix_gamma, activation, has_z, running_stats)
    "train": (True, False, False, None, False, True),
    "train_no_running": (True, False, False, None, False, False),
    "eval": (False, False, False, None, False, True),
    "eval_no_running": (False, False, False, None, False, False),
    "frozen": (True, True, False, None, False, True),
    "train_fix_gamma": (True, False, True, None, False, True),
    "frozen_fix_gamma": (True, True, True, None, False, True),
    "train_relu_z": (True, False, False, "relu", True, True),
    "frozen_relu_z": (True, True, False, "relu", True, True),
    "eval_relu_z": (False, False, False, "relu", True, True),
}

# (N, C, *spatial) in channels-first order; N = 1, 2, 3, 7, 129.
BN_SHAPES = [(1, 2, 3), (2, 3), (3, 2, 1, 2), (7, 3, 2), (129, 2)]


def to_axis(a: np.ndarray, axis: int) -> np.ndarray:
    """A channels-first array laid out with the channel at ``axis`` (1, or last for -1)."""
    return a if axis == 1 else np.moveaxis(a, 1, -1).copy()


def bn_fn(mode, axis, running_mean, running_var, eps=1e-5, momentum=0.1):
    training, ugs, fix_gamma, act, has_z, _ = MODES[mode]

    def fn(x, w=None, b=None, z=None):
        f = batch_norm_forward(x, w, b, running_mean, running_var, training=training, momentum=momentum, eps=eps,
                               axis=axis, use_global_stats=ugs, fix_gamma=fix_gamma, activation=act, z=z)

        def vjp(c):
            dx, dw, db, dz = batch_norm_backward(c, x, w, f, training=training, axis=axis, use_global_stats=ugs,
                                                 fix_gamma=fix_gamma, activation=act, has_z=has_z,
                                                 has_bias=b is not None)
            return {"x": dx, "w": dw, "b": db, "z": dz}

        return f.y, vjp

    return fn


def bn_inputs(mode, shape, axis, offset, rng, eps=1e-5):
    training, ugs, fix_gamma, act, has_z, running = MODES[mode]
    c = shape[1]
    x = to_axis(rng.standard_normal(shape) * 1.5 + offset, axis)
    rm = rv = None
    if running:
        rm = offset + rng.standard_normal(c)
        rv = 0.5 + rng.random(c)
    inputs = {"x": x, "w": rng.standard_normal(c), "b": rng.standard_normal(c)}
    if has_z:
        z = rng.standard_normal(x.shape)
        if act == "relu":
            # Keep every pre-activation at least 0.2 from the kink, so the +-2h steps never cross it.
            pre = batch_norm_forward(x, inputs["w"], inputs["b"], rm, rv, training=training, momentum=0.1,
                                     eps=eps, axis=axis, use_global_stats=ugs, fix_gamma=fix_gamma, z=z).y
            z = z + np.where(np.abs(pre) < 0.2, np.where(pre < 0, -0.4, 0.4), 0.0)
        inputs["z"] = z
    return inputs, rm, rv


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
@pytest.mark.parametrize("mode", list(MODES))
def test_batch_norm_gradcheck(mode, shape, axis):
    rng = rng_for("bn", mode, shape, axis)
    offset = 1e4 if shape[0] in (3, 129) else 0.0
    eps = eps_for(int(np.prod(shape)) // shape[1])
    inputs, rm, rv = bn_inputs(mode, shape, axis, offset, rng, eps)
    assert_grads(gradcheck(bn_fn(mode, axis, rm, rv, eps), inputs))


def test_relu_without_z_equals_relu_with_zero_z():
    rng = rng_for("relu-no-z")
    x = rng.standard_normal((4, 3, 5))
    w, b, dy = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((4, 3, 5))
    kw = dict(training=True, momentum=0.1, eps=1e-5, activation="relu")
    f0 = batch_norm_forward(x, w, b, None, None, **kw)
    fz = batch_norm_forward(x, w, b, None, None, z=np.zeros_like(x), **kw)
    assert np.array_equal(f0.y, fz.y) and np.any(f0.y == 0)
    g0 = batch_norm_backward(dy, x, w, f0, training=True, activation="relu")
    gz = batch_norm_backward(dy, x, w, fz, training=True, activation="relu", has_z=True)
    assert g0[3] is None
    for a, b_ in zip(g0[:3], gz[:3], strict=True):
        assert np.array_equal(a, b_)
    assert np.array_equal(gz[3], np.where(fz.y > 0, dy, 0.0))


def test_frozen_backward_is_the_documented_formula():
    rng = rng_for("frozen")
    x, dy = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 4, 2))
    w, b, rm, rv = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4), 0.5 + rng.random(4)
    f = batch_norm_forward(x, w, b, rm, rv, training=True, momentum=0.1, eps=1e-3, use_global_stats=True)
    assert not f.batch_stats and np.array_equal(f.new_running_mean, rm) and np.array_equal(f.new_running_var, rv)
    assert f.new_num_batches_tracked == 0
    dx, dw, db, _ = batch_norm_backward(dy, x, w, f, training=True, use_global_stats=True)
    invstd = 1 / np.sqrt(rv + 1e-3)
    c = (slice(None), None)
    np.testing.assert_allclose(dx, dy * (w * invstd)[c], rtol=1e-14)
    np.testing.assert_allclose(dw, (dy * (x - rm[c]) * invstd[c]).sum(axis=(0, 2)), rtol=1e-13)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 2)), rtol=1e-14)


# --------------------------------------------------------------------------------------------------
# BatchNorm against torch (CPU, float64)


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_matches_torch(axis, training, affine):
    rng = rng_for("torch-bn", axis, training, affine)
    x = rng.standard_normal((5, 3, 4, 2)) * 2 + 1e3
    dy = rng.standard_normal(x.shape)
    w, b = (rng.standard_normal(3), rng.standard_normal(3)) if affine else (None, None)
    rm, rv = 1e3 + rng.standard_normal(3), 0.5 + rng.random(3)
    f = batch_norm_forward(to_axis(x, axis), w, b, rm, rv, training=training, momentum=0.3, eps=1e-5, axis=axis)
    dx, dw, db, _ = batch_norm_backward(to_axis(dy, axis), to_axis(x, axis), w, f, training=training, axis=axis,
                                        has_bias=affine)
    back = (lambda a: a) if axis == 1 else (lambda a: np.moveaxis(a, -1, 1))

    tx = torch.tensor(x, requires_grad=True)
    tw, tb = (torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)) if affine else (None, None)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    ty = F.batch_norm(tx, trm, trv, tw, tb, training, 0.3, 1e-5)
    ty.backward(torch.tensor(dy))
    assert close_to_torch(back(f.y), ty)
    assert close_to_torch(f.new_running_mean, trm) and close_to_torch(f.new_running_var, trv)
    assert close_to_torch(back(dx), tx.grad, 1e-11)
    if affine:
        assert close_to_torch(dw, tw.grad, 1e-11) and close_to_torch(db, tb.grad)
    else:
        assert dw is None and db is None


def test_batch_norm_fix_gamma_matches_torch_with_unit_weight():
    rng = rng_for("fix-gamma")
    x, dy = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    f = batch_norm_forward(x, w, b, None, None, training=True, momentum=0.1, eps=1e-5, fix_gamma=True)
    dx, dw, db, _ = batch_norm_backward(dy, x, w, f, training=True, fix_gamma=True)
    tx, tb = torch.tensor(x, requires_grad=True), torch.tensor(b, requires_grad=True)
    ty = F.batch_norm(tx, None, None, torch.ones(3, dtype=torch.float64), tb, True, 0.1, 1e-5)
    ty.backward(torch.tensor(dy))
    assert close_to_torch(f.y, ty) and close_to_torch(dx, tx.grad) and close_to_torch(db, tb.grad)
    assert np.array_equal(dw, np.zeros(3))


@pytest.mark.parametrize("momentum", [None, 0.1])
def test_running_stats_over_several_steps_match_torch(momentum):
    rng = rng_for("steps", momentum)
    bn = torch.nn.BatchNorm2d(3, momentum=momentum, dtype=torch.float64)
    bn.train()
    rm, rv, nbt = np.zeros(3), np.ones(3), 0
    batches = [rng.standard_normal((n, 3, 2, 3)) * (1 + k) + k for k, n in enumerate([2, 5, 1, 3])]
    for xb in batches:
        f = batch_norm_forward(xb, None, None, rm, rv, training=True, momentum=momentum, eps=1e-5,
                               num_batches_tracked=nbt)
        rm, rv, nbt = f.new_running_mean, f.new_running_var, f.new_num_batches_tracked
        with torch.no_grad():
            ty = bn(torch.tensor(xb))
        assert close_to_torch(f.y, ty)
    assert nbt == int(bn.num_batches_tracked) == 4
    assert close_to_torch(rm, bn.running_mean) and close_to_torch(rv, bn.running_var)
    if momentum is None:
        # A cumulative average: the plain mean of the batch means and of the unbiased batch variances
        # (starting values are weighted 0 by the first step's factor 1/1).
        means = np.stack([xb.mean(axis=(0, 2, 3)) for xb in batches])
        varis = np.stack([xb.var(axis=(0, 2, 3), ddof=1) for xb in batches])
        np.testing.assert_allclose(rm, means.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(rv, varis.mean(axis=0), rtol=1e-13)


def test_one_value_per_channel_in_training_raises_like_torch():
    x = np.ones((1, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training, got input size"):
        batch_norm_forward(x, None, None, np.zeros(3), np.ones(3), training=True, momentum=0.1, eps=1e-5)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        batch_norm_forward(np.ones((1, 3, 1, 1)), None, None, None, None, training=True, momentum=0.1, eps=1e-5)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(torch.ones(1, 3), None, None, training=True)
    # Running statistics normalize in evaluation and frozen training: one value is fine there.
    for training, ugs in ((False, False), (True, True)):
        f = batch_norm_forward(x, None, None, np.zeros(3), np.ones(3), training=training, momentum=0.1, eps=1e-5,
                               use_global_stats=ugs)
        assert f.y.shape == (1, 3)


@pytest.mark.parametrize("axis", [1, -1])
def test_empty_batch(axis):
    x = to_axis(np.zeros((0, 3, 4)), axis)
    rm, rv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.6, 0.7])
    w, b = np.ones(3), np.zeros(3)
    f = batch_norm_forward(x, w, b, rm, rv, training=True, momentum=0.1, eps=1e-5, axis=axis, num_batches_tracked=7)
    assert f.y.shape == x.shape and f.count == 0
    assert np.array_equal(f.new_running_mean, rm) and np.array_equal(f.new_running_var, rv)
    assert f.new_num_batches_tracked == 8  # torch's module counts the call before normalizing
    dx, dw, db, dz = batch_norm_backward(x, x, w, f, training=True, axis=axis, activation="relu", has_z=True)
    assert dx.shape == x.shape and dz.shape == x.shape
    assert np.array_equal(dw, np.zeros(3)) and np.array_equal(db, np.zeros(3))
    # torch agrees on the outputs and on leaving the running statistics alone.
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    ty = F.batch_norm(torch.zeros(0, 3, 4, dtype=torch.float64), trm, trv, training=True)
    assert ty.shape == (0, 3, 4) and close_to_torch(rm, trm) and close_to_torch(rv, trv)


def test_batch_norm_nan_propagates_within_its_channel():
    x = rng_for("bn-nan").standard_normal((4, 3, 2))
    x[1, 1, 0] = np.nan
    f = batch_norm_forward(x, None, None, None, None, training=True, momentum=0.1, eps=1e-5, activation="relu")
    assert np.all(np.isnan(f.y[:, 1])) and np.all(np.isfinite(f.y[:, [0, 2]]))
    dx, _, _, _ = batch_norm_backward(np.ones_like(x), x, None, f, training=True, activation="relu")
    assert np.all(np.isnan(dx[:, 1]))


def test_batch_norm_rejects_bad_arguments():
    x = np.zeros((2, 3, 4))
    kw = dict(training=True, momentum=0.1, eps=1e-5)
    with pytest.raises(ValueError, match="axis"):
        batch_norm_forward(x, None, None, None, None, axis=2, **kw)
    with pytest.raises(ValueError, match="weight"):
        batch_norm_forward(x, np.ones(4), None, None, None, **kw)
    with pytest.raises(ValueError, match="running_var"):
        batch_norm_forward(x, None, None, np.zeros(3), None, **kw)
    with pytest.raises(ValueError, match="activation"):
        batch_norm_forward(x, None, None, None, None, activation="gelu", **kw)
    with pytest.raises(ValueError, match="z"):
        batch_norm_forward(x, None, None, None, None, z=np.zeros((2, 3)), **kw)
    with pytest.raises(ValueError, match="use_global_stats"):
        batch_norm_forward(x, None, None, None, None, use_global_stats=True, **kw)
    with pytest.raises(ValueError, match="at least 2 dims"):
        batch_norm_forward(np.zeros(3), None, None, None, None, **kw)
    f = batch_norm_forward(x + np.arange(4), None, None, None, None, **kw)
    with pytest.raises(ValueError, match="use_global_stats"):
        batch_norm_backward(x, x, None, f, training=True, use_global_stats=True)


# --------------------------------------------------------------------------------------------------
# The SyncBatchNorm pieces: per-shard statistics, the merge, and the backward sums


def test_merge_stats_with_empty_shards_is_exact():
    rng = rng_for("merge")
    x = rng.standard_normal((6, 4, 3)) + 50
    one = shard_stats(x, 1)
    empty = shard_stats(x[:0], 1)
    assert empty[0] == 0 and np.array_equal(empty[1], np.zeros(4)) and np.array_equal(empty[2], np.zeros(4))
    for order in ([empty, one], [one, empty], [empty, empty, one, empty]):
        n, mean, m2 = merge_stats(*zip(*order, strict=True))
        assert n == one[0] and np.array_equal(mean, one[1]) and np.array_equal(m2, one[2])
    n, mean, m2 = merge_stats([0, 0], [np.zeros(4)] * 2, [np.zeros(4)] * 2)
    assert n == 0 and np.array_equal(mean, np.zeros(4)) and np.array_equal(m2, np.zeros(4))


@pytest.mark.parametrize("sizes", [[1, 5], [2, 2, 2], [5, 0, 1], [1, 1, 1, 1, 1, 1]], ids=str)
def test_merge_stats_of_shards_equals_whole_batch(sizes):
    rng = rng_for("merge-whole", tuple(sizes))
    # mean/std = 1e6: each x - mean carries ~ulp(1e4) = 1.8e-12 absolute error, 2e-10 of std, so M2 is
    # good to ~1e-9 whichever way it is formed; Chan's merge must not lose more than that.
    x = rng.standard_normal((sum(sizes), 3, 4)) * 0.01 + 1e4
    parts = np.split(x, np.cumsum(sizes)[:-1])
    n, mean, m2 = merge_stats(*zip(*(shard_stats(p, 1) for p in parts), strict=True))
    n0, mean0, m20 = shard_stats(x, 1)
    assert n == n0 == sum(sizes) * 4
    assert max_rel_err(mean, mean0) < 1e-15 and max_rel_err(m2, m20) < 2e-9
    xl = x.astype(np.longdouble)  # the exact M2, near enough: 80-bit where the platform has it
    exact = ((xl - xl.mean(axis=(0, 2), keepdims=True)) ** 2).sum(axis=(0, 2))
    assert max_rel_err(m2, np.asarray(exact, np.float64)) < 2e-9


def test_merge_stats_is_reproducible_and_rejects_bad_input():
    stats = [shard_stats(rng_for("rep", k).standard_normal((k + 1, 2)), 1) for k in range(4)]
    a = merge_stats(*zip(*stats, strict=True))
    b = merge_stats(*zip(*stats, strict=True))
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
    with pytest.raises(ValueError):
        merge_stats([1], [np.zeros(2)], [])
    with pytest.raises(ValueError):
        merge_stats([-1], [np.zeros(2)], [np.zeros(2)])


def run_sharded(shards, zs, dys, w, b, rm, rv, *, axis, activation, momentum, eps, nbt):
    """One SyncBN step over simulated ranks, built only from the per-rank pieces and two exchanges."""
    # Forward: every rank computes its (count, mean, M2); "all-gather" = the list; merge in rank order.
    gathered = [shard_stats(xk, axis) for xk in shards]
    count, mean, m2 = merge_stats(*zip(*gathered, strict=True))
    invstd = invstd_from_stats(count, m2, eps)
    ys = [batch_norm_normalize(xk, mean, invstd, w, b, axis=axis, activation=activation, z=zk)
          for xk, zk in zip(shards, zs, strict=True)]
    new_rm, new_rv, new_nbt = update_running_stats(rm, rv, count, mean, m2, momentum, nbt)
    # Backward: every rank forms its two sums; "all-reduce" = add them in rank order; local dx.
    gs = [activation_backward(dyk, yk, activation) for dyk, yk in zip(dys, ys, strict=True)]
    sums = [backward_sums(gk, xk, mean, invstd, axis) for gk, xk in zip(gs, shards, strict=True)]
    sum_dy = sum(s[0] for s in sums)
    sum_dy_xhat = sum(s[1] for s in sums)
    dxs = [input_grad_from_sums(gk, xk, w, mean, invstd, sum_dy, sum_dy_xhat, count, axis)
           for gk, xk in zip(gs, shards, strict=True)]
    return ys, (new_rm, new_rv, new_nbt), dxs, sum_dy_xhat, sum_dy, gs


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("sizes", [[0, 1, 5], [4, 4], [3, 0, 7]], ids=str)
def test_sharded_batch_norm_equals_unsharded(sizes, activation, axis):
    rng = rng_for("sharded", tuple(sizes), activation, axis)
    n = sum(sizes)
    x = to_axis(rng.standard_normal((n, 3, 2, 3)) * 2 + 1e3, axis)
    z = rng.standard_normal(x.shape) if activation else None
    dy = rng.standard_normal(x.shape)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), 0.5 + rng.random(3)
    eps, momentum = 1e-5, 0.1

    f = batch_norm_forward(x, w, b, rm, rv, training=True, momentum=momentum, eps=eps, axis=axis,
                           activation=activation, z=z, num_batches_tracked=3)
    dx, dw, db, dz = batch_norm_backward(dy, x, w, f, training=True, axis=axis, activation=activation,
                                         has_z=z is not None)

    cuts = np.cumsum(sizes)[:-1]
    shards, dys = np.split(x, cuts), np.split(dy, cuts)
    zs = np.split(z, cuts) if z is not None else [None] * len(sizes)
    ys, (srm, srv, snbt), dxs, sdw, sdb, gs = run_sharded(shards, zs, dys, w, b, rm, rv, axis=axis,
                                                         activation=activation, momentum=momentum, eps=eps, nbt=3)
    assert [len(d) for d in dxs] == sizes
    assert max_rel_err(np.concatenate(ys), f.y) < 1e-12
    assert max_rel_err(srm, f.new_running_mean) < 1e-14 and max_rel_err(srv, f.new_running_var) < 1e-11
    assert snbt == f.new_num_batches_tracked == 4
    assert max_rel_err(np.concatenate(dxs), dx) < 1e-10
    assert max_rel_err(sdw, dw) < 1e-11 and max_rel_err(sdb, db) < 1e-13
    if z is not None:
        assert np.array_equal(np.concatenate(gs), dz)


def test_max_rel_err_least_scale():
    """The error is measured against max|expected|, or ``least_scale`` where that is larger; a zero reference
    against 1."""
    e = np.array([3e-4, -1e-4])
    a = e + np.array([1e-6, 0.0])
    assert max_rel_err(a, e) == pytest.approx(1e-6 / 3e-4)
    assert max_rel_err(a, e, 16.0) == pytest.approx(1e-6 / 16.0)
    assert max_rel_err(a, e, 1e-5) == pytest.approx(1e-6 / 3e-4)
    assert max_rel_err(np.array([1e-3]), np.zeros(1)) == pytest.approx(1e-3)
