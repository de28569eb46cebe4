"""Property-based tests (hypothesis): random shapes, strides, dtypes and options of every op against the
float64 NumPy reference, forward and backward.

Runs the Triton kernels through the interpreter on the CPU (on CUDA tensors where there is a GPU). Kept
bounded for CI: tiny shapes, a small ``max_examples``, ``deadline=None`` (the interpreter's first call of a
kernel variant is slow) and ``derandomize=True`` so every CI run draws the same examples.

What is drawn:

* LayerNorm / RMSNorm: rows (1 or 2 leading dims), row length (incl. 1, primes, powers of two and one past),
  1 or 2 normalized dims, dtype (fp32/fp16/bf16/fp64), weight/bias presence and dtype (x's or fp32),
  ``weight_offset``, a fused residual with ``residual_dtype``, eps, the data's offset and scale, and the memory
  layout of x, of the residual and of every grad_output (contiguous, transposed, sliced with steps, a row
  stride).
* BatchNorm: N, C and 0 to 3 spatial dims, dtype, parameter dtype, layout (NCHW, channels-last, sliced),
  mode (training with or without running statistics, evaluation, ``use_global_stats``), momentum (incl. 0, 1
  and None), affine, ``fix_gamma``, ReLU, a residual ``z``, the layout of dy.

Checked: outputs, residual outputs and running statistics within the accuracy contract of
``fastnorm.reference.tolerances`` (via ``helpers.assert_close``); input and parameter gradients within the same
tolerances, measured against ``max(max|expected|, size of the terms that cancel)`` — see ``_assert_grad``: a
random draw (a row of 2, a channel of 2 values) can make a gradient cancel to nearly zero, where no finite
precision computation has normwise accuracy and even float32 torch is off by 15%.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastnorm
from fastnorm import reference as R
from fastnorm.reference.tolerances import OUTPUT_TOL, PARAM_GRAD_TOL
from helpers import DTYPE_NAMES, assert_close, to_np64

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
ROW_LENGTHS = [1, 2, 3, 5, 8, 13, 31, 32, 33, 64, 65, 100, 127, 128, 129, 256, 257]
LAYOUTS = ["contiguous", "transposed", "steps", "row-stride"]

#: Examples per property (LayerNorm/RMSNorm, BatchNorm); FASTNORM_HYPOTHESIS_EXAMPLES overrides both (the sanitizer
#: script lowers it: every launch is slow under compute-sanitizer). The LN/RMS backward is the slower one under the
#: interpreter, hence fewer examples.
_OVERRIDE = os.environ.get("FASTNORM_HYPOTHESIS_EXAMPLES")
NORM_EXAMPLES = int(_OVERRIDE or 30)
BN_EXAMPLES = int(_OVERRIDE or 50)
_COMMON = dict(deadline=None, derandomize=True, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SETTINGS = settings(max_examples=NORM_EXAMPLES, **_COMMON)
BN_SETTINGS = settings(max_examples=BN_EXAMPLES, **_COMMON)


def _values(shape, seed, scale=1.0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset


def _in_layout(v64: torch.Tensor, dtype: torch.dtype, layout: str) -> torch.Tensor:
    """The values ``v64`` (any rank >= 1) rounded to ``dtype`` and stored in the named memory layout."""
    v = v64.to(dtype)
    shape = v.shape
    if layout == "contiguous" or v.dim() == 0:
        return v.to(DEVICE)
    if layout == "transposed":
        if v.dim() < 2:
            return v.to(DEVICE)
        t = torch.empty((*shape[:-2], shape[-1], shape[-2]), dtype=dtype, device=DEVICE).transpose(-1, -2)
    elif layout == "steps":
        big = torch.full((*shape[:-1], 2 * shape[-1]), float("nan"), dtype=dtype, device=DEVICE)
        t = big[..., ::2]
        if v.dim() >= 2:
            big = torch.full((2 * shape[0], *shape[1:-1], 2 * shape[-1]), float("nan"), dtype=dtype, device=DEVICE)
            t = big[::2, ..., ::2]
    else:  # row-stride: unit stride inside a row, padded rows
        big = torch.full((*shape[:-1], shape[-1] + 3), float("nan"), dtype=dtype, device=DEVICE)
        t = big[..., 1:shape[-1] + 1]
    t.copy_(v)
    return t


def _assert_grad(what, actual, expected, dtype, term_scale, param_grad=False):
    """``max|actual - expected| <= tol(dtype) * max(max|expected|, term_scale)``.

    ``term_scale`` is the size of the terms the gradient is a sum or difference of (for dx: max|dy·w|·rstd, the
    size of each term of ``rstd·(g − mean(g) − x̂·mean(g·x̂))``; for a parameter gradient: the largest sum of
    absolute terms). When the terms cancel to far below their own size the normwise error measure would
    demand more than the working precision can give; this floor keeps the check at the precision of the
    terms. NaN/Inf must not appear (the drawn inputs are finite).
    """
    tol = (PARAM_GRAD_TOL if param_grad else OUTPUT_TOL)[DTYPE_NAMES[dtype]]
    a = to_np64(actual)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} vs {e.shape}"
    assert np.isfinite(a).all(), f"{what}: non-finite values"
    if a.size == 0:
        return
    scale = max(float(np.max(np.abs(e))), float(term_scale), np.finfo(np.float64).tiny)
    err = float(np.max(np.abs(a - e))) / scale
    assert err <= tol, f"{what}: error {err:.3g} (of max(|expected|, term size) = {scale:.3g}) > {tol:g} ({dtype})"


# ====================================================================================== LayerNorm / RMSNorm


@st.composite
def norm_cases(draw):
    is_rms = draw(st.booleans())
    dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.sampled_from(ROW_LENGTHS))
    nd = 1
    nshape = (n,)
    if n in (8, 32, 64, 100, 128, 256) and draw(st.booleans()):
        nd, nshape = 2, (n // 4, 4)
    lead = draw(st.sampled_from([(1,), (2,), (3,), (5,), (2, 3), (1, 4)]))
    has_w = draw(st.booleans())
    has_b = (not is_rms) and draw(st.booleans())
    w_dtype = draw(st.sampled_from([dtype, torch.float32]))
    offset_w = has_w and draw(st.booleans())
    residual = draw(st.booleans())
    residual_dtype = draw(st.sampled_from([None, torch.float32])) if residual else None
    # eps values exact in float32: Triton's interpreter passes every Python float scalar to a kernel as float32
    # (whatever its annotation), which would round a float64 eps; the GPU script checks float64 eps on the GPU
    eps = draw(st.sampled_from([2.0**-17, 2.0**-10, 0.0] if not is_rms else [None, 2.0**-20, 2.0**-7]))
    scale, offset = draw(st.sampled_from([(1.0, 0.0), (3.0, 2.0), (0.05, 1.0)]))
    x_layout = draw(st.sampled_from(LAYOUTS))
    dy_layout = draw(st.sampled_from(LAYOUTS))
    r_layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2**16))
    if eps == 0.0 and (scale < 1 or math.prod(nshape) < 8):  # eps 0 only on long, well-spread rows
        eps = 2.0**-17
    return dict(is_rms=is_rms, dtype=dtype, nshape=nshape, nd=nd, lead=lead, has_w=has_w, has_b=has_b,
                w_dtype=w_dtype, weight_offset=1.0 if offset_w else 0.0, residual=residual,
                residual_dtype=residual_dtype, eps=eps, scale=scale, offset=offset, x_layout=x_layout,
                dy_layout=dy_layout, r_layout=r_layout, seed=seed)


@SETTINGS
@given(case=norm_cases())
def test_norms_match_reference(case):
    c = case
    dtype, nd, nshape = c["dtype"], c["nd"], c["nshape"]
    shape = (*c["lead"], *nshape)
    s = c["seed"]
    x = _in_layout(_values(shape, s, c["scale"], c["offset"]), dtype, c["x_layout"]).requires_grad_()
    w = b = r = None
    if c["has_w"]:
        w = (_values(nshape, s + 1) * 0.5 + (0.0 if c["weight_offset"] else 1.0)).to(c["w_dtype"]).to(DEVICE)
        w.requires_grad_()
    if c["has_b"]:
        b = _values(nshape, s + 2).to(c["w_dtype"]).to(DEVICE).requires_grad_()
    kw = {"weight_offset": c["weight_offset"]}
    if c["residual"]:
        r = _in_layout(_values(shape, s + 3), dtype, c["r_layout"]).requires_grad_()
        kw.update(residual=r, residual_dtype=c["residual_dtype"])
    eps = c["eps"]
    if c["is_rms"]:
        out = fastnorm.rms_norm(x, nshape, w, eps, **kw)
        eps_val = torch.finfo(dtype).eps if eps is None else eps
    else:
        out = fastnorm.layer_norm(x, nshape, w, b, eps, **kw)
        eps_val = eps
    y, s_out = out if c["residual"] else (out, None)
    assert y.shape == x.shape and y.dtype == dtype
    dy = _in_layout(_values(shape, s + 4), dtype, c["dy_layout"])
    grads = [dy]
    outs = [y]
    if s_out is not None:
        rdt = c["residual_dtype"] or dtype
        assert s_out.dtype == rdt and s_out.shape == x.shape
        ds = _in_layout(_values(shape, s + 5), rdt, c["dy_layout"])
        outs.append(s_out)
        grads.append(ds)
    torch.autograd.backward(outs, grads)

    # the reference, on the exact values the kernels saw (the normalized input: x, or residual_out)
    if s_out is not None:
        exact = to_np64(x) + to_np64(r)
        assert_close("residual_out", s_out, exact, s_out.dtype)
        s64 = to_np64(s_out)
    else:
        s64 = to_np64(x)
    w64 = None if w is None else to_np64(w) + c["weight_offset"]
    dy64 = to_np64(dy)
    if c["is_rms"]:
        ry, rstd = R.rms_norm_forward(s64, w64, eps_val, nd)
        rds, rdw = R.rms_norm_backward(dy64, s64, w64, rstd, nd)
        rdb = None
    else:
        ry, mean, rstd = R.layer_norm_forward(s64, w64, None if b is None else to_np64(b), eps_val, nd)
        rds, rdw, rdb = R.layer_norm_backward(dy64, s64, w64, mean, rstd, nd, has_bias=b is not None)
    assert_close("y", y, ry, dtype)
    # sizes of the terms each gradient is made of (see _assert_grad)
    g64 = dy64 if w64 is None else dy64 * w64
    xhat = ry if (w is None and b is None) else None
    if xhat is None:
        xhat = (R.rms_norm_forward(s64, None, eps_val, nd)[0] if c["is_rms"]
                else R.layer_norm_forward(s64, None, None, eps_val, nd)[0])
    red = tuple(range(len(c["lead"])))
    dx_terms = float(np.max(np.abs(g64))) * float(np.max(rstd))
    if s_out is not None:
        rds = rds + to_np64(grads[1])
        dx_terms += float(np.max(np.abs(to_np64(grads[1]))))
        # dx and dresidual are the same gradient, rounded to x's and the residual's dtypes
        _assert_grad("dresidual", r.grad, rds, dtype, dx_terms)
    assert x.grad.dtype == dtype
    _assert_grad("dx", x.grad, rds, dtype, dx_terms)
    if w is not None:
        assert w.grad.dtype == w.dtype
        _assert_grad("dweight", w.grad, rdw, c["w_dtype"], np.max(np.sum(np.abs(dy64 * xhat), axis=red)), True)
    if b is not None:
        assert b.grad.dtype == b.dtype
        _assert_grad("dbias", b.grad, rdb, c["w_dtype"], np.max(np.sum(np.abs(dy64), axis=red)), True)


# ====================================================================================== BatchNorm


@st.composite
def bn_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    p_dtype = draw(st.sampled_from([torch.float32, dtype]))
    n = draw(st.integers(1, 4))
    c = draw(st.sampled_from([1, 2, 3, 5, 8, 17]))
    spatial = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    mode = draw(st.sampled_from(["train", "train-no-running", "eval", "global-stats", "eval-no-running"]))
    if mode.startswith("train") or mode == "eval-no-running":  # batch statistics need 2+ values per channel
        if n * math.prod(spatial) < 2:
            n = 2
    layout = draw(st.sampled_from(["contiguous", "channels-last", "steps"]))
    dy_layout = draw(st.sampled_from(["contiguous", "channels-last", "steps"]))
    momentum = draw(st.sampled_from([0.1, 0.0, 1.0, 0.5, None]))
    affine = draw(st.sampled_from(["both", "weight", "none"]))
    fix_gamma = affine != "none" and draw(st.booleans())
    relu = draw(st.booleans())
    with_z = draw(st.booleans())
    scale, offset = draw(st.sampled_from([(1.0, 0.0), (2.0, 3.0), (0.1, -1.0)]))
    eps = draw(st.sampled_from([1e-5, 1e-3]))
    seed = draw(st.integers(0, 2**16))
    return dict(dtype=dtype, p_dtype=p_dtype, shape=(n, c, *spatial), mode=mode, layout=layout, dy_layout=dy_layout,
                momentum=momentum, affine=affine, fix_gamma=fix_gamma, relu=relu, with_z=with_z, scale=scale,
                offset=offset, eps=eps, seed=seed)


def _bn_layout(v64: torch.Tensor, dtype: torch.dtype, layout: str) -> torch.Tensor:
    v = v64.to(dtype)
    if layout == "channels-last" and v.dim() >= 3:
        perm = (0, *range(2, v.dim()), 1)
        t = torch.empty([v.shape[i] for i in perm], dtype=dtype, device=DEVICE)
        inv = [perm.index(i) for i in range(v.dim())]
        t = t.permute(inv)
        t.copy_(v)
        return t
    if layout == "steps":
        big = torch.full((2 * v.shape[0], *v.shape[1:]), float("nan"), dtype=dtype, device=DEVICE)
        t = big[::2]
        t.copy_(v)
        return t
    return v.to(DEVICE)


@BN_SETTINGS
@given(case=bn_cases())
def test_batch_norm_matches_reference(case):
    c = case
    dtype, p_dtype, shape = c["dtype"], c["p_dtype"], c["shape"]
    ch = shape[1]
    s = c["seed"]
    x = _bn_layout(_values(shape, s, c["scale"], c["offset"]), dtype, c["layout"]).requires_grad_()
    w = b = None
    if c["affine"] in ("both", "weight"):
        w = (torch.rand(ch, generator=torch.Generator().manual_seed(s + 1), dtype=torch.float64) + 0.5)
        w = w.to(p_dtype).to(DEVICE).requires_grad_()
    if c["affine"] == "both":
        b = _values((ch,), s + 2).to(p_dtype).to(DEVICE).requires_grad_()
    running = c["mode"] in ("train", "eval", "global-stats")
    rm = rv = None
    if running:
        rm = _values((ch,), s + 3).to(p_dtype).to(DEVICE)
        rv = (torch.rand(ch, generator=torch.Generator().manual_seed(s + 4), dtype=torch.float64) + 0.5)
        rv = rv.to(p_dtype).to(DEVICE)
    # copies: to_np64 of a CPU float64 tensor shares its memory, and the op updates rm/rv in place
    rm64 = None if rm is None else to_np64(rm).copy()
    rv64 = None if rv is None else to_np64(rv).copy()
    z = _bn_layout(_values(shape, s + 5), dtype, c["dy_layout"]).requires_grad_() if c["with_z"] else None
    training = c["mode"] in ("train", "train-no-running", "global-stats")
    ugs = c["mode"] == "global-stats"
    prior = 3  # batches already counted; the op takes the incremented count, the reference the prior one
    nbt = torch.tensor(prior + 1, dtype=torch.long, device=DEVICE)
    act = "relu" if c["relu"] else None
    y = fastnorm.batch_norm(x, rm, rv, w, b, training, c["momentum"], c["eps"], use_global_stats=ugs,
                            fix_gamma=c["fix_gamma"], activation=act, z=z, num_batches_tracked=nbt)
    assert y.shape == x.shape and y.dtype == dtype
    if c["layout"] == "channels-last" and x.dim() >= 3:
        assert y.stride() == x.stride(), "y does not keep x's channels-last layout"
    dy = _bn_layout(_values(shape, s + 6), dtype, c["dy_layout"])
    y.backward(dy)

    fwd = R.batch_norm_forward(to_np64(x), None if w is None else to_np64(w), None if b is None else to_np64(b),
                               rm64, rv64, training=training, momentum=c["momentum"], eps=c["eps"],
                               use_global_stats=ugs, fix_gamma=c["fix_gamma"], activation=act,
                               z=None if z is None else to_np64(z), num_batches_tracked=prior)
    assert_close("y", y, fwd.y, dtype)
    # the ReLU mask is the forward's own output (documented): give the reference fastnorm's y for it
    fwd_masked = dataclasses.replace(fwd, y=to_np64(y))
    rdx, rdw, rdb, rdz = R.batch_norm_backward(to_np64(dy), to_np64(x), None if w is None else to_np64(w),
                                               fwd_masked, training=training, use_global_stats=ugs,
                                               fix_gamma=c["fix_gamma"], activation=act, has_z=z is not None,
                                               has_bias=b is not None)
    # sizes of the terms each gradient is made of (see _assert_grad)
    g64 = to_np64(dy) if act is None else np.where(to_np64(y) <= 0, 0.0, to_np64(dy))
    view = (1, ch) + (1,) * (len(shape) - 2)
    w_eff = np.ones(ch) if (w is None or c["fix_gamma"]) else to_np64(w)
    red = (0, *range(2, len(shape)))
    xhat = (to_np64(x) - fwd.mean.reshape(view)) * fwd.invstd.reshape(view)
    _assert_grad("dx", x.grad, rdx, dtype, float(np.max(np.abs(g64) * (w_eff * fwd.invstd).reshape(view))))
    if w is not None:
        assert w.grad.dtype == p_dtype
        _assert_grad("dweight", w.grad, rdw, p_dtype, np.max(np.sum(np.abs(g64 * xhat), axis=red)), True)
    if b is not None:
        assert b.grad.dtype == p_dtype
        _assert_grad("dbias", b.grad, rdb, p_dtype, np.max(np.sum(np.abs(g64), axis=red)), True)
    if z is not None:
        assert_close("dz", z.grad, rdz, dtype)
    if running:
        assert_close("running_mean", rm, fwd.new_running_mean, p_dtype, param_grad=True)
        assert_close("running_var", rv, fwd.new_running_var, p_dtype, param_grad=True)


def test_settings_are_bounded_and_reproducible():
    """The CI contract of this file: few examples, no deadline, the same examples every run."""
    for st_ in (SETTINGS, BN_SETTINGS):
        assert st_.max_examples <= 100 and st_.deadline is None and st_.derandomize


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layout_helper_keeps_values(layout):
    v = _values((3, 5), 0)
    t = _in_layout(v, torch.float32, layout)
    assert torch.equal(t.cpu().double(), v.float().double())
    if layout != "contiguous":
        assert not t.is_contiguous()
