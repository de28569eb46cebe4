"""fastnorm.batch_norm against the float64 NumPy reference: forward, backward and running statistics in
every mode (training, evaluation, frozen), both layouts, 1d/2d/3d shapes, options, edge cases and errors.

Interpreter-sized shapes (CI runs these through Triton's interpreter on CPU); the same tests run on CUDA.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

import fastnorm
from fastnorm import reference as ref
from fastnorm.kernels import batch_norm as K
from fastnorm.kernels import config
from fastnorm.kernels._exchange import SYNC_BUFFERS
from helpers import (
    assert_close,
    channels_last_blocks,
    forget_replays,
    frozen_flat_everywhere,
    poisoned_like,
    rows_everywhere,
    sum_terms_scale,
    to_np64,
    watch_replays,
)

# (shape, channels_last): 1d/2d/3d, C = 1, 3, 65, 129, spatial 1x1, batch 1 with spatial > 1, uneven sizes.
SHAPES = [
    ((6, 3), False),
    ((5, 65), False),
    ((3, 3, 7), False),
    ((1, 5, 9), False),
    ((2, 129, 3), False),
    ((3, 1, 4, 5), False),
    ((3, 1, 4, 5), True),
    ((2, 3, 5, 7), False),
    ((2, 3, 5, 7), True),
    ((4, 65, 1, 1), False),
    ((1, 129, 2, 3), True),
    ((2, 3, 2, 3, 4), False),
    ((2, 3, 2, 3, 4), True),
]


def _make(shape, channels_last, dtype, device, seed=0, pdtype=torch.float32, requires_grad=True):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g).to(dtype)
    c = shape[1]
    w = (torch.rand(c, generator=g) + 0.5).to(pdtype)
    b = torch.randn(c, generator=g).to(pdtype)
    rm = torch.randn(c, generator=g)
    rv = torch.rand(c, generator=g) + 0.5
    x = x.to(device)
    if channels_last:
        x = x.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
    w, b, rm, rv = (t.to(device) for t in (w, b, rm, rv))
    if requires_grad:
        x.requires_grad_(True)
        w.requires_grad_(True)
        b.requires_grad_(True)
    return x, w, b, rm, rv


def _np(t):
    return None if t is None else to_np64(t)


def _check_bn(x, w, b, rm, rv, *, training, momentum=0.1, eps=1e-5, use_global_stats=False, fix_gamma=False,
              activation=None, z=None, dtype=None, seed=1, dy_like_x=False, create_graph=False):
    """Run fastnorm forward + backward and compare everything with the reference; dy is NCHW-contiguous, or in
    x's layout with ``dy_like_x``; ``create_graph``: the backward that makes gradients differentiable again (dx then
    has a grad_fn)."""
    dtype = dtype or x.dtype
    rm0 = None if rm is None else rm.clone()
    rv0 = None if rv is None else rv.clone()
    y = fastnorm.batch_norm(x, rm, rv, w, b, training, momentum, eps, use_global_stats=use_global_stats,
                            fix_gamma=fix_gamma, activation=activation, z=z)
    assert y.shape == x.shape and y.dtype == x.dtype and y.stride() == x.stride()
    fwd = ref.batch_norm_forward(_np(x), _np(w), _np(b), _np(rm0), _np(rv0), training=training, momentum=momentum,
                                 eps=eps, use_global_stats=use_global_stats, fix_gamma=fix_gamma,
                                 activation=activation, z=_np(z))
    assert_close("y", y, fwd.y, dtype)
    if rm is not None:
        assert_close("running_mean", rm, fwd.new_running_mean, rm.dtype)
        assert_close("running_var", rv, fwd.new_running_var, rv.dtype)
    gen = torch.Generator().manual_seed(seed)
    dy = torch.randn(x.shape, generator=gen).to(x.dtype).to(x.device)
    if dy_like_x:
        dy = torch.empty_like(x).copy_(dy)
    inputs = [t for t in (x, w, b, z) if t is not None and t.requires_grad]
    grads = torch.autograd.grad(y, inputs, dy, create_graph=create_graph)
    got = dict(zip([id(t) for t in inputs], grads, strict=True))
    if create_graph and x.requires_grad:
        assert got[id(x)].grad_fn is not None
    # The ReLU mask is the forward's own output (as autograd's): where y lies within rounding of 0, float64's y may
    # fall on the other side (one suspect, not confirmed, of session 27's rare dγ failures at GPU-only model sizes).
    masked = dataclasses.replace(fwd, y=_np(y)) if activation == "relu" else fwd
    dx, dw, db, dz = ref.batch_norm_backward(_np(dy), _np(x), _np(w), masked, training=training,
                                             use_global_stats=use_global_stats, fix_gamma=fix_gamma,
                                             activation=activation, has_z=z is not None, has_bias=b is not None)
    if x.requires_grad:
        assert got[id(x)].stride() == x.stride()
        assert_close("dx", got[id(x)], dx, dtype)
    # dγ and dβ sum over each channel: with few channels (C = 1) one can cancel to near zero, so the error is also
    # measured against the size of its terms.
    g = ref.activation_backward(_np(dy), masked.y, activation)
    axes = (0, *range(2, x.dim()))
    xhat = ref.batch_norm_normalize(_np(x), masked.mean, masked.invstd, None, None)
    if w is not None and w.requires_grad:
        assert_close("dweight", got[id(w)], dw, w.dtype, param_grad=True, terms_scale=sum_terms_scale(g * xhat, axes))
    if b is not None and b.requires_grad:
        assert_close("dbias", got[id(b)], db, b.dtype, param_grad=True, terms_scale=sum_terms_scale(g, axes))
    if z is not None and z.requires_grad:
        assert_close("dz", got[id(z)], dz, dtype)
    return y


@pytest.fixture(params=["resident", "streamed"])
def train_path(request, monkeypatch):
    """Both training-forward designs: the single-read resident kernel (which every shape here fits) and the
    statistics + apply kernels of tensors too large for it."""
    monkeypatch.setattr(config, "BN_RESIDENT", request.param == "resident")
    return request.param


@pytest.mark.parametrize("shape,cl", SHAPES)
def test_training_fp32(shape, cl, train_path, device):
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    _check_bn(x, w, b, rm, rv, training=True)


@pytest.mark.parametrize("shape,cl", SHAPES[::2])
def test_eval_fp32(shape, cl, device):
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    _check_bn(x, w, b, rm, rv, training=False)


@pytest.mark.parametrize("shape,cl", SHAPES[1::3])
def test_frozen_training_fp32(shape, cl, device):
    """use_global_stats: running statistics normalize, stay untouched, and the backward is the frozen one."""
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    rm0, rv0 = rm.clone(), rv.clone()
    _check_bn(x, w, b, rm, rv, training=True, use_global_stats=True)
    assert torch.equal(rm, rm0) and torch.equal(rv, rv0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape,cl", [((4, 65, 3), False), ((2, 3, 5, 7), True), ((2, 3, 4, 5), False),
                                      ((3, 130, 2, 3), True)])  # 16-bit rows of 256 bytes a tile: 128 + 2 channels
@pytest.mark.parametrize("training", [True, False])
def test_low_precision_fp32_params(dtype, shape, cl, training, train_path, device):
    x, w, b, rm, rv = _make(shape, cl, dtype, device)
    _check_bn(x, w, b, rm, rv, training=training)


@pytest.mark.parametrize("shape,cl", [((3, 5, 6), False), ((2, 3, 4, 4), True)])
def test_input_dtype_params(shape, cl, device):
    x, w, b, rm, rv = _make(shape, cl, torch.bfloat16, device, pdtype=torch.bfloat16)
    rm, rv = rm.to(torch.bfloat16), rv.to(torch.bfloat16)
    _check_bn(x, w, b, rm, rv, training=True)


def test_float64(train_path, device):
    x, w, b, rm, rv = _make((3, 5, 4, 3), False, torch.float64, device, pdtype=torch.float64)
    rm, rv = rm.double(), rv.double()
    _check_bn(x, w, b, rm, rv, training=True)
    _check_bn(x, w, b, rm, rv, training=False)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("cl", [False, True])
def test_relu_residual(training, cl, train_path, device):
    x, w, b, rm, rv = _make((3, 5, 4, 3), cl, torch.float32, device)
    z = torch.randn(x.shape, device=device).to(memory_format=torch.channels_last if cl else torch.contiguous_format)
    z.requires_grad_(True)
    _check_bn(x, w, b, rm, rv, training=training, activation="relu", z=z)
    _check_bn(x, w, b, rm.clone(), rv.clone(), training=training, activation="relu")
    _check_bn(x, w, b, rm.clone(), rv.clone(), training=training, z=z)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("wants", ["x", "w", "b", "z", "wz", "bz", "xz", "wb"])
def test_gradient_subsets(training, wants, device):
    """Any subset of x, weight, bias and z asking for gradients, with ReLU and z fused: each gradient matches the
    reference (dz without dx, beside the parameter sums, once came back unwritten)."""
    x, w, b, rm, rv = _make((3, 5, 4, 3), False, torch.float32, device, seed=3, requires_grad=False)
    z = torch.randn(x.shape, generator=torch.Generator().manual_seed(9)).to(device)
    for t, name in ((x, "x"), (w, "w"), (b, "b"), (z, "z")):
        t.requires_grad_(name in wants)
    _check_bn(x, w, b, rm, rv, training=training, activation="relu", z=z)


@pytest.mark.parametrize("training", [True, False])
def test_fix_gamma_and_no_affine(training, device):
    x, w, b, rm, rv = _make((4, 6, 5), False, torch.float32, device)
    _check_bn(x, w, b, rm, rv, training=training, fix_gamma=True)
    _check_bn(x, None, None, rm.clone(), rv.clone(), training=training)
    _check_bn(x, w, None, None, None, training=training)  # no running stats: batch statistics


@pytest.mark.parametrize("cl", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_offset_and_constant_channels(cl, dtype, train_path, device):
    """A channel of 1e4 + randn keeps all its digits (shifted statistics); a constant channel at 1e7 has
    variance 0: y = bias, and its dx = w/sqrt(eps)·(g − mean(g))."""
    x, w, b, rm, rv = _make((4, 3, 5, 3), cl, dtype, device, requires_grad=False)
    x = x.detach().clone()
    x[:, 0] = (torch.randn(4, 5, 3, device=device) + 1e4).to(dtype)
    x[:, 2] = 1e7
    x.requires_grad_(True)
    w.requires_grad_(True)
    b.requires_grad_(True)
    _check_bn(x, w, b, rm, rv, training=True)


@pytest.mark.parametrize("cl", [False, True])
def test_offset_channels_with_spikes(monkeypatch, cl, device):
    """On tiles small enough that every lane of the statistics pass sees many values and the backward's sums run
    over many tiles, in fp32: a channel of 1e4 + randn (sums of raw values would lose its variance, and a backward
    that subtracted its mean after summing g·x its gradient), the same with a spike of 1e6 at its first element
    (the per-channel shift x[0, c, 0]: sums shifted by it alone would lose the rest), and randn with spikes of
    -1e6 at the first element of every image; then every channel offset without spikes (the backward's x̂ must
    keep the rounding error of its centre, mean = ctr + err)."""
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 16, "bwd": 16, "sums": 16})
    monkeypatch.setattr(config, "BN_STATS_WAVE", 1)
    monkeypatch.setattr(config, "BN_STATS_WAVE_BY_DEVICE", {})
    monkeypatch.setattr(config, "BN_SUMS_WAVE", 1)
    monkeypatch.setattr(config, "BN_ITEM", {"fused": 128, "stream": 128})
    channels_last_blocks(monkeypatch, 4)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    x, w, b, rm, rv = _make((9, 3, 6, 7), cl, torch.float32, device, requires_grad=False)
    x = x.detach().clone()
    offset = x + torch.tensor([3e4, -1e4, 7e3], device=device)[:, None, None]  # every channel offset, no spike
    x[:, :2] += 1e4
    x[0, 1, 0, 0] = 1e6
    x[:, 2, 0, 0] = -1e6
    for t in (x, offset, w, b):
        t.requires_grad_(True)
    _check_bn(x, w, b, rm, rv, training=True)
    _check_bn(offset, w, b, rm, rv, training=True)  # (errors are normwise: spikes would set the scale)


@pytest.mark.parametrize("training,ugs", [(True, False), (True, True), (False, False)])
@pytest.mark.parametrize("cl", [False, True])
def test_fix_gamma_weight_gradient_is_zero_in_a_nan_channel(training, ugs, cl, device):
    """fix_gamma: γ's gradient is 0 — in a channel holding a NaN too (Σg·x̂ is NaN there, 0·NaN would be NaN)."""
    x, w, b, rm, rv = _make((3, 4, 5, 2), cl, torch.float32, device, requires_grad=False)
    x = x.detach().clone()
    x[1, 2, 0, 0] = float("nan")
    x.requires_grad_(True)
    w.requires_grad_(True)
    y = fastnorm.batch_norm(x, rm, rv, w, b, training, 0.1, 1e-5, use_global_stats=ugs, fix_gamma=True)
    (dw,) = torch.autograd.grad(y, (w,), torch.randn_like(y))
    assert torch.equal(dw, torch.zeros_like(dw))


@pytest.mark.parametrize("momentum", [0.1, None, 0.0, 1.0])
@pytest.mark.parametrize("cl", [False, True])
def test_running_stats_after_k_steps(momentum, cl, train_path, device):
    m = fastnorm.nn.BatchNorm2d(3, momentum=momentum).to(device)
    rm = np.zeros(3)
    rv = np.ones(3)
    nbt = 0
    for step in range(3):
        x = torch.randn(2 + step, 3, 3, 4, device=device) * (step + 1) + step
        if cl:
            x = x.to(memory_format=torch.channels_last)
        m(x)
        fwd = ref.batch_norm_forward(to_np64(x), None, None, rm, rv, training=True, momentum=momentum, eps=1e-5,
                                     num_batches_tracked=nbt)
        rm, rv, nbt = fwd.new_running_mean, fwd.new_running_var, fwd.new_num_batches_tracked
    assert int(m.num_batches_tracked) == nbt == 3
    assert_close("running_mean", m.running_mean, rm, torch.float32)
    assert_close("running_var", m.running_var, rv, torch.float32)


def test_modules_match_torch(device):
    torch.manual_seed(0)
    for cls, tcls, shape in ((fastnorm.nn.BatchNorm1d, torch.nn.BatchNorm1d, (5, 4, 3)),
                             (fastnorm.nn.BatchNorm2d, torch.nn.BatchNorm2d, (3, 4, 3, 2)),
                             (fastnorm.nn.BatchNorm3d, torch.nn.BatchNorm3d, (2, 4, 2, 3, 2))):
        for kw in ({}, {"affine": False}, {"track_running_stats": False}, {"momentum": None}):
            ours = cls(4, **kw).to(device)
            theirs = tcls(4, **kw).to(device)
            for training in (True, False, True):
                ours.train(training)
                theirs.train(training)
                x = torch.randn(shape, device=device)
                torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)
            for name, t in theirs.state_dict().items():
                torch.testing.assert_close(ours.state_dict()[name], t, rtol=1e-5, atol=1e-6)


def test_state_dict_round_trips(device):
    theirs = torch.nn.BatchNorm2d(5).to(device)
    theirs.train()
    theirs(torch.randn(4, 5, 3, 3, device=device))
    ours = fastnorm.nn.BatchNorm2d(5).to(device)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    back = torch.nn.BatchNorm2d(5).to(device)
    back.load_state_dict(ours.state_dict(), strict=True)
    for name, t in theirs.state_dict().items():
        assert torch.equal(back.state_dict()[name], t)
    frozen = fastnorm.nn.FrozenBatchNorm2d(5).to(device)
    frozen.load_state_dict(theirs.state_dict(), strict=True)  # num_batches_tracked is dropped
    theirs.eval()
    x = torch.randn(2, 5, 3, 4, device=device)
    torch.testing.assert_close(frozen(x), theirs(x), rtol=1e-5, atol=1e-6)


class FrozenBatchNorm2d(torch.nn.Module):
    """The shape of torchvision.ops.FrozenBatchNorm2d (torchvision is not a dependency; convert_model
    recognizes the class by its name and buffers)."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        bias = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)


TorchvisionFrozenBatchNorm2d = FrozenBatchNorm2d


@pytest.mark.parametrize("cl", [False, True])
def test_frozen_module(cl, device):
    tv = TorchvisionFrozenBatchNorm2d(6, eps=1e-3)
    for name in ("weight", "bias", "running_mean"):
        getattr(tv, name).copy_(torch.randn(6))
    tv.running_var.copy_(torch.rand(6) + 0.1)
    tv = tv.to(device)
    ours = fastnorm.nn.FrozenBatchNorm2d(6, eps=1e-3).to(device)
    ours.load_state_dict(tv.state_dict(), strict=True)
    tv2 = TorchvisionFrozenBatchNorm2d(6, eps=1e-3).to(device)
    tv2.load_state_dict(ours.state_dict(), strict=True)
    x = torch.randn(3, 6, 4, 5, device=device)
    if cl:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    y = ours(x)
    assert y.stride() == x.stride()
    dy = torch.randn_like(x)
    (dx,) = torch.autograd.grad(y, x, dy)
    x2 = x.detach().clone().requires_grad_(True)
    y2 = tv2(x2)
    (dx2,) = torch.autograd.grad(y2, x2, dy)
    fwd = ref.batch_norm_forward(to_np64(x), to_np64(tv.weight), to_np64(tv.bias), to_np64(tv.running_mean),
                                 to_np64(tv.running_var), training=False, momentum=0.1, eps=1e-3)
    assert_close("y", y, fwd.y, torch.float32)
    rdx, *_ = ref.batch_norm_backward(to_np64(dy), to_np64(x), to_np64(tv.weight), fwd, training=False)
    assert_close("dx", dx, rdx, torch.float32)
    torch.testing.assert_close(y, y2, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dx, dx2, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="expected 4D input"):
        ours(torch.randn(2, 6, 3, device=device))


@pytest.mark.parametrize("cl", [False, True])
def test_empty_batch(cl, device):
    m = fastnorm.nn.BatchNorm2d(4).to(device)
    rm0, rv0 = m.running_mean.clone(), m.running_var.clone()
    x = torch.randn(0, 4, 3, 3, device=device)
    if cl:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    y = m(x)
    assert y.shape == x.shape
    y.sum().backward()
    assert torch.equal(m.weight.grad, torch.zeros(4, device=device))
    assert torch.equal(m.bias.grad, torch.zeros(4, device=device))
    assert x.grad.shape == x.shape
    assert torch.equal(m.running_mean, rm0) and torch.equal(m.running_var, rv0)
    assert int(m.num_batches_tracked) == 1  # the counter moves, as in torch and the reference
    m.eval()
    assert m(x).shape == x.shape


def test_layout_of_other_strides(device):
    """A permuted, non-channels-last input costs one copy but gives the right values in its own layout."""
    x = torch.randn(2, 4, 3, 5, device=device).permute(0, 1, 3, 2)  # neither NCHW nor channels-last
    x.requires_grad_(True)
    w = torch.rand(4, device=device).requires_grad_(True)
    b = torch.randn(4, device=device).requires_grad_(True)
    _check_bn(x, w, b, torch.zeros(4, device=device), torch.ones(4, device=device), training=True)
    # dy in another layout than x
    x2 = torch.randn(2, 4, 3, 5, device=device).to(memory_format=torch.channels_last).requires_grad_(True)
    y = fastnorm.batch_norm(x2, None, None, w, b, True)
    dy = torch.randn(2, 4, 3, 5, device=device)
    (dx,) = torch.autograd.grad(y, x2, dy)
    fwd = ref.batch_norm_forward(to_np64(x2), to_np64(w), to_np64(b), None, None, training=True, momentum=0.1,
                                 eps=1e-5)
    rdx, *_ = ref.batch_norm_backward(to_np64(dy), to_np64(x2), to_np64(w), fwd, training=True)
    assert_close("dx", dx, rdx, torch.float32)


def test_nan_propagates(train_path, device):
    x, w, b, rm, rv = _make((3, 4, 5), False, torch.float32, device, requires_grad=False)
    x[1, 2, 3] = float("nan")
    y = fastnorm.batch_norm(x, None, None, w, b, True)
    assert torch.isnan(y[:, 2]).all() and not torch.isnan(y[:, [0, 1, 3]]).any()
    y = fastnorm.batch_norm(x, rm, rv, w, b, False)
    assert torch.isnan(y).sum() == 1


@pytest.mark.parametrize("cl", [False, True])
def test_deterministic(cl, train_path, device):
    x, w, b, rm, rv = _make((4, 6, 5, 3), cl, torch.bfloat16, device)
    outs = []
    for _ in range(2):
        rm_, rv_ = rm.clone(), rv.clone()
        y = fastnorm.batch_norm(x, rm_, rv_, w, b, True)
        dy = torch.ones_like(y) * 0.5 + torch.arange(y.numel(), device=device).reshape(y.shape).to(y.dtype) % 3
        grads = torch.autograd.grad(y, (x, w, b), dy)
        outs.append((y, rm_, rv_, *grads))
    for a, c in zip(*outs, strict=True):
        assert torch.equal(a, c)


def test_errors(device):
    x = torch.randn(4, 3, 5, device=device)
    w = torch.ones(3, device=device)
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\).*C=3"):
        fastnorm.batch_norm(x, None, None, torch.ones(4, device=device), None, True)
    with pytest.raises(ValueError, match=r"running_mean must have shape \(3,\).*C=3"):
        fastnorm.batch_norm(x, torch.zeros(2, device=device), torch.ones(3, device=device), w, None, True)
    with pytest.raises(TypeError, match="x must have a floating dtype"):
        fastnorm.batch_norm(torch.ones(4, 3, dtype=torch.int64, device=device), None, None, training=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training, got input size"):
        fastnorm.batch_norm(torch.randn(1, 3, device=device), None, None, training=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        fastnorm.nn.BatchNorm2d(3).to(device)(torch.randn(1, 3, 1, 1, device=device))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        fastnorm.nn.BatchNorm2d(3).to(device)(x)
    with pytest.raises(ValueError, match="expected 5D input"):
        fastnorm.nn.BatchNorm3d(3).to(device)(x)
    with pytest.raises(ValueError, match="activation"):
        fastnorm.batch_norm(x, None, None, training=True, activation="gelu")
    with pytest.raises(ValueError, match="z must have the input's shape"):
        fastnorm.batch_norm(x, None, None, training=True, z=torch.randn(4, 3, device=device))
    with pytest.raises(ValueError, match="both be tensors or both be None"):
        fastnorm.batch_norm(x, torch.zeros(3, device=device), None, training=True)
    with pytest.raises(ValueError, match="use_global_stats"):
        fastnorm.batch_norm(x, None, None, training=True, use_global_stats=True)
    with pytest.raises(ValueError, match="num_batches_tracked"):
        fastnorm.batch_norm(x, torch.zeros(3, device=device), torch.ones(3, device=device), training=True,
                            momentum=None)
    with pytest.raises(ValueError, match="at least 2 dims"):
        fastnorm.batch_norm(torch.randn(3, device=device), None, None, training=True)


# ------------------------------------------------------------------------------------------ second order

SECOND_ORDER_MODES = {"train": dict(training=True), "train-relu-z": dict(training=True, activation="relu", z=True),
                      "eval": dict(training=False), "global-stats": dict(training=True, use_global_stats=True),
                      "fix-gamma": dict(training=True, fix_gamma=True)}


def test_double_backward_of_the_custom_op(device):
    """The custom op called eagerly (its registered autograd, what torch.compile differentiates), training and
    evaluation: gradgradcheck in float64 as ``test_double_backward_gradgradcheck``."""
    x, w, b, rm, rv = _make((2, 2, 1, 3), False, torch.float64, device, seed=4, pdtype=torch.float64)
    op = torch.ops.fastnorm.batch_norm_fwd
    assert torch.autograd.gradgradcheck(
        lambda x, w, b: op(x, w, b, None, None, None, None, True, False, 0.1, False, 1e-5, False, False)[0],
        (x, w, b))
    rm, rv = rm.double(), rv.double()
    assert torch.autograd.gradgradcheck(
        lambda x, w, b: op(x, w, b, None, rm, rv, None, False, False, 0.1, False, 1e-5, False, True)[0], (x, w, b))


@pytest.mark.parametrize("mode", list(SECOND_ORDER_MODES))
@pytest.mark.parametrize("cl", [False, True])
def test_double_backward_gradgradcheck(mode, cl, device):
    """Gradients taken with create_graph=True are differentiable again, as torch's are: gradgradcheck in float64
    compares their autograd derivatives with finite differences of them, each forward run again, so batch statistics
    the backward took as constants (the saved mean and invstd, as the CPU path once did) fail. Training (batch
    statistics, no running ones: nothing updated between the checks' calls), with ReLU and a residual, evaluation,
    use_global_stats, fix_gamma; NCHW and channels-last."""
    opts = dict(SECOND_ORDER_MODES[mode])
    x, w, b, rm, rv = _make((2, 2, 1, 3), cl, torch.float64, device, seed=4, pdtype=torch.float64)
    running = (None, None) if opts["training"] and not opts.get("use_global_stats") else (rm.double(), rv.double())
    inputs = (x, w, b)
    if opts.pop("z", False):
        inputs += (torch.randn(x.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
                   .to(device).contiguous(memory_format=x.dim() == 4 and cl and torch.channels_last
                                          or torch.contiguous_format).requires_grad_(True),)

    def fn(x, w, b, z=None):
        return fastnorm.batch_norm(x, *running, w, b, z=z, **opts)

    assert torch.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("cl", [False, True])
def test_gradient_penalty_matches_torch(training, cl, device):
    """A loss of the output and of its own input gradient (create_graph=True), differentiated once more in float64:
    the same gradients as torch's F.batch_norm, in training (batch statistics) and evaluation. Before, the Triton
    path dropped BatchNorm's share of the second derivative silently (the y term keeps the loss differentiable without
    it) and the CPU path took the batch statistics as constants."""
    x, w, b, rm, rv = _make((3, 2, 2, 3), cl, torch.float64, device, seed=6, pdtype=torch.float64,
                            requires_grad=False)
    c = torch.randn(x.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64).to(device)
    running = (None, None) if training else (rm.double(), rv.double())

    def grads(bn):
        xs, ws, bs = (t.detach().clone().requires_grad_() for t in (x, w, b))
        y = bn(xs, *running, ws, bs, training)
        (gx,) = torch.autograd.grad((y * c).square().sum(), xs, create_graph=True)
        return torch.autograd.grad(gx.square().sum() + y.sum(), (xs, ws, bs))

    ours, theirs = grads(fastnorm.batch_norm), grads(F.batch_norm)
    for name, a, e in zip(("x", "weight", "bias"), ours, theirs, strict=True):
        assert_close(f"second-order d{name}", a, to_np64(e), torch.float64, param_grad=name != "x")


@pytest.mark.parametrize("mode", list(SECOND_ORDER_MODES))
@pytest.mark.parametrize("cl", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_create_graph_keeps_the_first_order_gradients(mode, cl, dtype, device):
    """The backward that create_graph=True takes gives the kernels' gradients (against the reference, the tolerances
    of the dtype), in every mode and layout."""
    opts = dict(SECOND_ORDER_MODES[mode])
    x, w, b, rm, rv = _make((3, 5, 4, 3), cl, dtype, device, seed=8)
    if opts.pop("z", False):
        opts["z"] = torch.randn(x.shape, generator=torch.Generator().manual_seed(9)).to(dtype).to(device) \
            .contiguous(memory_format=torch.channels_last if cl else torch.contiguous_format).requires_grad_(True)
    _check_bn(x, w, b, rm, rv, create_graph=True, **opts)


# ------------------------------------------------------------------ kernel decomposition paths and poison


@pytest.fixture
def small_plans(monkeypatch):
    """Plans with many groups, sub-groups and items on tiny tensors: every merge path and the wait path run."""
    monkeypatch.setattr(config, "BN_ITEM", {"fused": 32, "stream": 32})
    monkeypatch.setattr(config, "BN_STATS_WAVE", 64)
    monkeypatch.setattr(config, "BN_STATS_WAVE_BY_DEVICE", {})
    monkeypatch.setattr(config, "BN_SUMS_WAVE", 64)
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 16, "bwd": 16, "sums": 16})
    monkeypatch.setattr(config, "BN_GROUP_BYTES", 256)
    monkeypatch.setattr(config, "BN_MSUB", 2)
    channels_last_blocks(monkeypatch, 4)
    monkeypatch.setattr(config, "BN_RESIDENT", False)  # (each setattr also clears config's cached plans)


@pytest.fixture
def shared_counters(monkeypatch, device):
    """Every launch shares one counter buffer, as eager launches on a CUDA stream do: each must find it zeroed
    (the previous one left it so). -> (the buffer, the sizes the launches asked for)."""
    shared = torch.zeros(1 << 14, dtype=torch.int32, device=device)
    real_sync = K._sync
    sizes = []

    def shared_sync(plan, dev):
        sizes.append(real_sync(plan, dev).numel())
        assert sizes[-1] <= shared.numel() and not shared.any(), "a launch left its counters non-zero"
        return shared

    monkeypatch.setattr(K, "_sync", shared_sync)
    return shared, sizes


@pytest.mark.parametrize("shape,cl,lag,fused,row_lanes", [
    ((5, 6, 3, 7), False, 1, True, 2048),  # NCHW row layout (lanes padded to 32), one launch
    ((5, 6, 3, 7), True, 2, False, 2048),  # channels-last, two launches
    ((17, 10), False, 3, True, 2048),  # (N, C) rows
    ((4, 6, 3, 7), False, 1, False, 4),  # NCHW with a division per element (S above the row limit)
    ((4, 6, 3, 7), False, 2, True, 4),
])
def test_many_items_groups_subgroups(small_plans, shared_counters, monkeypatch, shape, cl, lag, fused, row_lanes,
                                     device):
    monkeypatch.setattr(config, "BN_LAG", lag)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", fused)
    monkeypatch.setattr(config, "BN_ROW_LANES_MAX", row_lanes)
    shared, sizes = shared_counters
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    xv = K.view(x.detach())
    assert (xv.l > 0) == (not xv.flat and row_lanes > 4)
    plan = K._plan(xv, 4, "fused", "fwd")
    assert plan.groups > 1 and plan.nsub > 1 and plan.split > plan.msub
    if not fused:  # the two-launch backward's sums pass merges sub-groups too
        sums = K._plan(xv, 8, "sums", "bwd")
        assert sums.nsub > 1 and sums.split > sums.msub, sums
    _check_bn(x, w, b, rm, rv, training=True, activation="relu")
    _check_bn(x, w, b, rm, rv, training=False)
    mean, m2 = fastnorm.ops.batch_norm.local_stats(x.detach())
    _, rmean, rm2 = ref.shard_stats(to_np64(x))
    assert_close("mean", mean, rmean, torch.float32)
    assert_close("m2", m2, rm2, torch.float32)
    assert len(sizes) == 4 and not shared.any()  # training fwd, bwd; frozen bwd; statistics


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("msub,split_one", [(64, False), (2, True)])
def test_merge_levels_a_channel_block_skips(small_plans, shared_counters, monkeypatch, msub, split_one, fused, device):
    """The reductions' merge hierarchy where levels change nothing: channel blocks of several items in one
    sub-group (NSUB = 1: the sub-group's merge is final, no second arrival) and channel blocks of one item
    (SPLIT = 1: the item's own statistics and sums, no partials or arrivals) — against the float64 reference,
    every launch leaving the shared counters zeroed, in two launches and in the one-launch schedules (whose
    apply and dx items wait for the blocks' group flags); the plans checked to take the level meant."""
    monkeypatch.setattr(config, "BN_MSUB", msub)
    if split_one:  # a wave of one item on one multiprocessor: one item a channel block
        monkeypatch.setattr(config, "BN_STATS_WAVE", 1)
        monkeypatch.setattr(config, "BN_SUMS_WAVE", 1)
        monkeypatch.setattr(config, "multiprocessor_count", lambda device_index: 1)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", fused)
    shared, _ = shared_counters
    for shape, cl in (((6, 5, 3, 7), False), ((6, 5, 3, 7), True), ((23, 9), False)):
        x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
        xv = K.view(x.detach())
        plans = (K._plan(xv, 4, "fused", "fwd"), K._plan(xv, 8, "sums", "bwd"))
        for plan in plans:
            assert (plan.split == 1) if split_one else (1 < plan.split <= plan.msub and plan.nsub == 1), plan
        _check_bn(x, w, b, rm, rv, training=True, activation="relu")
        mean, m2 = fastnorm.ops.batch_norm.local_stats(x.detach())
        _, rmean, rm2 = ref.shard_stats(to_np64(x))
        assert_close("mean", mean, rmean, torch.float32)
        assert_close("m2", m2, rm2, torch.float32)
        assert not shared.any()


@pytest.mark.parametrize("fused", [True, False])
def test_channel_groups_past_the_channels(small_plans, shared_counters, monkeypatch, fused, device):
    """Groups of channel blocks that overrun the channels (7 channels, groups of 2-6 blocks): the items of the
    blocks past them skip their loops and still arrive (every launch leaves the shared counters zeroed), in one
    launch and in two, forward and backward."""
    monkeypatch.setattr(config, "BN_GROUP_BYTES", 2100)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", fused)
    x, w, b, rm, rv = _make((4, 7, 3, 7), False, torch.float32, device)
    xv = K.view(x.detach())
    for reread, direction in ((4, "fwd"), (8, "bwd")):  # fp32 x; x and dy
        plan = K._plan(xv, reread, "fused", direction)
        assert plan.groups * plan.ncb_g * plan.cb > 7, plan
    _check_bn(x, w, b, rm, rv, training=True)
    _check_bn(x, w, b, rm, rv, training=False)
    shared, sizes = shared_counters
    assert len(sizes) == 3 and not shared.any()  # training fwd, bwd; frozen bwd


@pytest.mark.parametrize("stages,cap", [(1, None), (2, 64), (3, 48)])
@pytest.mark.parametrize("shape,cl", [((6, 5, 9, 11), False), ((6, 5, 4, 4), False), ((6, 33, 3, 5), True)])
def test_loop_prefetch_and_register_caps(monkeypatch, stages, cap, shape, cl, device):
    """Every kernel's tile loop at other prefetch depths and register caps (items of many tiles), training,
    evaluation and frozen, against the reference: the settings change the schedule, never the result."""
    if torch.device(device).type != "cuda" and stages != 2:
        pytest.skip("the interpreter ignores prefetch depths and register caps: one setting covers its path")
    monkeypatch.setattr(config, "BN_ITEM", {"fused": 256, "stream": 256})
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 32, "bwd": 32, "sums": 32})
    channels_last_blocks(monkeypatch, 4)
    monkeypatch.setattr(config, "BN_ITEMS_PER_SM", dict.fromkeys(config.BN_ITEMS_PER_SM, 1))
    monkeypatch.setattr(config, "BN_STATS_WAVE", 1)
    monkeypatch.setattr(config, "BN_STATS_WAVE_BY_DEVICE", {})
    monkeypatch.setattr(config, "BN_SUMS_WAVE", 1)
    monkeypatch.setattr(config, "multiprocessor_count", lambda device: 4)  # the same plans on any device
    monkeypatch.setattr(config, "BN_LOOP_STAGES", dict.fromkeys(config.BN_LOOP_STAGES, stages))
    monkeypatch.setattr(config, "BN_MAXNREG", dict.fromkeys(config.BN_MAXNREG, cap))
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    plan = K._plan(K.view(x.detach()), 4, "fused", "fwd")
    assert plan.vpi >= 3 * plan.bs, plan
    _check_bn(x, w, b, rm, rv, training=True, activation="relu")
    _check_bn(x, w, b, rm, rv, training=False)
    _check_bn(x, w, b, rm, rv, training=True, use_global_stats=True)


@pytest.mark.parametrize("cl", [False, True])
def test_every_output_element_written(cl, train_path, device):
    """Outputs handed to the kernels pre-filled with NaN come back NaN-free."""
    x, w, b, rm, rv = _make((3, 5, 4, 3), cl, torch.bfloat16, device, requires_grad=False)
    xv = K.view(x)
    y = poisoned_like(x)
    shift, mrel, rstd = K.forward_train(xv, y, None, w, b, rm, rv, None, 0.1, 1e-5, False, True)
    assert not torch.isnan(y).any()
    y2 = poisoned_like(x)
    K.apply(xv, y2, None, w, b, rm, None, rv, is_var=True, eps=1e-5, fix_gamma=False, relu=False, save=False)
    assert not torch.isnan(y2).any()
    dy = torch.randn_like(x)
    for mode in ("train", "frozen"):
        dx, dz = poisoned_like(x), poisoned_like(x)
        dw, db = torch.full_like(w, float("nan")), torch.full_like(b, float("nan"))
        K.backward(mode, xv, dy, y, dx, dz, w, shift, mrel, rstd, is_var=False, eps=0.0, fix_gamma=False, relu=True,
                   dw=dw, db=db)
        for t in (dx, dz, dw, db):
            assert not torch.isnan(t).any(), mode


def test_cpu_torch_path(monkeypatch):
    """CPU tensors without the interpreter take torch operations with the same semantics."""
    import fastnorm.ops.batch_norm as ops

    monkeypatch.setattr(ops, "uses_triton", lambda t: False)
    for cl in (False, True):
        x, w, b, rm, rv = _make((3, 4, 5, 2), cl, torch.float32, "cpu")
        z = torch.randn(x.shape).requires_grad_(True)
        _check_bn(x, w, b, rm, rv, training=True, activation="relu", z=z)
        _check_bn(x, w, b, rm, rv, training=False, fix_gamma=True)
    m = fastnorm.nn.BatchNorm2d(4, momentum=None)
    m(torch.randn(3, 4, 2, 2))
    m(torch.randn(3, 4, 2, 2))
    assert int(m.num_batches_tracked) == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the launch cache serves CUDA launches only")
def test_repeat_launches_take_the_direct_launch(monkeypatch):
    """After a kernel's first launch (through Triton) repeat launches call the C launch function with the
    tensors' addresses; the results equal the first launch's bitwise. (The statistics + apply launches: a tensor
    this small would otherwise take the single-read kernel, and ``_apply`` would launch nothing.)"""
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    x = torch.randn(4, 8, 5, 5, device="cuda")
    first, again = (fastnorm.batch_norm(x, None, None, training=True) for _ in range(2))
    entries = list(K._apply.cache.values())
    assert entries and all(e.launch is not None for e in entries)
    assert torch.equal(first, again)


@pytest.mark.parametrize("flat", [False, True])
def test_sums_plan_is_one_wave(flat):
    """The backward's sums pass: items cover every channel and inner index exactly once, in tiles of
    BN_TILE["sums"] (channels-last: BN_CL_SUMS' "tile"), and fit one wave of BN_SUMS_WAVE (BN_CL_SUMS' "wave") per
    multiprocessor; channels-last tiles of 16-bit x take BN_CL_SUMS' "row_bytes" of a row (64 channels), of 4- and
    8-byte x BN_CL_CB's 32."""
    sms = 132
    cl = config.BN_CL_SUMS
    tile = cl["tile"] if flat else config.BN_TILE["sums"]
    slots = (cl["wave"] if flat else config.BN_SUMS_WAVE) * sms
    for c, v, lanes, x_size in itertools.product((1, 3, 64, 65, 128, 1024, 2048),
                                                 (1, 7, 32 * 49, 256 * 196, 256 * 3136), (0, 64), (0, 2, 4, 8)):
        if lanes and (flat or v % lanes):
            continue
        plan = config.batch_norm_plan(flat, c, v, 2 * max(x_size, 1), "sums", "bwd", sms, lanes, None, x_size)
        if flat:
            assert plan.cb == min(triton.next_power_of_2(c), 64 if x_size == 2 else 32), (c, x_size, plan)
        ncb = -(-c // plan.cb)
        assert plan.cb * plan.bs == max(tile, plan.cb * lanes), (c, v, plan)
        assert plan.vpi % plan.bs == 0 and plan.split * plan.vpi >= v > (plan.split - 1) * plan.vpi
        assert ncb * plan.split <= slots, (c, v, plan)
        assert plan.nsub * plan.msub >= plan.split


def test_stats_wave_by_device(monkeypatch):
    """A device's own statistics-pass item count (BN_STATS_WAVE_BY_DEVICE) per layout, under the longest part of its
    name the table has; other devices, unlisted layouts and no device take BN_STATS_WAVE; the statistics pass's
    plan fits one wave of the count it is given."""
    monkeypatch.setattr(config, "BN_STATS_WAVE_BY_DEVICE", {"H100": {"flat": 3}, "H100 80GB HBM3": {"flat": 2,
                                                                                                   "runs": 1}})
    names = {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H100 PCIe", 2: "NVIDIA H200"}
    monkeypatch.setattr(config, "device_name", lambda device: names.get(device, ""))
    default = config.BN_STATS_WAVE
    waves = config.batch_norm_stats_wave
    assert (waves(0, True, 0), waves(0, False, 0), waves(0, False, 64)) == (2, 1, default)
    assert (waves(1, True, 0), waves(1, False, 0)) == (3, default)
    assert waves(2, True, 0) == default and waves(None, True, 0) == default
    sms = 132
    for flat, c, v in ((True, 256, 256 * 784), (False, 1024, 256 * 196), (True, 64, 256 * 3136)):
        items = []
        for wave in (1, 2, 4):
            plan = config.batch_norm_plan(flat, c, v, 2, "fused", "fwd", sms, 0, wave)
            items.append(-(-c // plan.cb) * plan.split)
            assert items[-1] <= wave * sms, (flat, c, v, wave, plan)
            assert plan.split * plan.vpi >= v > (plan.split - 1) * plan.vpi
        assert items[0] < items[1] < items[2], (flat, c, v, items)
        assert config.batch_norm_plan(flat, c, v, 2, "fused", "fwd", sms, 0) == plan  # None: BN_STATS_WAVE (4)


def test_dx_plan_tiles():
    """The training backward's dx pass is a one-pass plan, on BN_DX_LARGE_TILE-element tiles over tensors of
    BN_STREAM_LARGE[0] elements or more and on the backward's tiles below that."""
    for flat, c, v in ((False, 64, 256 * 3136), (False, 1024, 256 * 196), (True, 64, 256 * 3136),
                       (False, 2048, 128 * 49), (True, 256, 8 * 784)):
        dx = config.batch_norm_plan(flat, c, v, 1, "dx", "bwd", 132, 0)
        stream = config.batch_norm_plan(flat, c, v, 1, "stream", "bwd", 132, 0)
        large = c * v >= config.BN_STREAM_LARGE[0]
        assert dx.cb * dx.bs == (config.BN_DX_LARGE_TILE if large else config.BN_TILE["bwd"]), (c, v, dx)
        assert (dx == stream) == (not large), (c, v)
        assert dx.split * dx.vpi >= v > (dx.split - 1) * dx.vpi


def test_channels_last_one_pass_block():
    """The channels-last one-pass plans (the apply, the dx pass, the frozen backward) take rows of
    BN_CL_STREAM_ROW_BYTES of x a tile — 128 channels of 16-bit x, BN_CL_CB["stream"]'s 64 of 4- and 8-byte x and
    where the size is not given — or all C; the tile's elements stay BN_TILE's; NCHW plans ignore the size."""
    floor = config.BN_CL_CB["stream"]
    for kind, direction in (("stream", "fwd"), ("dx", "bwd"), ("frozen", "bwd")):
        for c, v in ((3, 8 * 784), (64, 256 * 3136), (100, 8 * 784), (256, 256 * 784), (2048, 128 * 49)):
            by_size = {}
            for x_size in (0, 2, 4, 8):
                plan = config.batch_norm_plan(True, c, v, 1, kind, direction, 132, 0, None, x_size)
                want = max(floor, config.BN_CL_STREAM_ROW_BYTES // x_size) if x_size else floor
                assert plan.cb == min(triton.next_power_of_2(c), want), (kind, c, x_size, plan)
                assert plan.split * plan.vpi >= v > (plan.split - 1) * plan.vpi
                by_size[x_size] = plan
            assert by_size[2].cb * by_size[2].bs == by_size[4].cb * by_size[4].bs, (kind, c)
            nchw = [config.batch_norm_plan(False, c, v, 1, kind, direction, 132, 0, None, s) for s in (0, 2, 4)]
            assert nchw[0] == nchw[1] == nchw[2], (kind, c)


def test_frozen_plan_items(monkeypatch):
    """The frozen backward's one-pass plan ("frozen") is the one-pass "stream" plan with its own items per SM below
    BN_STREAM_LARGE[0] elements (more, smaller items where it asks for more), and the stream plan itself from there."""
    monkeypatch.setattr(config, "BN_ITEMS_PER_SM", {**config.BN_ITEMS_PER_SM, "frozen": 4 * config.BN_ITEMS_PER_SM[
        "stream"]})  # (setting a config value drops its cached plans)
    for flat, c, v in ((True, 2048, 128 * 49), (True, 256, 8 * 784), (True, 256, 8 * 16384), (False, 2048, 8 * 49),
                       (True, 64, 256 * 3136), (False, 64, 256 * 3136)):
        frozen = config.batch_norm_plan(flat, c, v, 4, "frozen", "bwd", 132, 0)
        stream = config.batch_norm_plan(flat, c, v, 4, "stream", "bwd", 132, 0)
        large = c * v >= config.BN_STREAM_LARGE[0]
        if large:
            assert frozen == stream, (flat, c, v)
        elif stream.vpi > stream.bs:  # (items of one tile cannot shrink)
            assert frozen.split * -(-c // frozen.cb) > stream.split * -(-c // stream.cb), (flat, c, v)
        assert frozen.split * frozen.vpi >= v > (frozen.split - 1) * frozen.vpi


def _record_plans(monkeypatch) -> list:
    """Every plan the kernels take from here on, as (kind, direction, plan), in launch order."""
    plans = []
    real_plan = K._plan

    def recorded(xv, reread, kind, direction):
        plans.append((kind, direction, real_plan(xv, reread, kind, direction)))
        return plans[-1][2]

    monkeypatch.setattr(K, "_plan", recorded)
    return plans


@pytest.mark.parametrize("shape,cl,row_lanes", [
    ((5, 40, 3, 7), False, 2048),  # NCHW row layout (21 of 32 lanes real)
    ((4, 40, 3, 7), False, 4),  # NCHW with a division per element
    ((5, 40, 3, 7), True, 2048),  # channels-last
])
def test_two_launch_backward_plans(monkeypatch, shape, cl, row_lanes, device):
    """The two-launch training backward with its own plans on a tiny tensor: the sums pass in several channel groups
    and sub-groups, the dx pass on BN_DX_LARGE_TILE-element tiles (the large-tensor rule, its threshold lowered),
    against the reference."""
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_DX_FLAT", None)  # the tile dx pass, whose plans this records
    monkeypatch.setattr(config, "BN_ROW_LANES_MAX", row_lanes)
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 64, "bwd": 16, "sums": 16})
    channels_last_blocks(monkeypatch, 4)
    monkeypatch.setattr(config, "BN_SUMS_WAVE", 64)
    monkeypatch.setattr(config, "BN_MSUB", 2)
    monkeypatch.setattr(config, "BN_STREAM_LARGE", (64, 64))
    monkeypatch.setattr(config, "BN_DX_LARGE_TILE", 64)
    plans = _record_plans(monkeypatch)
    x, w, b, rm, rv = _make(shape, cl, torch.float32, device)
    z = torch.randn_like(x, requires_grad=True)
    _check_bn(x, w, b, rm, rv, training=True, activation="relu", z=z)
    launched = {kind: plan for kind, _, plan in plans}
    sums, dx = launched["sums"], launched["dx"]
    assert sums.groups > 1 and sums.nsub > 1, sums
    assert dx.cb * dx.bs == 64 and dx.split > 1, dx


def test_apply_flat_rule():
    """The one-pass forward takes the flat kernel from BN_APPLY_FLAT[0] elements of 4-byte x in either layout and of
    16-bit x in NCHW, where a program's channel window (NCHW: the runs of S its block can touch; channels-last:
    every channel) is at most BN_APPLY_FLAT[3] slots; never for 16-bit channels-last (measured slower), float64
    (unmeasured) or smaller tensors."""
    big, block, _, most = config.BN_APPLY_FLAT
    for numel, size, flat, c, s, expected in (
            (big, 4, False, 64, 3136, True), (big, 4, True, 64, 1, True), (big, 2, False, 1024, 196, True),
            (big, 2, True, 64, 1, False), (big, 8, False, 64, 3136, False), (big - 1, 4, False, 64, 3136, False),
            (big, 4, True, most, 1, True), (big, 4, True, most + 1, 1, False),
            (big, 4, False, 2048, 49, True), (big, 4, False, 64, -(-block // (most - 2)), True),
            (big, 4, False, 64, -(-block // (most - 2)) - 1, False)):
        assert config.batch_norm_apply_flat(numel, size, flat, c, s) == expected, (numel, size, flat, c, s)
    assert config.batch_norm_flat_window(64, 1, True, 1024) == 64
    assert config.batch_norm_flat_window(3, 1, True, 1024) == 4
    assert config.batch_norm_flat_window(64, 49, False, 1024) == 32  # 1024 // 49 + 2 = 22 runs at most
    assert config.batch_norm_flat_window(64, 4096, False, 1024) == 2


@pytest.mark.parametrize("shape,cl", [((3, 5, 7, 9), False), ((3, 5, 7, 9), True), ((2, 3, 4, 2, 3), True),
                                      ((6, 4), False), ((4, 7, 3), False), ((2, 3, 70, 3), False)])
@pytest.mark.parametrize("mode", ["eval", "train", "frozen"])
def test_apply_flat_against_reference(monkeypatch, shape, cl, mode, device):
    """Evaluation, the two-launch training forward's apply pass and the frozen forward through the flat kernel (its
    threshold lowered to 0; ragged last blocks: BLOCK 64 over 189-1260 elements), NCHW (both S layouts),
    channels-last, (N, C), (N, C, L) and 3-d, with ReLU and a residual, without parameters, under fix_gamma, 16- and
    32-bit x (16-bit channels-last rows take the tiled kernel), forward and backward against the reference; y poisoned
    before every flat launch."""
    monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    passes = []
    real = K._apply_flat_pass

    def poisoned(xv, y, *args, **kwargs):
        y.fill_(float("nan"))
        passes.append(xv.flat)
        return real(xv, y, *args, **kwargs)

    monkeypatch.setattr(K, "_apply_flat_pass", poisoned)
    training, glob = mode != "eval", mode == "frozen"
    for dtype, options in ((torch.float32, {}), (torch.bfloat16, {"activation": "relu", "z": True}),
                           (torch.float16, {"fix_gamma": True}), (torch.float32, {"affine": False})):
        x, w, b, rm, rv = _make(shape, cl, dtype, device, seed=10 + len(passes))  # dy: seed 1
        if options.get("affine") is False:
            w = b = None
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=training, use_global_stats=glob, fix_gamma=options.get("fix_gamma", False),
                  activation=options.get("activation"), z=z)
    flat = cl or len(shape) == 2
    assert passes == [flat] * (2 if flat else 4), passes  # 16-bit channels-last rows keep the tiled kernel


def test_dx_flat_rule(monkeypatch):
    """The dx pass takes the flat kernel on BN_APPLY_FLAT's terms with BN_DX_FLAT's own threshold, block and window,
    channels-last rows only in the frozen pass; with BN_DX_FLAT None, never."""
    assert config.batch_norm_dx_flat(1 << 30, 4, False, 64, 3136, True)
    monkeypatch.setattr(config, "BN_DX_FLAT", None)
    assert not config.batch_norm_dx_flat(1 << 30, 4, False, 64, 3136, False)
    monkeypatch.setattr(config, "BN_DX_FLAT", (1 << 20, 256, 4, 64))
    for numel, size, flat, c, s, expected in (
            (1 << 20, 4, False, 2048, 49, True), ((1 << 20) - 1, 4, False, 2048, 49, False),
            (1 << 20, 2, False, 2048, 49, True), (1 << 20, 2, True, 64, 1, False), (1 << 20, 8, False, 64, 49, False),
            (1 << 20, 4, True, 64, 1, True), (1 << 20, 4, True, 65, 1, False), (1 << 20, 4, False, 64, 4, False),
            (1 << 20, 4, False, 64, 5, True)):  # 256 // 4 + 2 = 66 runs need 128 slots; 256 // 5 + 2 = 53: 64
        assert config.batch_norm_dx_flat(numel, size, flat, c, s, False) == expected, (numel, size, flat, c, s)
        assert config.batch_norm_dx_flat(numel, size, flat, c, s, True) == (expected and not flat)


_DX_FLAT_SHAPES = [((3, 5, 7, 9), False), ((3, 5, 7, 9), True), ((2, 3, 4, 2, 3), True), ((6, 4), False),
                   ((4, 7, 3), False), ((2, 3, 70, 3), False)]


@pytest.mark.parametrize("shape,cl,mode", [(shape, cl, mode) for shape, cl in _DX_FLAT_SHAPES
                                           for mode in ("train", "frozen dx") if mode != "train" or not
                                           (cl or len(shape) == 2)])
def test_dx_flat_against_reference(monkeypatch, shape, cl, mode, device):
    """The dx pass through the flat kernel (BN_DX_FLAT with its threshold at 0; BLOCK 64: ragged last blocks, runs
    across blocks): the two-launch training backward (NCHW, (N, C, L)), and the frozen backward with dx alone (no
    parameter gradients; also channels-last, (N, C) and 3-d), with ReLU and a residual (dz), without parameters,
    under fix_gamma, 16- and 32-bit x (16-bit channels-last rows keep the tile kernel), against the reference, with a
    channel of 1e4 + randn; dx poisoned before every flat launch; and in training the stage API's ``backward_dx``
    with the count a device scalar, against the tile kernel."""
    monkeypatch.setattr(config, "BN_DX_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    passes = []
    real = K._dx_flat_pass

    def poisoned(xv, dy, y, dx, *args, **kwargs):
        dx.fill_(float("nan"))
        passes.append(kwargs["train"])
        return real(xv, dy, y, dx, *args, **kwargs)

    monkeypatch.setattr(K, "_dx_flat_pass", poisoned)
    training, glob = mode == "train", mode == "frozen dx"
    for dtype, options in ((torch.float32, {}), (torch.bfloat16, {"activation": "relu", "z": True}),
                           (torch.float16, {"fix_gamma": True}), (torch.float32, {"affine": False})):
        x, w, b, rm, rv = _make(shape, cl, dtype, device, seed=20 + len(passes))  # dy: seed 1
        if shape[1] > 1:
            x = _with_offset_channel(x)
        if options.get("affine") is False:
            w = b = None
        elif glob:  # dx alone
            w.requires_grad_(False)
            b.requires_grad_(False)
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=True, use_global_stats=glob, fix_gamma=options.get("fix_gamma", False),
                  activation=options.get("activation"), z=z)
    flat = cl or len(shape) == 2
    assert passes == [training] * (2 if flat else 4), passes
    if not training:
        return
    x, w, b, rm, rv = (t.detach() for t in _make(shape, cl, torch.float32, device, seed=9))
    dy = torch.randn_like(x)
    dims = [d for d in range(x.dim()) if d != 1]
    mean, invstd = x.mean(dims), torch.rsqrt(x.var(dims, unbiased=False) + 1e-5)
    sum_dy, sum_dy_xhat = torch.randn(shape[1], device=device), torch.randn(shape[1], device=device)
    count = torch.tensor(float(x.numel() // shape[1]), device=device)
    before = len(passes)
    dx, _ = fastnorm.ops.batch_norm.backward_dx(dy, x, mean, invstd, w, sum_dy, sum_dy_xhat, count)
    monkeypatch.setattr(config, "BN_DX_FLAT", None)
    expected, _ = fastnorm.ops.batch_norm.backward_dx(dy, x, mean, invstd, w, sum_dy, sum_dy_xhat, count)
    torch.testing.assert_close(dx, expected, rtol=1e-5, atol=1e-5)
    assert passes[before:] == [True]  # the flat kernel for the first, the tile kernel for the second


def test_frozen_rows_rule(monkeypatch):
    """The row-strided frozen kernel takes channels-last rows (never NCHW) of 4-byte or 16-bit x from
    BN_FROZEN_ROWS' size; its cut covers the rows in whole tiles, every channel in its blocks, with "per_sm" programs
    a multiprocessor or shares of at least "steps" tiles; its sums launch's tiles (BN_ROWS_SUMS_TILE)."""
    f = config.BN_FROZEN_ROWS
    assert config.batch_norm_frozen_rows(f["min_numel"], 2, True)
    assert config.batch_norm_frozen_rows(f["min_numel"], 4, True)
    for numel, size, flat in ((f["min_numel"] - 1, 4, True), (1 << 30, 4, False), (1 << 30, 8, True),
                              (1 << 30, 1, True)):
        assert not config.batch_norm_frozen_rows(numel, size, flat)
    assert config.batch_norm_row_shares(200704, 256, 132).width == 64  # BN_ROWS_LANES
    for r, c, sms in ((6272, 2048, 132), (802816, 64, 132), (37, 3, 4), (1, 1000, 132), (4000, 96, 132),
                      (200704, 256, 132)):
        cut = config.batch_norm_row_shares(r, c, sms)
        assert cut.width * cut.rows == f["block"] or cut.width == config._next_pow2(c)
        assert cut.blocks * cut.width >= c > (cut.blocks - 1) * cut.width
        assert cut.per_program % cut.rows == 0
        assert cut.per_program * cut.shares >= r > cut.per_program * (cut.shares - 1)
        assert cut.blocks * cut.shares >= sms * f["per_sm"] or cut.per_program >= cut.rows * f["steps"] \
            or cut.shares == 1, (r, c, cut)
    # the sums launch: every share in one step up to 512 of them, channels to fill its tile, at most 256 a program
    for c, shares, expected in ((64, 396, (8, 512)), (2048, 198, (16, 256)), (1536, 1, (256, 1)), (3, 1000, (4, 512)),
                                (64, 2000, (8, 512))):
        assert config.batch_norm_rows_sums_tile(c, shares) == expected, (c, shares)
    monkeypatch.setattr(config, "BN_FROZEN_ROWS", None)
    assert not config.batch_norm_frozen_rows(1 << 30, 4, True)


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (9, 4, 8, 8), (2, 70, 3, 3), (37, 6), (2, 3, 4, 2, 3),
                                   (300, 1)])
def test_frozen_rows_against_reference(monkeypatch, shape, device):
    """The channels-last frozen backward with dγ, dβ through the row-strided kernel (BN_FROZEN_ROWS at threshold 0;
    tiles of 64: several rows a tile with a ragged last tile (C = 5, 6, 3, 1), two channel blocks (C = 70), (N, C)
    rows and 3-d) in evaluation and under use_global_stats, with ReLU and a residual, under fix_gamma, 16- and 32-bit
    x, against the reference, with a channel of 1e4 + randn; the partial sums added 2 shares at a time (several
    steps; an odd count); dx and dz poisoned before every pass; a NaN reaches its own channel's dγ, dβ alone."""
    monkeypatch.setattr(config, "BN_FROZEN_ROWS", rows_everywhere("BN_FROZEN_ROWS"))
    monkeypatch.setattr(config, "BN_ROWS_SUMS_TILE", {"shares": 2, "elements": 8, "channels": 4})  # 2 shares a step
    passes = _count_passes(monkeypatch, "_frozen_rows_pass", poison=(3, 4))  # dx, dz
    cases = ((torch.float32, False, {}), (torch.bfloat16, True, {"activation": "relu", "z": True}),
             (torch.float16, True, {"fix_gamma": True}), (torch.float32, True, {"activation": "relu"}),
             (torch.bfloat16, False, {}))
    for k, (dtype, ugs, options) in enumerate(cases):
        x, w, b, rm, rv = _make(shape, len(shape) > 3, dtype, device, seed=80 + k)
        if shape[1] > 1:
            x = _with_offset_channel(x)
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=ugs, use_global_stats=ugs, fix_gamma=options.get("fix_gamma", False),
                  activation=options.get("activation"), z=z, dy_like_x=True)
    assert len(passes) == len(cases)
    assert config.batch_norm_row_shares(math.prod(shape) // shape[1], shape[1], 4).shares >= 3
    _check_nan_channel_grads(shape, torch.float32, device, 90, training=False)
    assert len(passes) == len(cases) + 1


def test_sums_rows_rule(monkeypatch):
    """The row-strided sums pass takes the backward's sums alone over channels-last rows (never NCHW) of the x sizes
    of BN_SUMS_ROWS (16-bit) from its size, cut by its own keys (tiles of "block")."""
    f = config.BN_SUMS_ROWS
    assert config.batch_norm_sums_rows(f["min_numel"], 2, True)
    for numel, size, flat in ((f["min_numel"] - 1, 2, True), (1 << 30, 2, False), (1 << 30, 4, True),
                              (1 << 30, 8, True), (1 << 30, 1, True)):
        assert not config.batch_norm_sums_rows(numel, size, flat)
    for c, width in ((64, 64), (256, 64), (512, 512), (2048, 1024)):  # BN_ROWS_LANES at C = 256
        cut = config.batch_norm_row_shares(1 << 20, c, 132, "sums")
        assert (cut.width, cut.rows, cut.blocks) == (width, f["block"] // width, -(-c // width))
    monkeypatch.setattr(config, "BN_SUMS_ROWS", None)
    assert not config.batch_norm_sums_rows(1 << 30, 2, True)


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (2, 70, 3, 3), (37, 6), (2, 3, 4, 2, 3), (300, 1)])
def test_sums_rows_against_reference(monkeypatch, shape, device):
    """The backward's sums pass alone through the row-strided kernel without dx, grid-strided (BN_SUMS_ROWS at
    threshold 0, 16- and 32-bit x; tiles of 64: a ragged last tile (C = 5, 6, 3, 1), two channel blocks (C = 70), (N,
    C) rows and 3-d): the training backward (then the dx pass from x's end down, in chunks of a few tiles, a short
    last one (189 rows in 8s); dx and dz poisoned first) with ReLU and a residual, without parameters, and the frozen
    backward of dγ, dβ alone, against the reference, with a channel of 1e4 + randn; the partial sums added 2 shares at
    a time; under fix_gamma; a NaN reaches its own channel's dγ, dβ alone."""
    monkeypatch.setattr(config, "BN_SUMS_ROWS", {**rows_everywhere("BN_SUMS_ROWS"), "x_sizes": (2, 4)})
    monkeypatch.setattr(config, "BN_ROWS_SUMS_TILE", {"shares": 2, "elements": 8, "channels": 4})  # 2 shares a step
    monkeypatch.setattr(config, "BN_TILE", {**config.BN_TILE, "bwd": 64})  # the dx pass in several chunks
    monkeypatch.setattr(config, "BN_RESIDENT_BACKWARD", False)
    passes = _count_passes(monkeypatch, "_frozen_rows_pass")
    dx_passes = _count_passes(monkeypatch, "backward_dx", poison=(3, 4))  # dx, dz
    launch, reversed_dx = K._launch, []

    def launch_spy(launcher, *args):
        if launcher is K._bwd_dx:
            reversed_dx.append(args[3]["REV"])
        return launch(launcher, *args)

    monkeypatch.setattr(K, "_launch", launch_spy)
    cases = ((torch.float32, True, {"fix_gamma": True}), (torch.bfloat16, True, {"activation": "relu", "z": True}),
             (torch.float16, True, {"affine": False}), (torch.bfloat16, False, {}), (torch.float32, False, {}))
    for k, (dtype, training, options) in enumerate(cases):
        x, w, b, rm, rv = _make(shape, len(shape) > 3, dtype, device, seed=120 + k)
        if shape[1] > 1:
            x = _with_offset_channel(x, requires_grad=training)
        if not training:  # the frozen backward of dγ, dβ alone: the sums pass without a dx pass
            x = x.detach()
        if options.get("affine") is False:
            w = b = None
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=training, fix_gamma=options.get("fix_gamma", False),
                  activation=options.get("activation"), z=z, dy_like_x=True)
    assert len(passes) == len(cases) and len(dx_passes) == 3 and reversed_dx == [True] * 3
    sms = config.multiprocessor_count(config.device_index(x))
    assert config.batch_norm_row_shares(math.prod(shape) // shape[1], shape[1], sms, "sums").shares >= 3
    _check_nan_channel_grads(shape, torch.bfloat16, device, 130, training=True)
    assert len(passes) == len(cases) + 1


def test_sums_rows_index_width(monkeypatch):
    """The row-strided sums pass counts rows and offsets in 64 bits where its loop's last step passes 2^31 elements
    (C = 1: rows within a grid stride of 2^31, where a 32-bit row index would wrap and read past x), in 32 bits well
    below; launches recorded on meta tensors, not run."""
    from fastnorm.kernels import _launch
    from fastnorm.ops import batch_norm as bn_ops

    widths = []

    def recorder(self, grid, args, meta, *rest, **options):
        if self.fn is K._bn_bwd_frozen_rows_kernel:
            widths.append(meta["IDX"])

    monkeypatch.setattr(_launch._Launcher, "__call__", recorder)
    monkeypatch.setattr(bn_ops, "uses_triton", lambda t: True)
    monkeypatch.setattr(config, "multiprocessor_count", lambda index: 132)
    for rows, width in ((2**31 - 100_000, tl.int64), (2**30, tl.int32)):
        x = torch.empty(rows, 1, dtype=torch.bfloat16, device="meta", requires_grad=True)
        w = torch.empty(1, device="meta", requires_grad=True)
        y = fastnorm.batch_norm(x, None, None, w, None, training=True)
        torch.autograd.grad(y, (x, w), torch.empty_like(y))
        assert widths[-1] == width, rows
    assert len(widths) == 2


def _check_nan_channel_grads(shape, dtype, device, seed: int, *, training: bool) -> None:
    """A NaN in one element of channel 0 of x: the backward (dy = 1) gives that channel's dγ NaN and every other dγ,
    and every dβ (Σdy), finite."""
    x, w, b, rm, rv = _make(shape, len(shape) > 3, dtype, device, seed=seed)
    x = x.detach()
    x.select(1, 0).reshape(-1)[0] = float("nan")
    x.requires_grad_(True)
    fastnorm.batch_norm(x, rm, rv, w, b, training).backward(torch.ones_like(x))
    assert torch.isnan(w.grad[0]) and torch.isfinite(w.grad[1:]).all() and torch.isfinite(b.grad).all()


def test_stats_rows_rule(monkeypatch):
    """The row-strided statistics pass takes the training forward over channels-last rows (never NCHW) of 4-byte or
    16-bit x from BN_STATS_ROWS' size in its channel ranges, cut by its own keys."""
    f = config.BN_STATS_ROWS
    for c, width in ((64, 64), (128, 128), (256, 64), (512, 512), (1024, 1024)):  # BN_ROWS_LANES
        assert config.batch_norm_stats_rows(f["min_numel"], 2, True, c)
        assert config.batch_norm_stats_rows(f["min_numel"], 4, True, c)
        cut = config.batch_norm_row_shares(1 << 20, c, 132, "stats")
        assert (cut.width, cut.rows, cut.blocks) == (width, f["block"] // width, -(-c // width))
    for numel, size, flat, c in ((f["min_numel"] - 1, 4, True, 64), (1 << 30, 4, False, 64), (1 << 30, 8, True, 64),
                                 (1 << 30, 1, True, 64), (1 << 30, 2, True, 192), (1 << 30, 2, True, 2048),
                                 (1 << 30, 2, True, 3)):
        assert not config.batch_norm_stats_rows(numel, size, flat, c)
    monkeypatch.setattr(config, "BN_STATS_ROWS", {**f, "per_sm": 5, "block": 256})
    cut = config.batch_norm_row_shares(802816, 64, 132, "stats")
    assert (cut.width, cut.rows, cut.blocks, cut.per_program, cut.shares) == (64, 4, 1, 1220, 659)  # 660 rounded
    monkeypatch.setattr(config, "BN_STATS_ROWS", None)
    assert not config.batch_norm_stats_rows(1 << 30, 4, True, 64)


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (9, 4, 8, 8), (2, 70, 3, 3), (37, 6), (2, 3, 4, 2, 3),
                                   (300, 1)])
def test_stats_rows_against_reference(monkeypatch, shape, device):
    """The training forward's statistics through the row-strided kernel and its merge (BN_STATS_ROWS at threshold
    0; tiles of 64: several rows a tile with a ragged last tile (C = 5, 6, 1), two channel blocks (C = 70), (N, C)
    rows and 3-d), fp32, bf16 and fp16 x, with ReLU and a residual, without parameters, against the reference (y,
    running statistics, and the backward from the saved statistics), with a channel of 1e4 + randn and a constant
    channel at 1e7; the partials merged 2 shares a step (several steps; an odd count); the saved statistics poisoned
    first; bitwise the same run to run; a NaN stays in its own channel."""
    monkeypatch.setattr(config, "BN_STATS_ROWS", rows_everywhere("BN_STATS_ROWS"))
    monkeypatch.setattr(config, "BN_ROWS_SUMS_TILE", {"shares": 2, "elements": 8, "channels": 4})  # 2 shares a step
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    passes = _count_passes(monkeypatch, "_stats_rows_pass", poison=(1, 2, 3))  # shift, mrel, rstd
    cases = ((torch.float32, {}), (torch.bfloat16, {"activation": "relu", "z": True}), (torch.float16, {}),
             (torch.float32, {"affine": False}))
    for k, (dtype, options) in enumerate(cases):
        x, w, b, rm, rv = _make(shape, len(shape) > 3, dtype, device, seed=100 + k)
        if shape[1] > 2:
            x = _with_offset_channel(x, requires_grad=False)
            x[:, 2] = 1e7 if dtype == torch.float32 else 1e4
            x.requires_grad_(True)
        if options.get("affine") is False:
            w = b = None
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=True, activation=options.get("activation"), z=z)
    assert len(passes) == len(cases)
    sms = config.multiprocessor_count(config.device_index(x))
    assert config.batch_norm_row_shares(math.prod(shape) // shape[1], shape[1], sms, "stats").shares >= 3
    x, w, b, rm, rv = _make(shape, len(shape) > 3, torch.bfloat16, device, seed=110, requires_grad=False)
    rm2, rv2 = rm.clone(), rv.clone()
    y = fastnorm.batch_norm(x, rm, rv, w, b, True)
    forget_replays()  # (on CUDA the calls below would replay the first's launches, past the pass counter)
    assert torch.equal(y, fastnorm.batch_norm(x, rm2, rv2, w, b, True))
    assert torch.equal(rm, rm2) and torch.equal(rv, rv2)
    x.select(1, 0).reshape(-1)[0] = float("nan")
    forget_replays()
    y = fastnorm.batch_norm(x, rm, rv, w, b, True)
    assert torch.isnan(y.select(1, 0)).all() and torch.isnan(rm[0]) and torch.isfinite(rm[1:]).all()
    assert torch.isfinite(y.transpose(0, 1)[1:]).all()
    assert len(passes) == len(cases) + 3


@pytest.mark.parametrize("momentum", [0.1, None])
def test_stats_rows_running_stats_after_k_steps(monkeypatch, momentum, device):
    """Running statistics through the row-strided statistics pass after three steps of a module, ``momentum=None``
    (the factor 1/num_batches_tracked read on the device) included, equal the reference's."""
    monkeypatch.setattr(config, "BN_STATS_ROWS", rows_everywhere("BN_STATS_ROWS"))
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    passes = _count_passes(monkeypatch, "_stats_rows_pass", poison=(1, 2, 3))  # shift, mrel, rstd
    m = fastnorm.nn.BatchNorm2d(3, momentum=momentum).to(device)
    rm, rv, nbt = np.zeros(3), np.ones(3), 0
    for step in range(3):
        x = (torch.randn(2 + step, 3, 3, 4, device=device) * (step + 1) + step).to(memory_format=torch.channels_last)
        m(x)
        fwd = ref.batch_norm_forward(to_np64(x), None, None, rm, rv, training=True, momentum=momentum, eps=1e-5,
                                     num_batches_tracked=nbt)
        rm, rv, nbt = fwd.new_running_mean, fwd.new_running_var, fwd.new_num_batches_tracked
    assert len(passes) == 3
    assert_close("running_mean", m.running_mean, rm, torch.float32)
    assert_close("running_var", m.running_var, rv, torch.float32)


@pytest.mark.parametrize("shape,dtype", [((3, 5, 9, 11), torch.float32), ((2, 3, 10, 9), torch.bfloat16),
                                         ((2, 3, 8, 12), torch.float32)])
def test_dx_flat_with_the_spatial_size_as_an_argument(monkeypatch, shape, dtype, device):
    """Past config.BN_SPATIAL_COMPILED sizes the flat dx kernel takes S and C as arguments (S's power-of-two factor
    compiled in: S = 99, 90, 96): dx and dz bitwise those with both compiled in."""
    monkeypatch.setattr(config, "BN_DX_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)

    def run():
        x, w, b, rm, rv = _make(shape, False, dtype, device, seed=4)
        z = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(dtype).to(device).requires_grad_(True)
        dy = torch.randn(shape, generator=torch.Generator().manual_seed(6)).to(dtype).to(device)
        fastnorm.batch_norm(x, rm, rv, w, b, True, activation="relu", z=z).backward(dy)
        return K._spatial(K.view(x)), x.grad, z.grad

    flat_passes = []
    real = K._dx_flat_pass
    monkeypatch.setattr(K, "_dx_flat_pass", lambda *a, **k: flat_passes.append(1) or real(*a, **k))
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 1 << 30)
    spatial, *compiled = run()
    assert spatial[1] == 0
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 0)
    spatial, *argument = run()
    assert spatial[1] > 0 and flat_passes == [1, 1]
    for a, e in zip(argument, compiled, strict=True):
        assert torch.equal(a, e)


def test_frozen_flat_rule(monkeypatch):
    """The frozen backward with parameter sums takes the image-strided flat kernel over NCHW x of 4-byte or 16-bit
    elements from BN_FROZEN_FLAT's size and batch thresholds, within its window, where its grid gives every
    multiprocessor a program ("min_per_sm"); never channels-last rows, nor with it None. Its cut covers the images
    in shares of at least "images" where there are as many."""
    assert config.batch_norm_frozen_flat(1 << 30, 2, False, 2048, 49, 132)
    assert config.batch_norm_frozen_flat(32 * 2048 * 49, 2, False, 2048, 49, 132)  # 98 blocks × 2 shares
    assert not config.batch_norm_frozen_flat(32 * 256 * 196, 2, False, 256, 196, 132)  # 49 blocks × 2 shares
    assert config.batch_norm_frozen_flat(32 * 256 * 196, 2, False, 256, 196, 98)
    for n, c, s, sms in ((32, 256, 196, 132), (256, 64, 3136, 132), (128, 2048, 49, 132), (1000, 3, 5, 4)):
        cut = config.batch_norm_image_shares(n, c, s, sms)
        assert cut.blocks * cut.block >= c * s > (cut.blocks - 1) * cut.block
        assert cut.per_program * cut.shares >= n > cut.per_program * (cut.shares - 1)
        assert cut.per_program >= min(n, config.BN_FROZEN_FLAT["images"]), (n, c, s, cut)
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", {**config.BN_FROZEN_FLAT, "min_numel": 1 << 20, "min_images": 16,
                                                   "block": 256, "window": 64})
    for numel, size, flat, c, s, expected in (
            (1 << 20, 4, False, 2048, 32, True), ((1 << 20) - 1, 4, False, 2048, 32, False),
            (1 << 20, 4, False, 2048, 64, False),  # 8 images
            (1 << 20, 2, False, 2048, 32, True), (1 << 20, 2, True, 64, 1, False), (1 << 20, 4, True, 64, 1, False),
            (1 << 20, 8, False, 64, 49, False), (1 << 20, 4, False, 64, 4, False), (1 << 20, 4, False, 64, 5, True)):
        assert config.batch_norm_frozen_flat(numel, size, flat, c, s, 132) == expected, (numel, size, flat, c, s)
    monkeypatch.setattr(config, "BN_SUMS_FLAT", 32)  # the sums pass: runs of at most BN_SUMS_FLAT too
    assert config.batch_norm_frozen_flat(1 << 20, 4, False, 2048, 32, 132, sums_only=True)
    assert not config.batch_norm_frozen_flat(1 << 20, 4, False, 1024, 33, 132, sums_only=True)
    assert config.batch_norm_frozen_flat(1 << 20, 4, False, 1024, 33, 132)
    monkeypatch.setattr(config, "BN_SUMS_FLAT", None)
    assert not config.batch_norm_frozen_flat(1 << 20, 4, False, 2048, 32, 132, sums_only=True)
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", None)
    assert not config.batch_norm_frozen_flat(1 << 30, 4, False, 64, 3136, 132)


def _with_offset_channel(x: torch.Tensor, requires_grad: bool = True) -> torch.Tensor:
    """x (detached) with channel 1 replaced by 1e4 + randn, the same draw every time: a channel whose mean dwarfs its
    spread."""
    x = x.detach()
    x[:, 1] = (torch.randn(x[:, 1].shape, generator=torch.Generator().manual_seed(3)) + 1e4).to(x.dtype)
    return x.requires_grad_(requires_grad)


def _count_passes(monkeypatch, name: str, poison: tuple[int, ...] = ()) -> list:
    """Count the calls of the kernels module's pass ``name`` (e.g. "_frozen_flat_pass", "_frozen_rows_pass",
    "_stats_rows_pass") into the list returned, NaN-filling its positional arguments at ``poison`` (its outputs;
    None skipped) before each."""
    passes, real = [], getattr(K, name)

    def counted(*args, **kwargs):
        for k in poison:
            if args[k] is not None:
                args[k].fill_(float("nan"))
        passes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(K, name, counted)
    return passes


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (9, 4, 8, 8), (2, 4, 70, 3), (4, 7, 3), (2, 3, 4, 2, 3),
                                   (3, 1, 5, 5)])
def test_frozen_flat_against_reference(monkeypatch, shape, device):
    """The frozen backward with dγ, dβ through the image-strided flat kernel (BN_FROZEN_FLAT at threshold 0; BLOCK
    64: ragged last blocks of an image, runs across blocks (S = 210: up to five), several images a program (9×4×8²),
    several programs a block, C = 1; (N, C, L) and 3-d) in evaluation and under use_global_stats, with ReLU and a
    residual, under fix_gamma, 16- and 32-bit x, fp32 parameters of 16-bit x, against the reference, with a channel
    of 1e4 + randn; dx and dz poisoned before every pass; a NaN reaches its own channel's dγ, dβ alone."""
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", frozen_flat_everywhere())
    passes = _count_passes(monkeypatch, "_frozen_flat_pass", poison=(3, 4))  # dx, dz
    cases = ((torch.float32, False, {}), (torch.bfloat16, True, {"activation": "relu", "z": True}),
             (torch.float16, False, {"fix_gamma": True}), (torch.float32, True, {"activation": "relu"}))
    for k, (dtype, training, options) in enumerate(cases):
        x, w, b, rm, rv = _make(shape, False, dtype, device, seed=40 + k)
        if shape[1] > 1:
            x = _with_offset_channel(x)
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=training, use_global_stats=training,
                  fix_gamma=options.get("fix_gamma", False), activation=options.get("activation"), z=z)
    assert len(passes) == len(cases)
    x, w, b, rm, rv = _make(shape, False, torch.float32, device, seed=50)
    x = x.detach()
    x.view(shape[0], shape[1], -1)[0, 0, 0] = float("nan")  # the first run of a block that holds the next ones
    x.requires_grad_(True)
    fastnorm.batch_norm(x, rm, rv, w, b, False).backward(torch.ones_like(x))
    assert len(passes) == len(cases) + 1
    assert torch.isnan(w.grad[0]) and torch.isfinite(w.grad[1:]).all() and torch.isfinite(b.grad).all()


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (9, 4, 8, 8), (2, 4, 70, 3), (4, 7, 3)])
def test_sums_flat_against_reference(monkeypatch, shape, device):
    """The sums pass through the frozen flat kernel without its dx (BN_SUMS_FLAT; BN_FROZEN_FLAT at every size): the
    two-launch training backward (with ReLU and a residual; under fix_gamma; 16- and 32-bit x) and the frozen
    backward with dγ, dβ alone, against the reference, with a channel of 1e4 + randn (x̂'s compensation, training);
    the stage API's ``backward_sums`` against the tile kernel's, runs of S taking it up to a bound of S."""
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", frozen_flat_everywhere())
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    passes = []
    real = K._frozen_flat_pass
    monkeypatch.setattr(K, "_frozen_flat_pass", lambda xv, dy, y, dx, *a, **k: passes.append(dx is None) or real(
        xv, dy, y, dx, *a, **k))
    for k, (dtype, options) in enumerate(((torch.float32, {}), (torch.bfloat16, {"activation": "relu", "z": True}),
                                          (torch.float16, {"fix_gamma": True}))):
        x, w, b, rm, rv = _make(shape, False, dtype, device, seed=60 + k)
        x = _with_offset_channel(x)
        z = torch.randn_like(x).requires_grad_(True) if options.get("z") else None
        _check_bn(x, w, b, rm, rv, training=True, fix_gamma=options.get("fix_gamma", False),
                  activation=options.get("activation"), z=z)
    x, w, b, rm, rv = _make(shape, False, torch.float32, device, seed=70)
    x.requires_grad_(False)
    _check_bn(x, w, b, rm, rv, training=True, use_global_stats=True)  # dγ, dβ alone: the sums pass
    assert passes == [True] * 4
    x, dy = x.detach(), torch.randn_like(x)
    dims = [d for d in range(x.dim()) if d != 1]
    mean, invstd = x.mean(dims), torch.rsqrt(x.var(dims, unbiased=False) + 1e-5)
    s = math.prod(shape[2:])
    monkeypatch.setattr(config, "BN_SUMS_FLAT", s)
    sums = fastnorm.ops.batch_norm.backward_sums(dy, x, mean, invstd)
    for bound in (s - 1, None):  # runs longer than the bound, or none: the tile sums pass
        monkeypatch.setattr(config, "BN_SUMS_FLAT", bound)
        tile = fastnorm.ops.batch_norm.backward_sums(dy, x, mean, invstd)
        torch.testing.assert_close(sums, tile, rtol=1e-5, atol=1e-4)
    assert passes == [True] * 5


@pytest.mark.parametrize("shape,dtype", [((3, 5, 9, 11), torch.float32), ((2, 3, 10, 9), torch.bfloat16),
                                         ((2, 3, 8, 12), torch.float32)])
def test_frozen_flat_with_the_spatial_size_as_an_argument(monkeypatch, shape, dtype, device):
    """Past config.BN_SPATIAL_COMPILED sizes the frozen flat kernel takes S as an argument (its power-of-two factor
    compiled in: S = 99, 90, 96): dx, dz, dγ and dβ bitwise those with S compiled in; and with 64-bit indices forced,
    bitwise the 32-bit results."""
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", frozen_flat_everywhere())
    passes = _count_passes(monkeypatch, "_frozen_flat_pass")

    def run():
        x, w, b, rm, rv = _make(shape, False, dtype, device, seed=4)
        z = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(dtype).to(device).requires_grad_(True)
        dy = torch.randn(shape, generator=torch.Generator().manual_seed(6)).to(dtype).to(device)
        fastnorm.batch_norm(x, rm, rv, w, b, False, activation="relu", z=z).backward(dy)
        return K._spatial(K.view(x)), x.grad, z.grad, w.grad, b.grad

    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 1 << 30)
    spatial, *compiled = run()
    assert spatial[1] == 0
    monkeypatch.setattr(K, "_flat_idx", lambda numel, block: tl.int64)
    forget_replays()
    for a, e in zip(run()[1:], compiled, strict=True):
        assert torch.equal(a, e)
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 0)
    spatial, *argument = run()
    assert spatial[1] > 0 and passes == [1, 1, 1]
    for a, e in zip(argument, compiled, strict=True):
        assert torch.equal(a, e)


@pytest.mark.parametrize("shape,cl,spatial_compiled", [((3, 5, 7, 9), False, 1 << 30), ((3, 5, 9, 11), False, 0),
                                                        ((4, 6, 5, 3), True, 1 << 30)])
def test_flat_kernels_in_64_bit(monkeypatch, shape, cl, spatial_compiled, device):
    """The flat apply and dx kernels with 64-bit indices (forced) give the 32-bit results bitwise: the two-launch
    training forward and backward, the frozen backward with dx alone and evaluation; S compiled in or an argument
    (S = 99 past BN_SPATIAL_COMPILED: the 64-bit division paths), channels-last rows."""
    monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_DX_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", spatial_compiled)
    x, w, b, rm, rv = (t.detach() for t in _make(shape, cl, torch.float32, device, seed=12))
    dy = torch.randn(x.shape, generator=torch.Generator().manual_seed(13)).to(device)

    def run():
        out = []
        for training, glob in ((True, False), (True, True), (False, False)):
            xg = x.clone().requires_grad_(True)
            wg, bg = (t.clone().requires_grad_(training and not glob) for t in (w, b))
            y = fastnorm.batch_norm(xg, rm.clone(), rv.clone(), wg, bg, training, use_global_stats=glob)
            out += [y, *torch.autograd.grad(y, [t for t in (xg, wg, bg) if t.requires_grad], dy)]
        return out

    real, idx = K._flat_shape, []

    def recorded(xv, block, force=None):
        grid, sizes, shape_ = real(xv, block)
        idx.append(shape_["IDX"])
        return grid, sizes, {**shape_, "IDX": force or shape_["IDX"]}

    monkeypatch.setattr(K, "_flat_shape", recorded)
    expected = run()
    launches = len(idx)
    assert set(idx) == {tl.int32} and launches == (5 if cl else 6), idx  # CL training: the tile dx kernel
    monkeypatch.setattr(K, "_flat_shape", lambda xv, block: recorded(xv, block, tl.int64))
    forget_replays()
    for a, e in zip(run(), expected, strict=True):
        assert torch.equal(a, e)
    assert len(idx) == 2 * launches


@pytest.mark.parametrize("shape,cl,dtype,ragged", [
    ((3, 5, 7, 9), False, torch.float32, False), ((2, 3, 7, 11), False, torch.float16, True),
    ((4, 6, 5, 4), True, torch.float32, False), ((3, 5, 7, 3), True, torch.bfloat16, True),
    ((37, 3), False, torch.float32, True)])
def test_apply_reverse(monkeypatch, shape, cl, dtype, ragged, device):
    """The two-launch training forward's apply walks the tensor from its end (config.BN_APPLY_REVERSE): tiled over
    several chunks, with and without a short last chunk, and flat with a ragged last block, it writes every element
    (y poisoned) and gives bitwise what the ascending order gives; the training forward asks for it, evaluation does
    not."""
    monkeypatch.setattr(config, "BN_TILE", {**config.BN_TILE, "fwd": 16})
    monkeypatch.setattr(config, "BN_ITEM", {**config.BN_ITEM, "stream": 32})
    monkeypatch.setattr(config, "BN_ITEMS_PER_SM", {**config.BN_ITEMS_PER_SM, "stream": 64})
    x, w, b, rm, rv = (t.detach() for t in _make(shape, cl, dtype, device, seed=7))
    xv = K.view(x)
    plan = K._plan(xv, x.element_size(), "stream", "fwd")
    assert plan.split > 1 and (xv.v % plan.vpi != 0) == ragged, plan  # chunks to order; a short last one
    for flat in (False, True):
        monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256) if flat else (1 << 62, 64, 2, 256))
        ys = []
        for reverse in (False, True):
            y = poisoned_like(x)
            K.apply(xv, y, None, w, b, rm, None, rv, is_var=True, eps=1e-5, fix_gamma=False, relu=False, save=False,
                    reverse=reverse)
            ys.append(y)
        assert not ys[1].isnan().any() and torch.equal(ys[0], ys[1]), flat

    asked = []
    real = K.apply
    monkeypatch.setattr(K, "apply", lambda *a, **k: asked.append(k.get("reverse", False)) or real(*a, **k))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    fastnorm.batch_norm(x, None, None, w, b, training=True)
    fastnorm.batch_norm(x, rm, rv, w, b, training=False)
    assert asked == [True, False], asked


def _record_keeps(monkeypatch) -> list:
    """(loop, KEEP, the KEEPV argument, the plan's item length and tile width) of every tile-kernel launch from here
    on, in order."""
    keeps = []
    real_launch = K._launch

    def launch(launcher, loop, grid, args, meta, xv, plan, spatial=None):
        keepv = dict(zip(launcher.fn.arg_names, args, strict=False)).get("KEEPV", 0)  # (args: no constexprs)
        keeps.append((loop, meta.get("KEEP", False), keepv, plan.vpi, plan.bs))
        return real_launch(launcher, loop, grid, args, meta, xv, plan, spatial)

    monkeypatch.setattr(K, "_launch", launch)
    return keeps


@pytest.mark.parametrize("shape,cl,dtype,aligned", [
    ((6, 5, 8, 8), False, torch.float32, False),  # NCHW runs of S = 64
    ((6, 5, 7, 9), True, torch.bfloat16, False),  # channels-last
    ((8, 3, 9, 11), False, torch.float16, True),  # S = 99: aligned rows
])
def test_reductions_keep_their_tail(monkeypatch, shape, cl, dtype, aligned, device):
    """The two-launch training passes' reductions load each item's last KEEPV indices ``evict_last`` (config.
    BN_KEEP_BYTES, ``K._kept``), unpipelined, in a loop of their own. With a third of x's bytes kept (a third of the
    forward's re-read bytes, a sixth of the backward's: x and dy), the split inside items of several tiles, the
    forward (y, running statistics) and the backward (dx, dw, db) are bitwise those without. The launches that keep
    are the forward's statistics (not over aligned rows) and the training backward's sums, each given a KEEPV that
    leaves a full tile of its item before the split; the dx and apply passes, the frozen model's sums without dx and
    the one-launch passes keep nothing."""
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_DX_FLAT", None)  # the tile dx pass, whose keep this records
    monkeypatch.setattr(config, "multiprocessor_count", lambda device: 4)  # the same plans on any device
    monkeypatch.setattr(config, "BN_STATS_WAVE_BY_DEVICE", {})
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 16, "bwd": 16, "sums": 16})
    channels_last_blocks(monkeypatch, 2)
    x, w, b, rm, rv = _make(shape, cl, dtype, device, seed=11)
    dy = torch.randn(shape, device=device).to(dtype)
    reread = x.numel() * x.element_size()
    results = []
    for keep in (0, reread // 3):
        monkeypatch.setattr(config, "BN_KEEP_BYTES", keep)
        keeps = _record_keeps(monkeypatch)
        rm_, rv_ = rm.clone(), rv.clone()
        y = fastnorm.batch_norm(x, rm_, rv_, w, b, training=True)
        results.append((y, *torch.autograd.grad(y, (x, w, b), dy), rm_, rv_))
        kept = {loop: rest for loop, *rest in keeps}
        assert {"stats", "bwd", "dx"} <= set(kept), keeps
        if keep:
            assert kept["stats"][0] == (not aligned) and kept["bwd"][0], keeps
            for loop, streams in (("stats", 1), ("bwd", 2))[aligned:]:  # (bytes re-read: x; x and dy)
                _, v, vpi, bs = kept[loop]
                assert v == -(-vpi * keep // (streams * reread)), (loop, keeps)  # the item's share of the bytes
                assert 0 < v <= vpi - bs, (loop, keeps)  # the split inside the item: a full tile before it
        else:
            assert not any(k or v for _, k, v, _, _ in keeps), keeps
        assert not any(k for loop, k, *_ in keeps if loop in ("apply", "dx")), keeps
    for name, a, e in zip("y dx dw db running_mean running_var".split(), *results, strict=True):
        assert torch.equal(a, e), name

    keeps = _record_keeps(monkeypatch)
    torch.autograd.grad(fastnorm.batch_norm(x.detach(), rm, rv, w, b, training=False), (w, b), dy)  # sums alone
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", True)
    y = fastnorm.batch_norm(x, None, None, w, b, training=True)
    torch.autograd.grad(y, (x, w, b), dy)
    assert [loop for loop, *_ in keeps if loop != "apply"] == ["bwd", "stats", "bwd"], keeps
    assert not any(k or v for _, k, v, _, _ in keeps), keeps


#: (resident, fused, training, use_global_stats, flat apply) of each path through the tile kernels (flat apply: the
#: one-pass forward by the flat pointwise kernel, S and C then arguments too)
_SPATIAL_MODES = {
    "train, single read": (True, False, True, False, False),
    "train, one launch": (False, True, True, False, False),
    "train, two launches": (False, False, True, False, False),
    "train, two launches, flat apply": (False, False, True, False, True),
    "eval": (True, False, False, False, False),
    "eval, flat apply": (True, False, False, False, True),
    "frozen": (True, False, True, True, False),
}


def _as_argument(s: int) -> tuple[int, int, int]:
    """``K._spatial`` of a spatial size taken as an argument: (−p, S/p, the magic number of S/p), p its power-of-two
    factor up to 16."""
    p = min(s & -s, 16)
    return -p, s // p, K._divisor_magic(s // p)


def test_divisor_magic_gives_every_quotient():
    """The kernels form q // d for a run-time d as umulhi(2q, M) >> SH (``K._divisor_magic``, ``K._quotient``): exact
    for every q below 2**31 — checked at the quotient steps around q = 0, d, 2**31 − 1 and at random q, for small,
    random and extreme d."""
    rng = random.Random(7)
    divisors = [*range(1, 600), *(rng.randrange(2, 2**31) for _ in range(600)), 2**30, 2**30 + 1, 2**31 - 1]
    for d in divisors:
        magic = K._divisor_magic(d)
        m, sh = magic >> 5, magic & 31
        assert 2**31 <= m < 2**32, d
        top = (2**31 - 1) // d * d
        for q in (0, 1, d - 1, d, d + 1, top - 1, top, 2**31 - 1, rng.randrange(2**31)):
            assert ((2 * q * m) >> 32) >> sh == q // d, (d, q)
    assert K._divisor_magic(2**31) == 0  # such sizes index in 64 bits, where the kernels divide


@triton.jit
def _quotient_probe(q_ptr, out_ptr, magic, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, K._quotient(tl.load(q_ptr + offs), magic, 0))


def test_quotient_kernel_gives_every_quotient(device):
    """``K._quotient`` itself (its casts and shifts in a kernel, int32 indices up to 2**31 − 1) gives q // d."""
    rng = random.Random(8)
    divisors = (1, 2, 3, 5, 49, 196, 5625, 2**30 - 1, 2**30 + 1, 2**31 - 1,
                *(rng.randrange(2, 2**31) for _ in range(20)))
    for d in divisors:
        top = (2**31 - 1) // d * d
        qs = [0, 1, d - 1, d, d + 1, top - 1, top, 2**31 - 2, 2**31 - 1]
        qs += [rng.randrange(2**31) for _ in range(64 - len(qs))]
        q = torch.tensor([min(max(v, 0), 2**31 - 1) for v in qs], dtype=torch.int32, device=device)
        out = torch.full_like(q, -1)
        _quotient_probe[(1,)](q, out, K._divisor_magic(d), N=64)
        assert torch.equal(out.cpu().long(), q.cpu().long() // d), d


@pytest.mark.parametrize("mode", list(_SPATIAL_MODES))
@pytest.mark.parametrize("shape,dtype", [((3, 5, 9, 11), torch.float32), ((2, 3, 5, 5, 5), torch.bfloat16),
                                         ((3, 5, 14, 14), torch.float32), ((2, 3, 10, 9), torch.bfloat16),
                                         ((2, 3, 8, 9), torch.float32), ((2, 3, 8, 12), torch.bfloat16),
                                         ((2, 3, 16, 16), torch.float32),
                                         # model sizes, where the plans use many programs per channel (GPU only)
                                         *(pytest.param(s, dt, marks=pytest.mark.gpu) for s, dt in (
                                             ((8, 64, 56, 56), torch.bfloat16), ((4, 128, 75, 75), torch.float32),
                                             ((8, 256, 25, 38), torch.bfloat16), ((16, 256, 14, 14), torch.float32),
                                             ((4, 64, 100, 100), torch.bfloat16)))])
def test_spatial_size_as_an_argument_gives_the_same_bits(monkeypatch, mode, shape, dtype, device):
    """Past config.BN_SPATIAL_COMPILED spatial sizes the NCHW tile kernels take S as an argument (its power-of-two
    factor, up to 16, still compiled in: S = 99, 125 odd; 196 and 90 with 4 and 2; 72 with 8; 96 and 256 with 16;
    on a GPU also model sizes, S = 3136, 5625, 950, 196 and 10000):
    y, dx, dz, dw, db, the running statistics and SyncBatchNorm's packed statistics are bitwise those of the kernels
    with S compiled in, in every path, with ReLU and a residual. (On a GPU the compiled-in divisibility is what keeps
    the tiles' layout, and so the order of the sums, the same: without it S = 196 and 100 compiled to other
    layouts.)"""
    resident, fused, training, glob, flat = _SPATIAL_MODES[mode]
    monkeypatch.setattr(config, "BN_RESIDENT", resident)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", fused)
    if flat:
        monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256))
    else:  # large model sizes take it by default
        monkeypatch.setattr(config, "BN_APPLY_FLAT", (1 << 62, *config.BN_APPLY_FLAT[1:]))

    def run():
        x, w, b, rm, rv = _make(shape, False, dtype, device, seed=4)
        z = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(dtype).to(device).requires_grad_(True)
        dy = torch.randn(shape, generator=torch.Generator().manual_seed(6)).to(dtype).to(device)
        y = fastnorm.batch_norm(x, rm, rv, w, b, training, use_global_stats=glob, activation="relu", z=z)
        y.backward(dy)
        packed = fastnorm.ops.batch_norm._local_stats(x.detach(), shape[1])
        return K._spatial(K.view(x)), [y, x.grad, z.grad, w.grad, b.grad, rm, rv, packed]

    flat_passes = []
    real = K._apply_flat_pass
    monkeypatch.setattr(K, "_apply_flat_pass", lambda *a, **k: flat_passes.append(1) or real(*a, **k))
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 1 << 30)
    spatial, compiled = run()
    assert spatial == (math.prod(shape[2:]), 0, 0)
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 0)
    spatial, argument = run()
    assert spatial == _as_argument(math.prod(shape[2:]))
    assert len(flat_passes) == (2 if flat else 0)  # the mode's path was taken, once in each form
    for name, a, e in zip("y dx dz dw db running_mean running_var packed".split(), argument, compiled, strict=True):
        assert torch.equal(a, e), name


def _record_aligned(monkeypatch) -> list:
    """The aligned-row vector (0: runs as they lie) of every launch planned by ``K._reduction_view``, in order."""
    taken = []
    real = K._reduction_view
    monkeypatch.setattr(K, "_reduction_view", lambda *a: taken.append((r := real(*a))[1]) or r)
    return taken


def test_aligned_rows_rule():
    """The NCHW statistics pass reads aligned rows (config.BN_ALIGNED_ROWS) for 16-bit x at an odd S past the row
    layout's sizes, in 16-byte vectors; not for 4-byte x, an even S or S <= BN_ROW_LANES_MAX."""
    for size, s, expected in ((2, 5625, 8), (2, 65, 8), (2, 289, 8), (2, 64, 0), (2, 49, 0), (2, 950, 0),
                              (2, 3136, 0), (4, 5625, 0), (8, 5625, 0)):
        assert config.batch_norm_aligned_rows(size, s) == expected, (size, s)


@pytest.mark.parametrize("shape", [(8, 5, 9, 11), (8, 1, 65, 1), (1, 8, 67), (8, 3, 3, 5, 7), (8, 3, 67),
                                   (8, 129, 13, 5), (3, 5, 9, 11),
                                   # model sizes (GPU only): Inception-v3's 35² and 17², and 75²
                                   *(pytest.param(s, marks=pytest.mark.gpu) for s in (
                                       (8, 288, 35, 35), (16, 768, 17, 17), (4, 64, 75, 75)))])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("tile", [64, 4096])
def test_aligned_rows_against_reference(monkeypatch, shape, dtype, tile, device):
    """16-bit NCHW x at an odd S >= 65 (S = 99, 65, 67, 105, 67, 65; C = 1, 3, 5, 8, 129; a batch of 1; 3-d and
    (N, C, L); on a GPU also model sizes, default tiles only): the forward's statistics and the backward's sums read
    each run as an aligned row whose vectors they share with the neighbouring runs (``K._aligned_rows``) — not where
    N·C·S is no multiple of 8 (3×5×99: runs as they lie, the same checks). On tiles of 64 elements
    (many tiles, ragged ones, vectors of several images in one tile) and 4096, both passes in launches of their own:
    the training forward and backward against the reference, plain and with ReLU and a residual, with a channel of
    1e4 + randn whose first element is a spike of 1e5 (the shift), a constant channel at 1e7 (exact zeros; float16:
    1e3, 1e4, 6e4) and the running statistics; and SyncBatchNorm's packed statistics. Each took the aligned rows
    (C = 129 on 64-element tiles only where a tile holds a vector: its channel block depends on the device's
    multiprocessors)."""
    if tile == 64 and math.prod(shape) > 1 << 17:
        pytest.skip("model sizes on the default tiles only")
    if tile == 64 and shape[1] == 129 and device == "cpu":
        pytest.skip("at the CPU's 4 multiprocessors C = 129 takes tiles of 4 lanes, narrower than a vector: its runs "
                    "read as they lie, 2 min an interpreted dtype (C = 129 takes the vectors on 4096-element tiles)")
    monkeypatch.setattr(config, "BN_TILE", {**config.BN_TILE, "fwd": tile, "sums": tile})
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    taken = _record_aligned(monkeypatch)
    x, w, b, rm, rv = _make(shape, False, dtype, device, requires_grad=False)
    x = x.detach().clone()
    big = 1e4 if dtype == torch.bfloat16 else 1e3  # (float16 ends at 65504)
    if shape[1] >= 3:
        x[:, 0] = (torch.randn(x[:, 0].shape, device=device) + big).to(dtype)
        x.view(-1)[0] = 10 * big
        x[:, 2] = 1e7 if dtype == torch.bfloat16 else 6e4
    x.requires_grad_(True)
    w.requires_grad_(True)
    b.requires_grad_(True)
    _check_bn(x, w, b, rm, rv, training=True)
    z = torch.randn_like(x).requires_grad_(True)
    _check_bn(x, w, b, rm, rv, training=True, activation="relu", z=z)
    packed = fastnorm.ops.batch_norm._local_stats(x.detach(), shape[1])
    xs = to_np64(x.detach()).swapaxes(0, 1).reshape(shape[1], -1)
    mean = xs.mean(1)
    assert_close("packed mean", packed[:shape[1]], mean, torch.float32)
    assert_close("packed M2", packed[shape[1]:-1], ((xs - mean[:, None]) ** 2).sum(1), torch.float32)
    if shape[1] >= 3:
        assert packed[shape[1] + 2].item() == 0.0  # the constant channel
    assert len(taken) == 5, taken  # statistics and sums twice, packed statistics once
    if tile == 64 and shape[1] == 129:  # 64 // channels a tile: narrower than a vector at some plans, not all
        assert set(taken) <= {0, 8}, taken
    else:
        assert taken == [0 if math.prod(shape) % 8 else 8] * 5, taken


def test_aligned_rows_in_64_bit_and_nan(monkeypatch, device):
    """The aligned rows with 64-bit indices (forced) give the 32-bit results, forward and backward; a NaN in x makes
    its own channel's statistics NaN and no other's, though its vector is read by the neighbouring run too, and a
    NaN in dy its own channel's dγ and dβ; the one-launch forward and backward, whose items a writing pass shares,
    read the runs as they lie."""
    monkeypatch.setattr(config, "BN_TILE", {**config.BN_TILE, "fwd": 64, "sums": 64})
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    x, w, b, rm, rv = _make((8, 5, 9, 11), False, torch.bfloat16, device, requires_grad=False)
    dy = torch.randn(x.shape, generator=torch.Generator().manual_seed(3)).to(x.dtype).to(device)

    def step(x, dy):
        xg, wg, bg = (t.detach().clone().requires_grad_(True) for t in (x, w, b))
        y = fastnorm.batch_norm(xg, rm.clone(), rv.clone(), wg, bg, True)
        return (y, *torch.autograd.grad(y, (xg, wg, bg), dy))

    out32 = step(x, dy)
    real_idx = K._idx
    monkeypatch.setattr(K, "_idx", lambda *a: tl.int64)
    forget_replays()
    for name, a, e in zip(("y", "dx", "dw", "db"), step(x, dy), out32, strict=True):
        assert torch.equal(a, e), name
    monkeypatch.setattr(K, "_idx", real_idx)
    xn = x.clone()
    xn[1, 2, 0, 0] = float("nan")  # the first element of a run: its vector holds the end of channel 1's run
    packed = fastnorm.ops.batch_norm._local_stats(xn, 5)
    assert torch.isnan(packed[2]) and torch.isnan(packed[7])
    assert torch.isfinite(packed[[0, 1, 3, 4, 5, 6, 8, 9]]).all()
    dyn = dy.clone()
    dyn[1, 2, 0, 0] = float("nan")
    _, _, dw, db = step(x, dyn)
    assert torch.isnan(dw[2]) and torch.isnan(db[2])
    assert torch.isfinite(dw[[0, 1, 3, 4]]).all() and torch.isfinite(db[[0, 1, 3, 4]]).all()
    taken = _record_aligned(monkeypatch)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", True)
    _check_bn(x.requires_grad_(True), w.requires_grad_(True), b, rm, rv, training=True)
    assert taken == [0, 0], taken  # the one-launch forward's and backward's


def test_aligned_rows_read_inside_the_tensor(monkeypatch):
    """Every element the aligned rows load (the interpreter's masked loads, recorded) lies inside x and dy, each the
    middle of a buffer whose margins hold NaN and no other tensor: vectors that overlap no run (S = 67, 69: a row's
    last vectors can lie past its run) are not loaded, nor is a last vector that would overhang the tensor (N·C·S no
    multiple of 8: runs as they lie). Statistics and sums, tiles of 64 and 4096."""
    if not K.INTERPRETER:
        pytest.skip("records the interpreter's loads")
    import triton.runtime.interpreter as interp

    loads = []
    real_load = interp.InterpreterBuilder.create_masked_load

    def record(self, ptrs, mask, other, *rest):  # the rest: cache and volatile flags (triton 3.6 passes one more)
        loads.append(ptrs.data[mask.data].astype(np.int64))
        return real_load(self, ptrs, mask, other, *rest)

    monkeypatch.setattr(interp.InterpreterBuilder, "create_masked_load", record)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    pad = 4096  # elements of margin on either side

    def in_margins(shape):
        buf = torch.full((math.prod(shape) + 2 * pad,), float("nan"), dtype=torch.bfloat16)
        buf[pad:-pad] = torch.randn(math.prod(shape)).to(torch.bfloat16)
        return buf, buf[pad:-pad].view(shape)

    for shape in ((8, 3, 67), (8, 1, 69), (1, 8, 3, 23), (3, 5, 67)):
        for tile in (64, 4096):
            monkeypatch.setattr(config, "BN_TILE", {**config.BN_TILE, "fwd": tile, "sums": tile})
            (xbuf, x), (dybuf, dy) = in_margins(shape), in_margins(shape)
            x.requires_grad_(True)
            loads.clear()
            y = fastnorm.batch_norm(x, None, None, training=True)
            (dx,) = torch.autograd.grad(y, x, dy)
            assert torch.isfinite(y).all() and torch.isfinite(dx).all(), (shape, tile)
            for buf, t in ((xbuf, x), (dybuf, dy)):
                lo, hi = t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()
                first, end = buf.data_ptr(), buf.data_ptr() + buf.numel() * buf.element_size()
                margins = [a[((a >= first) & (a < lo)) | ((a >= hi) & (a < end))] for a in loads]
                assert not any(m.size for m in margins), (shape, tile)


def test_aligned_rows_at_an_unaligned_start(monkeypatch, device):
    """x starting one element into its storage (no 16-byte alignment: on a GPU the kernels compile without vector
    loads) through the aligned rows: the training forward and backward against the reference."""
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    taken = _record_aligned(monkeypatch)
    shape = (8, 3, 9, 11)
    _, w, b, rm, rv = _make(shape, False, torch.bfloat16, device)
    storage = torch.randn(math.prod(shape) + 1, generator=torch.Generator().manual_seed(2)).to(torch.bfloat16)
    x = storage.to(device)[1:].view(shape).requires_grad_(True)
    assert x.storage_offset() == 1
    _check_bn(x, w, b, rm, rv, training=True)
    assert taken == [8, 8], taken


def test_index_width_counts_inner_indices():
    """``K._idx`` takes 64 bits where an inner index can pass 2³¹ though the element offsets do not: aligned rows of
    a single channel (v = N·8·M > N·S) and the row layout (v = N·L), near 2³¹ elements."""
    for shape in ((33030017, 1, 65), (50_000_000, 1, 33)):
        xv = K.view(torch.empty(shape, dtype=torch.bfloat16, device="meta"))
        rv, al, _, plan = K._reduction_view(xv, 2, "fused", "fwd", True)
        assert xv.x.numel() < 2**31 <= rv.v + plan.vpi, shape
        assert K._idx(rv, plan.bs, plan.cb, plan.vpi) == tl.int64, shape


def test_spatial_sizes_compiled_in_up_to_the_limit(monkeypatch, device):
    """The first config.BN_SPATIAL_COMPILED distinct NCHW sizes (S > 64) are compiled in, later ones run as an
    argument; each size keeps its decision, the row layout (S <= 64) and channels-last always compile theirs in, a
    change to config counts again; and the flat kernel takes S and C as arguments where the tile kernels take S."""
    monkeypatch.setattr(config, "BN_SPATIAL_COMPILED", 2)

    def spatial(shape, cl=False):
        x = torch.empty(shape, device=device)
        return K._spatial(K.view(x.to(memory_format=torch.channels_last) if cl else x))[:2]  # S and S_RT

    assert spatial((2, 3, 9, 11)) == (99, 0)
    assert spatial((2, 3, 10, 10)) == (100, 0)
    assert spatial((2, 3, 11, 11)) == (-1, 121)  # a third size
    assert spatial((4, 7, 9, 11)) == (99, 0)  # a size met before keeps its kernels
    assert spatial((2, 3, 11, 11)) == (-1, 121)
    assert spatial((2, 3, 14, 14)) == (-4, 49) and spatial((2, 3, 16, 16)) == (-16, 16)
    assert spatial((2, 3, 7, 7)) == (49, 0) and spatial((2, 3, 12, 12), cl=True) == (1, 0)
    monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256))  # a config change: the count starts again
    assert spatial((2, 3, 11, 11)) == (121, 0)
    passes = []
    real = K._apply_flat_pass
    monkeypatch.setattr(K, "_apply_flat_pass",
                        lambda xv, *a, **k: passes.append(K._spatial(xv)[0]) or real(xv, *a, **k))
    for shape in ((2, 3, 11, 11), (2, 3, 10, 10), (2, 3, 9, 11)):  # compiled in, compiled in, an argument
        x, w, b, rm, rv = _make(shape, False, torch.float32, device)
        _check_bn(x, w, b, rm, rv, training=False)
    assert passes == [121, 100, -1]


# ------------------------------------------------------------------------------ the single-read training forward


@pytest.mark.parametrize("sms", [1, 7, 132])
@pytest.mark.parametrize("flat", [False, True])
def test_resident_plan_contract(flat, sms):
    """Every plan covers the tensor with at most one program per multiprocessor, items within the register
    budget; only a tensor of more than half the budget of all programs gets no plan (power-of-two items waste at
    most that much)."""
    cap = config.BN_RESIDENT_BYTES // 4
    for c in (1, 3, 64, 65, 129, 2048):
        for v in (1, 7, 49, 64, 1000, 1568, 4096, 25088):
            for lanes in ((0,) if flat else (0, 64)):
                if lanes and v % lanes:
                    continue
                plan = config.batch_norm_resident_plan(flat, c, v, 4, sms, lanes)
                if plan is None:
                    assert 2 * c * v > sms * cap, (c, v)
                    continue
                assert plan.ncb * plan.split <= sms and plan.cb * plan.vp <= cap
                assert plan.ncb * plan.cb >= c > (plan.ncb - 1) * plan.cb
                assert plan.split * plan.vp >= v > (plan.split - 1) * plan.vp
                assert plan.vp & (plan.vp - 1) == 0 and plan.cb & (plan.cb - 1) == 0 and plan.vp >= lanes
    assert config.batch_norm_resident_plan(False, 2048, 32 * 64, 4, 132, 64) is not None  # 32×2048×7²
    assert config.batch_norm_resident_plan(True, 2048, 32 * 49, 4, 132) is not None
    assert config.batch_norm_resident_plan(False, 64, 256 * 3136, 4, 132) is None  # 256×64×56²


def test_resident_held_bytes():
    """An element held by a single-read kernel counts the accumulation dtype's bytes, or, for 16-bit channels-last
    inputs (held as loaded), its own; the backward's budget is shared by its held tensors (dy and x, and y)."""
    held = config.batch_norm_resident_held_bytes
    plan = config.batch_norm_resident_plan
    for flat in (False, True):
        own = config.BN_RESIDENT_HOLD_LOADED[flat]
        assert held(flat, 4, 4) == 4 and held(flat, 8, 8) == 8 and held(flat, 4, 2) == (2 if own else 4)
    # 32×256×28² bf16 (6.4M elements): past 132 programs of 32768 values, within 132 of 65536
    assert plan(True, 256, 32 * 784, held(True, 4, 2), 132, 0, 2) is not None
    assert plan(False, 256, 32 * 784, held(False, 4, 2), 132, 0, 2) is None
    # 32×2048×7² backward: past fp32's budget for two tensors; bf16 channels-last fits, with y as well it does not
    assert plan(True, 2048, 32 * 49, 2 * held(True, 4, 4), 132, 0, 4) is None
    assert plan(True, 2048, 32 * 49, 2 * held(True, 4, 2), 132, 0, 2) is not None
    assert plan(True, 2048, 32 * 49, 3 * held(True, 4, 2), 132, 0, 2) is None
    assert plan(False, 2048, 32 * 64, 2 * held(False, 4, 2), 132, 64, 2) is None


@pytest.fixture
def many_resident_items(monkeypatch):
    """Resident items of at most 64 elements on 32 programs: channel blocks of several items (partials merged in
    steps of two) on tiny tensors."""
    monkeypatch.setattr(config, "BN_RESIDENT_BYTES", 64 * 4)
    monkeypatch.setattr(config, "BN_RESIDENT_MIN_RUN", {True: 4, False: 8})
    monkeypatch.setattr(config, "BN_MERGE_ELEMS", 2)
    monkeypatch.setattr(config, "multiprocessor_count", lambda device: 32)


@pytest.mark.parametrize("shape,cl,row_lanes,dtype", [
    ((5, 6, 3, 7), False, 2048, torch.float32),  # NCHW row layout (21 of 32 lanes real)
    ((4, 6, 3, 7), False, 4, torch.float32),  # NCHW with a division per element
    ((5, 6, 3, 7), True, 2048, torch.float32),  # channels-last
    ((5, 6, 3, 7), True, 2048, torch.bfloat16),  # channels-last held as loaded: items of twice the values
    ((17, 10), False, 2048, torch.float32),  # (N, C) rows
])
def test_resident_many_items(many_resident_items, monkeypatch, shape, cl, row_lanes, dtype, device):
    monkeypatch.setattr(config, "BN_ROW_LANES_MAX", row_lanes)
    x, w, b, rm, rv = _make(shape, cl, dtype, device)
    xv = K.view(x.detach())
    elem = config.batch_norm_resident_held_bytes(xv.flat, 4, x.element_size())
    plan = config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, elem, 32, xv.l)
    assert plan is not None and plan.split > plan.ms, plan  # the merge takes several steps
    z = torch.randn_like(x, requires_grad=True)
    _check_bn(x, w, b, rm, rv, training=True, activation="relu", z=z)
    _check_bn(x, None, None, None, None, training=True)


@pytest.mark.parametrize("shape,cl,relu,dtype", [
    ((5, 6, 3, 7), False, True, torch.float32),  # NCHW row layout, one channel an item
    ((5, 6, 3, 7), True, False, torch.float32),  # channels-last, blocks of 4 channels
    ((5, 6, 3, 7), True, True, torch.bfloat16),
    ((17, 10), False, True, torch.float32),  # (N, C) rows
])
def test_resident_backward(many_resident_items, monkeypatch, shape, cl, relu, dtype, device):
    """The single-read training backward (dy and x held, and y under a fused ReLU) on items small enough that a
    channel block has several and its sums take several steps: every gradient against the reference, through its
    one launch (the two-launch backward not called)."""
    monkeypatch.setattr(config, "BN_RESIDENT_BYTES", 64 * 4 * 2)  # the same items as the forward's, two tensors
    monkeypatch.setattr(K, "_RESIDENT_REFUSED", set())
    calls = []
    launch = K._bwd_resident

    def counted(*args, **kwargs):
        calls.append(args[0][0])  # the grid
        return launch(*args, **kwargs)

    monkeypatch.setattr(K, "_bwd_resident", counted)
    monkeypatch.setattr(K, "_backward_launch", None)  # a call would fail
    x, w, b, rm, rv = _make(shape, cl, dtype, device)
    xv = K.view(x.detach())
    elem = config.batch_norm_resident_held_bytes(xv.flat, 4, x.element_size()) * (3 if relu else 2)
    plan = config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, elem, 32, xv.l)
    assert plan is not None and plan.split > plan.ms, plan  # the sums take several steps
    z = torch.randn_like(x, requires_grad=True) if relu else None
    _check_bn(x, w, b, rm, rv, training=True, activation="relu" if relu else None, z=z, dtype=dtype)
    _check_bn(x, None, None, None, None, training=True, fix_gamma=relu, dtype=dtype)
    assert calls and calls[0] == plan.ncb * plan.split, (calls, plan)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the interpreter runs programs one after another: "
                    "no program there waits for another")
@pytest.mark.parametrize("shape,cl,tiny_items", [((5, 6, 3, 7), False, True), ((8, 64, 56, 56), True, False)])
def test_resident_counters_left_zeroed(request, monkeypatch, shape, cl, tiny_items):
    """Programs of a channel block wait for each other on counters that the block's last program zeroes again:
    launch after launch on one stream share them, each on fresh data (a launch that read another's partials would
    show). The second shape runs at the real item size (16 warps, many items per block)."""
    if tiny_items:
        request.getfixturevalue("many_resident_items")
    monkeypatch.setattr(K, "_RESIDENT_REFUSED", set())
    calls = []
    resident = K._fwd_resident

    def counted(*args, **kwargs):
        calls.append(1)
        return resident(*args, **kwargs)

    monkeypatch.setattr(K, "_fwd_resident", counted)
    for i, seed in enumerate((11, 12, 13)):  # not _check_bn's dy seed: dy = x makes dx all cancellation
        # A new batch size each time: a repeated signature's launches would be replayed (not through _fwd_resident)
        x, w, b, rm, rv = _make((shape[0] + i, *shape[1:]), cl, torch.float32, "cuda", seed=seed)
        xv = K.view(x.detach())
        plan = config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, 4, config.multiprocessor_count(0), xv.l)
        assert plan is not None and plan.split > 1, plan
        _check_bn(x, w, b, rm, rv, training=True)
    torch.cuda.synchronize()
    assert len(calls) == 3 and not K._RESIDENT_REFUSED
    assert all(not buf.any() for key, buf in SYNC_BUFFERS.items() if key[2] == "counters")


def test_resident_refused_falls_back(monkeypatch, device):
    """A device that cannot hold the resident grid at once (CUDA refuses the cooperative launch before anything
    runs) gets the two-launch forward, then and from then on; other launch errors propagate."""
    refused = []

    def refuse(*args, **kwargs):
        refused.append(1)
        raise RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch")

    monkeypatch.setattr(K, "_fwd_resident", refuse)
    monkeypatch.setattr(K, "_RESIDENT_REFUSED", set())
    x, w, b, rm, rv = _make((3, 5, 4, 3), False, torch.float32, device)
    _check_bn(x, w, b, rm, rv, training=True)
    _check_bn(x, w, b, rm, rv, training=True)
    assert refused == [1] and K._RESIDENT_REFUSED == {x.device}

    def fail(*args, **kwargs):
        raise RuntimeError("an unrelated launch failure")

    monkeypatch.setattr(K, "_fwd_resident", fail)
    monkeypatch.setattr(K, "_RESIDENT_REFUSED", set())
    x, w, b, rm, rv = _make((4, 5, 4, 3), False, torch.float32, device)  # not the replayed signature above
    with pytest.raises(RuntimeError, match="unrelated"):
        fastnorm.batch_norm(x, rm, rv, w, b, training=True)


@pytest.mark.parametrize("training", [True, False])
def test_no_grad_path_matches(training, device):
    """Without anything to differentiate the op skips the autograd Function: the same output and running
    statistics, bitwise, and no graph."""
    x, w, b, rm, rv = _make((3, 5, 4, 3), True, torch.bfloat16, device)
    rm2, rv2 = rm.clone(), rv.clone()
    y = fastnorm.batch_norm(x, rm, rv, w, b, training, activation="relu")
    with torch.no_grad():
        y2 = fastnorm.batch_norm(x, rm2, rv2, w, b, training, activation="relu")
    assert y.grad_fn is not None and y2.grad_fn is None and y2.stride() == x.stride()
    for a, c in ((y, y2), (rm, rm2), (rv, rv2)):
        assert torch.equal(a, c)


@pytest.mark.parametrize("mode", list(SECOND_ORDER_MODES))
@pytest.mark.parametrize("cl", [False, True])
def test_forward_ad_matches_torch(mode, cl, device):
    """Forward-mode AD (``torch.autograd.forward_ad``): y's tangent from tangents of x, the weight, the bias and z,
    all together and x's alone, equals torch's in float64 (F.batch_norm, then + z and ReLU), in every mode and
    layout, in x's layout; with and without grad mode (a dual input's tangent is never dropped)."""
    import torch.autograd.forward_ad as fwad

    opts = dict(SECOND_ORDER_MODES[mode])
    relu, with_z = opts.pop("activation", None) == "relu", opts.pop("z", False)
    x, w, b, rm, rv = _make((3, 2, 2, 3), cl, torch.float64, device, seed=11, pdtype=torch.float64,
                            requires_grad=False)
    z = torch.randn(x.shape, generator=torch.Generator().manual_seed(12), dtype=torch.float64).to(device)
    running = (None, None) if opts["training"] and not opts.get("use_global_stats") else (rm.double(), rv.double())
    gen = torch.Generator().manual_seed(13)
    tangents = [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(device) for t in (x, w, b, z)]

    def ours(x, w, b, z):
        return fastnorm.batch_norm(x, *running, w, b, z=z if with_z else None, activation="relu" if relu else None,
                                   **opts)

    def theirs(x, w, b, z):
        training = opts["training"] and not opts.get("use_global_stats")
        y = F.batch_norm(x, *running, None if opts.get("fix_gamma") else w, b, training)
        y = y + z if with_z else y
        return y.relu() if relu else y

    def tangent(fn, which):
        with fwad.dual_level():
            duals = [fwad.make_dual(p, t) if k in which else p for k, (p, t) in
                     enumerate(zip((x, w, b, z), tangents, strict=True))]
            y = fn(*duals)
            return fwad.unpack_dual(y).tangent

    for which in ((0, 1, 2, 3), (0,)):
        for grad_mode in (True, False):
            with torch.set_grad_enabled(grad_mode):
                got = tangent(ours, which)
            assert got.stride() == x.stride()
            assert_close(f"tangent of y (inputs {which})", got, to_np64(tangent(theirs, which)), torch.float64)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("cl", [False, True])
def test_forward_over_reverse_matches_torch(training, cl, device):
    """A backward (create_graph=False) of an output made from a dual x: the gradients carry tangents, torch's in
    float64 (before, the kernels' gradients dropped them and the CPU path's took the batch statistics as
    constants)."""
    import torch.autograd.forward_ad as fwad

    x0, w0, b, rm, rv = _make((3, 2, 2, 3), cl, torch.float64, device, seed=14, pdtype=torch.float64,
                              requires_grad=False)
    gen = torch.Generator().manual_seed(15)
    tx, v = (torch.randn(x0.shape, generator=gen, dtype=torch.float64).to(device) for _ in range(2))
    running = (None, None) if training else (rm.double(), rv.double())

    def tangents(bn):
        with fwad.dual_level():
            x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
            gx, gw = torch.autograd.grad(bn(fwad.make_dual(x, tx), *running, w, b, training), (x, w), v)
            return fwad.unpack_dual(gx).tangent, fwad.unpack_dual(gw).tangent

    for name, a, e in zip(("dx", "dweight"), tangents(fastnorm.batch_norm), tangents(F.batch_norm), strict=True):
        if a is None:  # no dependence on x (evaluation's dx = w·invstd·dy): torch has none either
            assert e is None or not e.any(), f"the tangent of {name} was dropped"
            continue
        assert_close(f"tangent of {name}", a, to_np64(e), torch.float64)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorized_jacobian_matches_torch(training, strategy, device):
    """``torch.autograd.functional.jacobian(..., vectorize=True)`` vmaps the backward (reverse mode) or the tangent
    (forward mode): both give torch's Jacobian in float64, channels-last x included (batched gradients have no storage
    for the kernels, nor can they be copied into x's layout)."""
    x, w, b, rm, rv = _make((2, 2, 1, 3), True, torch.float64, device, seed=16, pdtype=torch.float64,
                            requires_grad=False)
    running = (None, None) if training else (rm.double(), rv.double())

    def jac(bn, x, running, w, b):
        return torch.autograd.functional.jacobian(lambda x: bn(x, *running, w, b, training), x, vectorize=True,
                                                  strategy=strategy)

    # torch's on the CPU: its CUDA backward asks whether x is channels-last contiguous, which vmap refuses
    expected = jac(F.batch_norm, x.cpu(), [t if t is None else t.cpu() for t in running], w.cpu(), b.cpu())
    assert_close("Jacobian", jac(fastnorm.batch_norm, x, running, w, b), to_np64(expected), torch.float64)


# ------------------------------------------------------------------------------------------ replayed launches


@pytest.mark.skipif(not torch.cuda.is_available(), reason="replays serve eager CUDA launches only")
@pytest.mark.parametrize("cl", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_replayed_calls_match_the_reference(monkeypatch, cl, training, train_path):
    """One signature called again on fresh data: from the third call on, its forward and backward launches are
    replayed (``kernels._replay``), and every call matches the reference."""
    replays = watch_replays(monkeypatch)
    for seed in (2, 3, 4, 5):
        x, w, b, rm, rv = _make((4, 6, 5, 7), cl, torch.bfloat16, "cuda", seed=seed)
        _check_bn(x, w, b, rm, rv, training=training, activation="relu", seed=seed + 10, dy_like_x=True)
    assert len(replays) >= 4  # forward and backward of the last two calls
    torch.cuda.synchronize()
    # the replays left the shared counters at 0
    assert all(not buf.any() for key, buf in SYNC_BUFFERS.items() if key[2] == "counters")


def test_captured_launches_take_reserved_counters(monkeypatch):
    """A launch captured in a CUDA graph takes a slice of the device's zeroed reserve (no fill node in the graph):
    slices are disjoint views of the reserve, start 128 bytes apart at least, and are never given out twice; a
    spent reserve, another dtype or no reserve gives a zeroed buffer of the launch's own."""
    from fastnorm.kernels import _exchange as X

    cpu = torch.device("cpu")
    reserve = torch.zeros(300, dtype=torch.int32)
    monkeypatch.setitem(X.RESERVES, (0, "counters"), [reserve, 0])
    got = [X._captured_buffer(n, cpu, 0, torch.int32, "counters") for n in (5, 32, 1, 100)]
    starts = [t.data_ptr() - reserve.data_ptr() for t in got]
    assert [t.numel() for t in got] == [5, 32, 1, 100] and all(t._base is reserve for t in got)
    assert starts == [0, 128, 256, 384] and X.RESERVES[0, "counters"][1] == 224
    spent = X._captured_buffer(77, cpu, 0, torch.int32, "counters")  # 224 + 77 > 300
    other = X._captured_buffer(4, cpu, 0, torch.int64, "counters")
    none = X._captured_buffer(4, cpu, 1, torch.int32, "counters")
    for t in (spent, other, none):
        assert t._base is None and not t.any()
    assert X.RESERVES[0, "counters"][1] == 224


@pytest.mark.gpu
@pytest.mark.parametrize("shape,cl", [((32, 64, 56, 56), True), ((32, 64, 56, 56), False), ((32, 1024, 14, 14), False)])
def test_training_step_in_a_cuda_graph(monkeypatch, shape, cl):
    """A bf16 training forward (two launches) and backward captured in a CUDA graph (channel blocks of several
    sub-groups, of one, of one item): each replay on new inputs gives bitwise the eager result on the same inputs and
    running statistics; every captured launch took its counters from the reserve (the graph fills none); a capture
    with the reserve spent gets counters of its own and is right too."""
    from fastnorm.kernels import _exchange as X

    monkeypatch.setattr(config, "BN_RESIDENT", False)  # the statistics launch whose plan is checked below
    captured = []
    take = X._captured_buffer

    def recorded(*args):
        captured.append(take(*args))
        return captured[-1]

    monkeypatch.setattr(X, "_captured_buffer", recorded)
    x0, w, b, rm, rv = _make(shape, cl, torch.bfloat16, "cuda", seed=1)
    rm_eager, rv_eager = rm.clone(), rv.clone()
    xv = K.view(x0.detach())
    plan = K._plan(xv, 2, "fused", "fwd")
    levels = "sub-groups" if plan.nsub > 1 else "one sub-group" if plan.split > 1 else "one item"
    assert levels == ("sub-groups" if cl else "one item" if shape[1] == 1024 else "one sub-group"), plan
    flat_sums = config.batch_norm_frozen_flat(x0.numel(), 2, cl, shape[1], shape[2] * shape[3],
                                              config.multiprocessor_count(0), sums_only=True)

    def step(x, dy, running_mean, running_var):
        y = fastnorm.batch_norm(x, running_mean, running_var, w, b, training=True)
        return (y, *torch.autograd.grad(y, (x, w, b), dy))

    static_x = x0.detach().clone().requires_grad_(True)
    static_dy = torch.randn_like(static_x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(static_x, static_dy, rm.clone(), rv.clone())  # compile and warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    for spent in (False, True):
        if spent:
            monkeypatch.setitem(X.RESERVES, (0, "counters"), [X.RESERVES[0, "counters"][0], 1 << 40])
        entry = X.RESERVES[0, "counters"]
        first = entry[1]
        captured.clear()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = step(static_x, static_dy, rm, rv)
        # the statistics launch's counters, and the sums launch's unless the sums take the image-strided pass (no
        # counters: config.BN_SUMS_FLAT, at 32×1024×14²)
        assert len(captured) >= 1 + (not flat_sums) and all((t._base is None) == spent for t in captured)
        assert (entry[1] == first) if spent else (entry[1] > first)
        for r in range(3):
            x = torch.randn_like(static_x).mul_(2).add_(r).requires_grad_(True)
            dy = torch.randn_like(x)
            with torch.no_grad():
                static_x.copy_(x)
                static_dy.copy_(dy)
            graph.replay()
            eager = step(x, dy, rm_eager, rv_eager)
            for name, got, want in zip(("y", "dx", "dweight", "dbias"), static_out, eager, strict=True):
                assert torch.equal(got, want), f"replay {r}: {name} differs from the eager result"
            assert torch.equal(rm, rm_eager) and torch.equal(rv, rv_eager)
    torch.cuda.synchronize()
    assert not X.RESERVES[0, "counters"][0].any()  # every captured launch left its counters zeroed
