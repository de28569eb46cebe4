"""Bad and extreme input across every op and module: errors before any launch, empty tensors, NaN/Inf,
non-contiguous inputs and gradients, strided parameters.

Runs on CUDA tensors when there is a GPU, else through Triton's interpreter (tiny shapes).

* Bad input: every case must raise a clear Python exception (TypeError / ValueError / RuntimeError) whose
  message names the offending argument, and no Triton kernel may have been launched when it does — the
  ``no_launch`` fixture makes every ``kernel[grid](...)`` raise ``KernelLaunched`` (a BaseException, so no
  ``except Exception`` can hide it).
* Empty tensors: empty output of the input's shape and dtype, zero (not None) parameter gradients, empty
  input gradients, running statistics unchanged (``num_batches_tracked`` counted as torch counts it);
  on CUDA, ``torch.cuda.synchronize()`` afterwards surfaces no deferred error.
* NaN/Inf: outputs, input and parameter gradients and running statistics equal the float64 reference
  with NaN in exactly the reference's positions (``max_rel_err`` is NaN-position aware), and the rows
  (LayerNorm/RMSNorm) or channels (BatchNorm) without a NaN/Inf are bitwise those of the clean run.
* Non-contiguous inputs and grad_outputs (transposed, sliced with steps, expanded, channels_last grad with
  a contiguous input and the reverse): bitwise the contiguous result where the kernels read the same
  layout, and within the float32 output tolerance where x itself changes layout (channels_last vs NCHW
  are different kernel paths).
* Strided 1-D parameters and running statistics (a view with a step): either the same result as
  contiguous ones, with running statistics updated in place in the view only, or a clear error naming
  the argument — never a silently wrong result or a write outside the view.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import triton.runtime.jit as triton_jit

import fastnorm
import fastnorm.nn as fnn
from fastnorm import reference as R
from fastnorm.reference.tolerances import OUTPUT_TOL, max_rel_err
from helpers import (
    assert_close,
    forget_replays,
    frozen_flat_everywhere,
    rows_everywhere,
    to_np64,
)

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class KernelLaunched(BaseException):
    """Raised by any Triton kernel launch while ``no_launch`` is active."""


@pytest.fixture
def no_launch(monkeypatch):
    def refuse(self, grid):
        raise KernelLaunched(f"Triton kernel {getattr(self, '__name__', self)!s} launched before the error")

    monkeypatch.setattr(triton_jit.KernelInterface, "__getitem__", refuse)


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _randn(shape, seed, dtype=torch.float32, scale=1.0, offset=0.0, device=DEVICE):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset).to(dtype).to(device)


def _rand_pos(shape, seed, device=DEVICE):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) + 0.5).float().to(device)


# ====================================================================================== bad input

D = DEVICE
META = "meta"


def _x(*shape, dtype=torch.float32, device=D):
    return torch.ones(shape, dtype=dtype, device=device)


def _p(n, dtype=torch.float32, device=D):
    return torch.ones(n, dtype=dtype, device=device)


# (id, thunk, exception type, regex that must appear in the message)
BAD_CASES = [
    # ---- layer_norm
    ("ln-x-int", lambda: fastnorm.layer_norm(_x(2, 4, dtype=torch.int32), 4), TypeError, r"\bx\b"),
    ("ln-x-complex", lambda: fastnorm.layer_norm(_x(2, 4, dtype=torch.complex64), 4), TypeError, r"\bx\b"),
    ("ln-x-bool", lambda: fastnorm.layer_norm(_x(2, 4, dtype=torch.bool), 4), TypeError, r"\bx\b"),
    ("ln-x-not-tensor", lambda: fastnorm.layer_norm([[1.0, 2.0]], 2), TypeError, r"\bx\b"),
    ("ln-shape-mismatch", lambda: fastnorm.layer_norm(_x(2, 5), 4), ValueError, "normalized_shape"),
    ("ln-shape-too-long", lambda: fastnorm.layer_norm(_x(4), (2, 4)), ValueError, "normalized_shape"),
    ("ln-shape-negative", lambda: fastnorm.layer_norm(_x(2, 4), -4), ValueError, "normalized_shape"),
    ("ln-shape-str", lambda: fastnorm.layer_norm(_x(2, 4), "4"), TypeError, "normalized_shape"),
    ("ln-weight-size", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(5)), ValueError, "weight"),
    ("ln-weight-2d", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4).view(1, 4)), ValueError, "weight"),
    ("ln-bias-size", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4), _p(3)), ValueError, "bias"),
    ("ln-weight-int", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4, torch.int64)), TypeError, "weight"),
    ("ln-bias-complex", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4), _p(4, torch.complex64)), TypeError,
     "bias"),
    ("ln-weight-meta", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4, device=META)), RuntimeError, "weight"),
    ("ln-bias-meta", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4), _p(4, device=META)), RuntimeError, "bias"),
    ("ln-x-meta-weight-here", lambda: fastnorm.layer_norm(_x(2, 4, device=META), 4, _p(4)), RuntimeError,
     "weight"),
    ("ln-eps-negative", lambda: fastnorm.layer_norm(_x(2, 4), 4, eps=-1e-5), ValueError, "eps"),
    ("ln-eps-nan", lambda: fastnorm.layer_norm(_x(2, 4), 4, eps=float("nan")), ValueError, "eps"),
    ("ln-eps-inf", lambda: fastnorm.layer_norm(_x(2, 4), 4, eps=float("inf")), ValueError, "eps"),
    ("ln-eps-str", lambda: fastnorm.layer_norm(_x(2, 4), 4, eps="1e-5"), TypeError, "eps"),
    ("ln-residual-shape", lambda: fastnorm.layer_norm(_x(2, 4), 4, residual=_x(1, 4)), ValueError, "residual"),
    ("ln-residual-int", lambda: fastnorm.layer_norm(_x(2, 4), 4, residual=_x(2, 4, dtype=torch.int16)), TypeError,
     "residual"),
    ("ln-residual-meta", lambda: fastnorm.layer_norm(_x(2, 4), 4, residual=_x(2, 4, device=META)), RuntimeError,
     "residual"),
    ("ln-residual-dtype-int", lambda: fastnorm.layer_norm(_x(2, 4), 4, residual=_x(2, 4), residual_dtype=torch.int32),
     TypeError, "residual_dtype"),
    ("ln-residual-dtype-alone", lambda: fastnorm.layer_norm(_x(2, 4), 4, residual_dtype=torch.float32), ValueError,
     "residual_dtype"),
    ("ln-weight-offset-nan", lambda: fastnorm.layer_norm(_x(2, 4), 4, _p(4), weight_offset=float("nan")), TypeError,
     "weight_offset"),
    ("ln-weight-offset-no-weight", lambda: fastnorm.layer_norm(_x(2, 4), 4, weight_offset=1.0), ValueError,
     "weight_offset"),
    # ---- rms_norm
    ("rms-x-int", lambda: fastnorm.rms_norm(_x(2, 4, dtype=torch.int64), 4), TypeError, r"\bx\b"),
    ("rms-x-complex", lambda: fastnorm.rms_norm(_x(2, 4, dtype=torch.complex128), 4), TypeError, r"\bx\b"),
    ("rms-shape-mismatch", lambda: fastnorm.rms_norm(_x(2, 5), 4), ValueError, "normalized_shape"),
    ("rms-weight-size", lambda: fastnorm.rms_norm(_x(2, 4), 4, _p(2)), ValueError, "weight"),
    ("rms-weight-meta", lambda: fastnorm.rms_norm(_x(2, 4), 4, _p(4, device=META)), RuntimeError, "weight"),
    ("rms-eps-negative", lambda: fastnorm.rms_norm(_x(2, 4), 4, eps=-1.0), ValueError, "eps"),
    ("rms-residual-shape", lambda: fastnorm.rms_norm(_x(2, 4), 4, residual=_x(2, 5)), ValueError, "residual"),
    # ---- LayerNorm / RMSNorm modules
    ("LayerNorm-shape", lambda: fnn.LayerNorm(4, device=D)(_x(2, 5)), ValueError, "normalized_shape"),
    ("LayerNorm-int", lambda: fnn.LayerNorm(4, device=D)(_x(2, 4, dtype=torch.int32)), TypeError, r"\bx\b"),
    ("LayerNorm-eps", lambda: fnn.LayerNorm(4, eps=-1.0, device=D)(_x(2, 4)), ValueError, "eps"),
    ("LayerNorm-meta-params", lambda: fnn.LayerNorm(4, device=META)(_x(2, 4)), RuntimeError, "weight"),
    ("RMSNorm-shape", lambda: fnn.RMSNorm((3, 4), device=D)(_x(2, 4)), ValueError, "normalized_shape"),
    ("RMSNorm-complex", lambda: fnn.RMSNorm(4, device=D)(_x(2, 4, dtype=torch.complex64)), TypeError, r"\bx\b"),
    ("RMSNorm-eps", lambda: fnn.RMSNorm(4, eps=-1e-6, device=D)(_x(2, 4)), ValueError, "eps"),
    ("RMSNorm-meta-params", lambda: fnn.RMSNorm(4, device=META)(_x(2, 4)), RuntimeError, "weight"),
    # ---- batch_norm
    ("bn-x-int", lambda: fastnorm.batch_norm(_x(2, 3, 4, dtype=torch.int32), None, None, training=True), TypeError,
     r"\bx\b"),
    ("bn-x-complex", lambda: fastnorm.batch_norm(_x(2, 3, dtype=torch.complex64), _p(3), _p(3)), TypeError, r"\bx\b"),
    ("bn-x-1d", lambda: fastnorm.batch_norm(_x(3), _p(3), _p(3)), ValueError, r"\bx\b"),
    ("bn-x-no-channels", lambda: fastnorm.batch_norm(_x(2, 0, 4), None, None, training=True), ValueError,
     "channel"),
    ("bn-running-mean-size", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(4), _p(3)), ValueError, "running_mean"),
    ("bn-running-var-size", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(2)), ValueError, "running_var"),
    ("bn-running-mean-2d", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3).view(3, 1), _p(3)), ValueError,
     "running_mean"),
    ("bn-running-var-int", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3, torch.int64)), TypeError,
     "running_var"),
    ("bn-running-mean-meta", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3, device=META), _p(3)), RuntimeError,
     "running_mean"),
    ("bn-running-one-of-two", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), None), ValueError, "running_var"),
    ("bn-weight-size", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, _p(2), training=True), ValueError,
     "weight"),
    ("bn-bias-size", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, _p(3), _p(4), training=True), ValueError,
     "bias"),
    ("bn-weight-complex", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), _p(3, torch.complex64)), TypeError,
     "weight"),
    ("bn-weight-meta", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), _p(3, device=META)), RuntimeError,
     "weight"),
    ("bn-x-meta-params-here", lambda: fastnorm.batch_norm(_x(2, 3, 4, device=META), _p(3), _p(3)), RuntimeError,
     "running_mean"),
    ("bn-z-shape", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, training=True, z=_x(2, 3, 5)), ValueError,
     r"\bz\b"),
    ("bn-z-int", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, training=True, z=_x(2, 3, 4, dtype=torch.int8)),
     TypeError, r"\bz\b"),
    ("bn-z-meta", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, training=True, z=_x(2, 3, 4, device=META)),
     RuntimeError, r"\bz\b"),
    ("bn-momentum-above-1", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True, momentum=1.5),
     ValueError, "momentum"),
    ("bn-momentum-negative", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True, momentum=-0.1),
     ValueError, "momentum"),
    ("bn-momentum-nan", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True,
                                                    momentum=float("nan")), ValueError, "momentum"),
    ("bn-momentum-str", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True, momentum="0.1"),
     TypeError, "momentum"),
    ("bn-eps-negative", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), eps=-1e-5), ValueError, "eps"),
    ("bn-eps-nan", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, training=True, eps=float("nan")), ValueError,
     "eps"),
    ("bn-activation", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), activation="gelu"), ValueError,
     "activation"),
    ("bn-global-stats-no-running", lambda: fastnorm.batch_norm(_x(2, 3, 4), None, None, training=True,
                                                               use_global_stats=True), ValueError, "use_global_stats"),
    ("bn-momentum-none-no-count", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True,
                                                              momentum=None), ValueError, "num_batches_tracked"),
    ("bn-count-meta", lambda: fastnorm.batch_norm(_x(2, 3, 4), _p(3), _p(3), training=True, momentum=None,
                                                  num_batches_tracked=torch.ones((), dtype=torch.long, device=META)),
     RuntimeError, "num_batches_tracked"),
    ("bn-one-value-per-channel", lambda: fastnorm.batch_norm(_x(1, 3), _p(3), _p(3), training=True), ValueError,
     "more than 1 value per channel"),
    ("bn-one-value-per-channel-spatial", lambda: fastnorm.batch_norm(_x(1, 3, 1, 1), None, None, training=True),
     ValueError, "more than 1 value per channel"),
    # ---- BatchNorm modules
    ("BatchNorm1d-3d-ok-4d-bad", lambda: fnn.BatchNorm1d(3, device=D)(_x(2, 3, 4, 4)), ValueError, "input"),
    ("BatchNorm2d-dim", lambda: fnn.BatchNorm2d(3, device=D)(_x(2, 3, 4)), ValueError, "input"),
    ("BatchNorm3d-dim", lambda: fnn.BatchNorm3d(3, device=D)(_x(2, 3, 4, 4)), ValueError, "input"),
    ("BatchNorm2d-channels", lambda: fnn.BatchNorm2d(3, device=D)(_x(2, 4, 2, 2)), ValueError,
     "weight|running_mean|channel"),
    ("BatchNorm2d-int", lambda: fnn.BatchNorm2d(3, device=D)(_x(2, 3, 2, 2, dtype=torch.int32)), TypeError,
     r"\bx\b|input"),
    ("BatchNorm2d-momentum", lambda: fnn.BatchNorm2d(3, momentum=1.01, device=D)(_x(2, 3, 2, 2)), ValueError,
     "momentum"),
    ("BatchNorm2d-momentum-negative", lambda: fnn.BatchNorm2d(3, momentum=-1.0, device=D)(_x(2, 3, 2, 2)),
     ValueError, "momentum"),
    ("BatchNorm2d-eps", lambda: fnn.BatchNorm2d(3, eps=-1.0, device=D)(_x(2, 3, 2, 2)), ValueError, "eps"),
    ("BatchNorm2d-activation", lambda: fnn.BatchNorm2d(3, activation="tanh"), ValueError, "activation"),
    ("BatchNorm2d-z-shape", lambda: fnn.BatchNorm2d(3, device=D)(_x(2, 3, 2, 2), _x(2, 3, 2, 1)), ValueError,
     r"\bz\b"),
    ("BatchNorm2d-meta-params", lambda: fnn.BatchNorm2d(3, device=META)(_x(2, 3, 2, 2)), RuntimeError,
     "weight|running_mean"),
    ("BatchNorm2d-one-value", lambda: fnn.BatchNorm2d(3, device=D)(_x(1, 3, 1, 1)), ValueError,
     "more than 1 value per channel"),
    ("FrozenBatchNorm2d-dim", lambda: fnn.FrozenBatchNorm2d(3, device=D)(_x(2, 3, 4)), ValueError, "input"),
    ("FrozenBatchNorm2d-channels", lambda: fnn.FrozenBatchNorm2d(3, device=D)(_x(2, 5, 2, 2)), ValueError,
     "weight|running_mean|channel"),
    ("FrozenBatchNorm2d-eps", lambda: fnn.FrozenBatchNorm2d(3, eps=-1.0, device=D)(_x(2, 3, 2, 2)), ValueError,
     "eps"),
    ("FrozenBatchNorm2d-int", lambda: fnn.FrozenBatchNorm2d(3, device=D)(_x(2, 3, 2, 2, dtype=torch.uint8)),
     TypeError, r"\bx\b|input"),
    ("SyncBatchNorm-momentum", lambda: fnn.SyncBatchNorm(3, momentum=2.0), ValueError, "momentum"),
    ("SyncBatchNorm-eps", lambda: fnn.SyncBatchNorm(3, eps=-2.0), ValueError, "eps"),
    ("SyncBatchNorm-dim", lambda: fnn.SyncBatchNorm(3, device=D)(_x(3)), ValueError, "input"),
    ("SyncBatchNorm-channels", lambda: fnn.SyncBatchNorm(3, device=D)(_x(2, 4, 2)), ValueError,
     "channel|num_features"),
    ("SyncBatchNorm-int", lambda: fnn.SyncBatchNorm(3, device=D)(_x(2, 3, 2, dtype=torch.int32)), TypeError,
     "input"),
    ("SyncBatchNorm-z-meta", lambda: fnn.SyncBatchNorm(3, device=D)(_x(2, 3, 2), _x(2, 3, 2, device=META)),
     RuntimeError, r"\bz\b"),
    ("convert_model-not-module", lambda: fastnorm.convert_model("resnet"), TypeError, "model"),
]


@pytest.mark.parametrize(("thunk", "err", "match"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_input_raises_naming_the_argument_before_any_launch(no_launch, thunk, err, match):
    with pytest.raises(err, match=match):
        thunk()


def test_no_launch_fixture_catches_launches(no_launch):
    """The fixture itself works: a valid call does launch a kernel, and that is caught."""
    if not fastnorm.ops.layer_norm.uses_triton(torch.ones(1, device=DEVICE)):
        pytest.skip("CPU without the interpreter: no Triton launches to watch")
    with pytest.raises(KernelLaunched):
        fastnorm.layer_norm(_x(2, 4), 4)


def test_bad_batch_norm_input_leaves_running_stats_unchanged(no_launch):
    rm, rv = _randn(3, 1), _rand_pos(3, 2)
    rm0, rv0 = rm.clone(), rv.clone()
    for kwargs in ({"momentum": 1.5}, {"eps": -1.0}, {"z": _x(2, 3, 5)}, {"activation": "elu"}):
        with pytest.raises((ValueError, TypeError)):
            fastnorm.batch_norm(_randn((2, 3, 4), 3), rm, rv, training=True, **kwargs)
    assert torch.equal(rm, rm0) and torch.equal(rv, rv0)


# ====================================================================================== empty tensors


def _param(n, seed, requires_grad=True):
    return _randn(n, seed).requires_grad_(requires_grad)


def _check_empty_grads(named_params):
    for name, p in named_params:
        assert p.grad is not None, f"{name}.grad is None after backward of an empty batch"
        assert p.grad.shape == p.shape, f"{name}.grad shape {tuple(p.grad.shape)}"
        assert torch.count_nonzero(p.grad) == 0, f"{name}.grad is not zero: {p.grad}"


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("shape", [(0, 6), (3, 0, 6), (0, 2, 3)], ids=["rows0", "mid0", "nd2"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_empty_layer_norm_family(is_rms, shape, residual, dtype):
    nshape = shape[-1:] if shape != (0, 2, 3) else shape[-2:]
    x = torch.empty(shape, dtype=dtype, device=DEVICE).requires_grad_()
    w = _param(nshape, 1)
    b = None if is_rms else _param(nshape, 2)
    kwargs = {}
    r = None
    if residual:
        r = torch.empty(shape, dtype=dtype, device=DEVICE).requires_grad_()
        kwargs = {"residual": r, "residual_dtype": torch.float32}
    out = fastnorm.rms_norm(x, nshape, w, **kwargs) if is_rms else fastnorm.layer_norm(x, nshape, w, b, **kwargs)
    y, s = out if residual else (out, None)
    assert y.shape == x.shape and y.dtype == dtype
    if residual:
        assert s.shape == x.shape and s.dtype == torch.float32
        (y.float().sum() + s.sum()).backward()
        assert r.grad is not None and r.grad.shape == r.shape
    else:
        y.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape and x.grad.dtype == dtype
    _check_empty_grads([("weight", w)] + ([] if b is None else [("bias", b)]))
    _sync()


@pytest.mark.parametrize("make", [
    lambda: fnn.LayerNorm(6, device=DEVICE), lambda: fnn.LayerNorm(6, bias=False, device=DEVICE),
    lambda: fnn.RMSNorm(6, device=DEVICE), lambda: fnn.LayerNorm(6, elementwise_affine=False, device=DEVICE),
], ids=["LayerNorm", "LayerNorm-nobias", "RMSNorm", "LayerNorm-noaffine"])
def test_empty_layer_norm_modules(make):
    m = make()
    x = torch.empty(0, 6, device=DEVICE, requires_grad=True)
    y = m(x)
    assert y.shape == (0, 6)
    y.sum().backward()
    _check_empty_grads(list(m.named_parameters()))
    _sync()


BN_EMPTY_SHAPES = [(0, 3), (0, 3, 4), (0, 3, 2, 2), (4, 3, 0), (2, 3, 0, 5), (0, 3, 1, 2, 2)]


@pytest.mark.parametrize("shape", BN_EMPTY_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize(("mode", "kwargs"), [
    ("train", {"training": True}),
    ("train-cma", {"training": True, "momentum": None}),
    ("eval", {"training": False}),
    ("global-stats", {"training": True, "use_global_stats": True}),
    ("fix-gamma-relu-z", {"training": True, "fix_gamma": True, "activation": "relu"}),
    ("no-running", {"training": True, "no_running": True}),
])
def test_empty_batch_norm(shape, mode, kwargs):
    kwargs = dict(kwargs)
    no_running = kwargs.pop("no_running", False)
    c = shape[1]
    x = torch.empty(shape, device=DEVICE).requires_grad_()
    w, b = _param(c, 1), _param(c, 2)
    rm, rv = (None, None) if no_running else (_randn(c, 3), _rand_pos(c, 4))
    rm0 = None if rm is None else rm.clone()
    rv0 = None if rv is None else rv.clone()
    z = None
    if kwargs.get("activation"):
        z = torch.empty(shape, device=DEVICE).requires_grad_()
        kwargs["z"] = z
    nbt = torch.ones((), dtype=torch.long, device=DEVICE)
    y = fastnorm.batch_norm(x, rm, rv, w, b, num_batches_tracked=nbt, **kwargs)
    assert y.shape == x.shape and y.dtype == x.dtype
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
    _check_empty_grads([("weight", w), ("bias", b)])
    if z is not None:
        assert z.grad is not None and z.grad.shape == z.shape
    if rm is not None:
        assert torch.equal(rm, rm0) and torch.equal(rv, rv0), "running statistics changed on an empty batch"
    _sync()


def _bn_module_pairs():
    return [
        ("BatchNorm1d-NC", lambda: fnn.BatchNorm1d(3), lambda: torch.nn.BatchNorm1d(3), (0, 3)),
        ("BatchNorm1d-NCL", lambda: fnn.BatchNorm1d(3), lambda: torch.nn.BatchNorm1d(3), (0, 3, 5)),
        ("BatchNorm2d", lambda: fnn.BatchNorm2d(3), lambda: torch.nn.BatchNorm2d(3), (0, 3, 2, 2)),
        ("BatchNorm2d-cma", lambda: fnn.BatchNorm2d(3, momentum=None), lambda: torch.nn.BatchNorm2d(3, momentum=None),
         (0, 3, 2, 2)),
        ("BatchNorm3d", lambda: fnn.BatchNorm3d(3), lambda: torch.nn.BatchNorm3d(3), (0, 3, 1, 2, 2)),
        ("SyncBatchNorm", lambda: fnn.SyncBatchNorm(3), lambda: torch.nn.BatchNorm2d(3), (0, 3, 2, 2)),
        ("FrozenBatchNorm2d", lambda: fnn.FrozenBatchNorm2d(3), None, (0, 3, 2, 2)),
    ]


@pytest.mark.parametrize(("make", "make_torch", "shape"), [p[1:] for p in _bn_module_pairs()],
                         ids=[p[0] for p in _bn_module_pairs()])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_empty_batch_norm_modules(make, make_torch, shape, train):
    m = make().to(DEVICE).train(train)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if t.is_floating_point():
                t.copy_(_rand_pos(t.shape, zlib.crc32(name.encode())))
    state0 = {k: v.clone() for k, v in m.state_dict().items()}
    x = torch.empty(shape, device=DEVICE, requires_grad=True)
    y = m(x)
    assert y.shape == x.shape
    y.sum().backward()
    _check_empty_grads(list(m.named_parameters()))
    for k, v in m.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        assert torch.equal(v, state0[k]), f"{k} changed on an empty batch"
    if make_torch is not None and hasattr(m, "num_batches_tracked"):
        t = make_torch().to(DEVICE).train(train)
        t.load_state_dict(state0)
        t(torch.empty(shape, device=DEVICE))
        assert int(m.num_batches_tracked) == int(t.num_batches_tracked), "num_batches_tracked counted unlike torch"
    _sync()


# ====================================================================================== NaN / Inf


def _poison(x, where):
    x = x.clone()
    for idx, v in where:
        x[idx] = v
    return x


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [33, 300])
@pytest.mark.parametrize("in_dy", [False, True], ids=["in-x", "in-dy"])
def test_nan_inf_stay_in_their_rows_layer_norm(is_rms, n, in_dy):
    m = 6
    bad = [((1, 0), float("nan")), ((3, n // 2), float("inf")), ((4, n - 1), -float("inf"))]
    x = _randn((m, n), 10)
    dy = _randn((m, n), 11)
    w, b = _randn(n, 12, offset=1.0), _randn(n, 13)
    xp, dyp = (x, _poison(dy, bad)) if in_dy else (_poison(x, bad), dy)

    def run(xin, dyin):
        xr, wr = xin.clone().requires_grad_(), w.clone().requires_grad_()
        br = None if is_rms else b.clone().requires_grad_()
        y = fastnorm.rms_norm(xr, n, wr, 1e-5) if is_rms else fastnorm.layer_norm(xr, n, wr, br, 1e-5)
        y.backward(dyin)
        return y.detach(), xr.grad, wr.grad, None if br is None else br.grad

    y, dx, dw, db = run(xp, dyp)
    y0, dx0, dw0, db0 = run(x, dy)
    # the float64 reference, NaN position for position
    x64, dy64, w64 = to_np64(xp), to_np64(dyp), to_np64(w)
    with np.errstate(all="ignore"):
        if is_rms:
            ry, rstd = R.rms_norm_forward(x64, w64, 1e-5)
            rdx, rdw = R.rms_norm_backward(dy64, x64, w64, rstd)
            rdb = None
        else:
            ry, mean, rstd = R.layer_norm_forward(x64, w64, to_np64(b), 1e-5)
            rdx, rdw, rdb = R.layer_norm_backward(dy64, x64, w64, mean, rstd)
    tol = OUTPUT_TOL["float32"]
    for what, a, e in (("y", y, ry), ("dx", dx, rdx), ("dweight", dw, rdw), ("dbias", db, rdb)):
        if e is None:
            continue
        err = max_rel_err(to_np64(a), e)
        assert err <= 10 * tol, f"{what}: NaN/Inf positions or values differ from the reference (err {err})"
    # rows without a bad value: bitwise those of the clean run
    rows = sorted({i for (i, _), _ in bad})
    clean = [i for i in range(m) if i not in rows]
    assert torch.equal(y[clean], y0[clean]) if not in_dy else torch.equal(y, y0)
    assert torch.equal(dx[clean], dx0[clean])
    for i in rows:
        assert not torch.isfinite(dx[i]).all(), f"row {i}: the NaN/Inf did not reach dx"


_BN_MODES = [("train", True, False), ("eval", False, False), ("frozen-train", True, True)]


@pytest.mark.parametrize(("layout", "mode", "training", "ugs", "flat"),
                         [(layout, *mode, None) for layout in ("nchw", "channels_last") for mode in _BN_MODES]
                         + [("nchw", "train", True, False, "dx"),  # the flat dx pass's one use among these modes
                            ("nchw", "eval", False, False, "frozen"), ("nchw", "frozen-train", True, True, "frozen"),
                            ("channels_last", "eval", False, False, "rows"),
                            ("channels_last", "frozen-train", True, True, "rows"),
                            ("channels_last", "train", True, False, "stats")])
@pytest.mark.parametrize("in_dy", [False, True], ids=["in-x", "in-dy"])
def test_nan_inf_stay_in_their_channels_batch_norm(monkeypatch, layout, mode, training, ugs, in_dy, flat):
    flat_passes = []
    if flat:  # the flat dx pass (config.BN_DX_FLAT), the frozen flat or row-strided backward, the row-strided
        # statistics pass, at every size
        setting, settings, name = {
            "dx": ("BN_DX_FLAT", (0, 64, 2, 256), "_dx_flat_pass"),
            "frozen": ("BN_FROZEN_FLAT", frozen_flat_everywhere(), "_frozen_flat_pass"),
            "rows": ("BN_FROZEN_ROWS", rows_everywhere("BN_FROZEN_ROWS"), "_frozen_rows_pass"),
            "stats": ("BN_STATS_ROWS", rows_everywhere("BN_STATS_ROWS"), "_stats_rows_pass"),
        }[flat]
        monkeypatch.setattr(fastnorm.kernels.config, setting, settings)
        if flat == "dx":  # the training backward's dx pass: not the single-read backward, which has none
            monkeypatch.setattr(fastnorm.kernels.config, "BN_RESIDENT_BACKWARD", False)
        if flat == "stats":  # the row-strided statistics pass: not the single-read forward, which has none
            monkeypatch.setattr(fastnorm.kernels.config, "BN_RESIDENT", False)
        real = getattr(fastnorm.kernels.batch_norm, name)
        monkeypatch.setattr(fastnorm.kernels.batch_norm, name, lambda *a, **k: flat_passes.append(1) or real(*a, **k))
    n, c, h, wd = 3, 5, 3, 2
    bad = [((1, 1, 0, 1), float("nan")), ((2, 3, 2, 0), float("inf"))]
    bad_channels = [1, 3]
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    x = _randn((n, c, h, wd), 20).contiguous(memory_format=fmt)
    dy = _randn((n, c, h, wd), 21).contiguous(memory_format=fmt)
    w, b = _rand_pos(c, 22), _randn(c, 23)
    rm, rv = _randn(c, 24), _rand_pos(c, 25)
    xp, dyp = (x, _poison(dy, bad)) if in_dy else (_poison(x, bad), dy)

    def run(xin, dyin):
        forget_replays()  # each call through the host code (on CUDA a repeat would replay the first's launches)
        xr, wr, br = xin.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()
        rmr, rvr = rm.clone(), rv.clone()
        y = fastnorm.batch_norm(xr, rmr, rvr, wr, br, training, 0.1, 1e-5, use_global_stats=ugs)
        y.backward(dyin)
        return y.detach(), xr.grad, wr.grad, br.grad, rmr, rvr

    y, dx, dw, db, rmo, rvo = run(xp, dyp)
    y0, dx0, dw0, db0, rm0, rv0 = run(x, dy)
    assert len(flat_passes) == (2 if flat else 0)
    with np.errstate(all="ignore"):
        fwd = R.batch_norm_forward(to_np64(xp), to_np64(w), to_np64(b), to_np64(rm), to_np64(rv),
                                   training=training, momentum=0.1, eps=1e-5, use_global_stats=ugs)
        rdx, rdw, rdb, _ = R.batch_norm_backward(to_np64(dyp), to_np64(xp), to_np64(w), fwd, training=training,
                                                 use_global_stats=ugs)
    tol = OUTPUT_TOL["float32"]
    for what, a, e in (("y", y, fwd.y), ("dx", dx, rdx), ("dweight", dw, rdw), ("dbias", db, rdb),
                       ("running_mean", rmo, fwd.new_running_mean), ("running_var", rvo, fwd.new_running_var)):
        err = max_rel_err(to_np64(a), e)
        assert err <= 10 * tol, f"{what}: NaN/Inf positions or values differ from the reference (err {err})"
    good = [ch for ch in range(c) if ch not in bad_channels]
    for what, a, a0 in (("y", y, y0), ("dx", dx, dx0)):
        assert torch.equal(a[:, good], a0[:, good]), f"{what}: a channel without NaN/Inf changed"
    for what, a, a0 in (("dweight", dw, dw0), ("dbias", db, db0), ("running_mean", rmo, rm0),
                        ("running_var", rvo, rv0)):
        assert torch.equal(a[good], a0[good]), f"{what}: a channel without NaN/Inf changed"
    if mode == "eval" or ugs:
        # elementwise: only the poisoned elements themselves are non-finite in y (and in dx for a bad dy)
        expected_bad = torch.zeros(x.shape, dtype=torch.bool, device=x.device)
        for idx, _ in bad:
            expected_bad[idx] = True
        if not in_dy:
            assert torch.equal(~torch.isfinite(y), expected_bad)
        else:
            assert torch.equal(~torch.isfinite(dx), expected_bad)


# ====================================================================================== non-contiguous


def _ln_run(is_rms, x, dy, w, b, residual=None):
    # detach(), not clone(): a clone of a strided view is contiguous, and the parameters' strides are under test
    xr, wr = x.detach().requires_grad_(), w.detach().requires_grad_()
    br = None if (is_rms or b is None) else b.detach().requires_grad_()
    rr = None if residual is None else residual.detach().requires_grad_()
    n = x.shape[-1]
    kw = {} if rr is None else {"residual": rr}
    out = fastnorm.rms_norm(xr, n, wr, 1e-5, **kw) if is_rms else fastnorm.layer_norm(xr, n, wr, br, 1e-5, **kw)
    if rr is not None:
        y, s = out
        torch.autograd.backward([y, s], [dy, dy * 0.5])
    else:
        y = out
        y.backward(dy)
    grads = [xr.grad, wr.grad] + ([] if br is None else [br.grad]) + ([] if rr is None else [rr.grad, s.detach()])
    return [y.detach()] + grads


def _ln_layouts(m, n, seed):
    """(name, tensor) pairs: the same (m, n) values in different memory layouts."""
    base = _randn((m, n), seed)
    t = torch.empty((n, m), device=DEVICE).t()
    t.copy_(base)
    big = torch.full((2 * m, 3 * n), float("nan"), device=DEVICE)
    big[::2, ::3] = base
    rows = torch.full((m, n + 5), float("nan"), device=DEVICE)[:, 2:n + 2]
    rows.copy_(base)
    return [("contiguous", base), ("transposed", t), ("sliced-steps", big[::2, ::3]), ("row-stride", rows)]


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [7, 130])
def test_non_contiguous_layer_norm_bitwise(is_rms, n):
    m = 5
    w, b = _randn(n, 31, offset=1.0), _randn(n, 32)
    xs, dys = _ln_layouts(m, n, 33), _ln_layouts(m, n, 34)
    expected = _ln_run(is_rms, xs[0][1], dys[0][1], w, b)
    # every x layout with every dy layout, paired off in two rotations (all 16 pairs cost too much interpreter time)
    pairs = [(xs[k], dys[(k + 1) % len(dys)]) for k in range(len(xs))]
    pairs += [(xs[k], dys[(k + 2) % len(dys)]) for k in range(1, len(xs))]
    for (xname, x), (dname, dy) in pairs:
        got = _ln_run(is_rms, x, dy, w, b)
        for i, (a, e) in enumerate(zip(got, expected, strict=True)):
            assert torch.equal(a, e), f"x {xname}, dy {dname}: output {i} differs from the contiguous case"


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_expanded_input_and_grad_layer_norm(is_rms):
    n, m = 9, 4
    w, b = _randn(n, 41, offset=1.0), _randn(n, 42)
    row, drow = _randn((1, n), 43), _randn((1, n), 44)
    x_exp, dy_exp = row.expand(m, n), drow.expand(m, n)
    expected = _ln_run(is_rms, x_exp.contiguous(), dy_exp.contiguous(), w, b)
    got = _ln_run(is_rms, x_exp, dy_exp, w, b)
    for i, (a, e) in enumerate(zip(got, expected, strict=True)):
        assert torch.equal(a, e), f"expanded x/dy: output {i} differs from the contiguous case"
    # y.sum().backward() hands the kernel a fully expanded (stride 0) grad of ones
    xr = row.expand(m, n).contiguous().requires_grad_()
    (fastnorm.rms_norm(xr, n, w) if is_rms else fastnorm.layer_norm(xr, n, w, b)).sum().backward()
    g1 = xr.grad.clone()
    xr.grad = None
    (fastnorm.rms_norm(xr, n, w) if is_rms else fastnorm.layer_norm(xr, n, w, b)).backward(torch.ones(m, n,
                                                                                                       device=DEVICE))
    assert torch.equal(g1, xr.grad)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_non_contiguous_residual_bitwise(is_rms):
    m, n = 4, 20
    w, b = _randn(n, 51, offset=1.0), _randn(n, 52)
    xs, rs, dys = _ln_layouts(m, n, 53), _ln_layouts(m, n, 54), _ln_layouts(m, n, 55)
    expected = _ln_run(is_rms, xs[0][1], dys[0][1], w, b, residual=rs[0][1])
    for (xname, x), (rname, r), (dname, dy) in zip(xs, rs[::-1], dys[1:] + dys[:1], strict=True):
        got = _ln_run(is_rms, x, dy, w, b, residual=r)
        for i, (a, e) in enumerate(zip(got, expected, strict=True)):
            assert torch.equal(a, e), f"x {xname}, residual {rname}, dy {dname}: output {i} differs"


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_non_contiguous_3d_input_layer_norm(is_rms):
    """(B, T, N) made from a (T, B, N) tensor by transpose(0, 1): rows keep unit stride, row stride varies."""
    b_, t_, n = 3, 4, 16
    w, b = _randn(n, 61, offset=1.0), _randn(n, 62)
    base = _randn((t_, b_, n), 63)
    x = base.transpose(0, 1)
    dy = _randn((t_, b_, n), 64).transpose(0, 1)
    expected = _ln_run(is_rms, x.contiguous(), dy.contiguous(), w, b)
    got = _ln_run(is_rms, x, dy, w, b)
    for i, (a, e) in enumerate(zip(got, expected, strict=True)):
        assert torch.equal(a, e), f"transposed 3-D input: output {i} differs from the contiguous case"


def _bn_run(x, dy, w, b, rm, rv, training, z=None, **kw):
    xr, wr, br = x.detach().requires_grad_(), w.detach().requires_grad_(), b.detach().requires_grad_()
    zr = None if z is None else z.detach().requires_grad_()
    rmr, rvr = rm.clone(), rv.clone()
    y = fastnorm.batch_norm(xr, rmr, rvr, wr, br, training, 0.1, 1e-5, z=zr, **kw)
    y.backward(dy)
    out = [y.detach(), xr.grad, wr.grad, br.grad, rmr, rvr]
    if zr is not None:
        out.append(zr.grad)
    return out


def _bn_layouts(shape, seed):
    """(name, tensor, same_kernel_layout_as_nchw) for one set of values in different memory layouts."""
    base = _randn(shape, seed)
    out = [("nchw", base, True)]
    if len(shape) >= 3:
        fmt = torch.channels_last if len(shape) == 4 else (torch.channels_last_3d if len(shape) == 5 else None)
        if fmt is not None:
            out.append(("channels_last", base.contiguous(memory_format=fmt), False))
        # the last two dims transposed: for (N, C, L) that is channel stride 1, the channels-last kernel path;
        # for 4-D/5-D neither NCHW nor channels-last -> one documented copy, then the NCHW path
        tr = torch.empty((*shape[:-2], shape[-1], shape[-2]), device=DEVICE).transpose(-1, -2)
        tr.copy_(base)
        out.append(("last-two-transposed", tr, len(shape) != 3))
    big = torch.full((2 * shape[0], *shape[1:-1], 2 * shape[-1]), float("nan"), device=DEVICE)
    sl = big[::2, ..., ::2]
    sl.copy_(base)
    out.append(("sliced-steps", sl, True))
    return out


@pytest.mark.parametrize("shape", [(4, 3, 3, 5), (6, 5), (3, 4, 7), (2, 3, 2, 2, 3)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize(("training", "kw"), [(True, {}), (False, {}), (True, {"use_global_stats": True}),
                                              (True, {"activation": "relu", "with_z": True})],
                         ids=["train", "eval", "global-stats", "relu-z"])
def test_non_contiguous_batch_norm(shape, training, kw):
    kw = dict(kw)
    with_z = kw.pop("with_z", False)
    c = shape[1]
    w, b, rm, rv = _rand_pos(c, 71), _randn(c, 72), _randn(c, 73), _rand_pos(c, 74)
    xs, dys = _bn_layouts(shape, 75), _bn_layouts(shape, 76)
    zs = _bn_layouts(shape, 77) if with_z else [(None, None, True)] * len(xs)
    expected = _bn_run(xs[0][1], dys[0][1], w, b, rm, rv, training, z=zs[0][1], **kw)
    tol = OUTPUT_TOL["float32"]
    # every x layout once, each with a different dy (and z) layout: all combinations cost too much interpreter time
    for k, (xname, x, same) in enumerate(xs):
        dname, dy, _ = dys[(k + 1) % len(dys)]
        zname, z, _ = zs[(k + 2) % len(zs)]
        got = _bn_run(x, dy, w, b, rm, rv, training, z=z, **kw)
        if not same:
            assert got[0].stride() == x.stride(), f"y does not keep x's {xname} layout"
        for i, (a, e) in enumerate(zip(got, expected, strict=True)):
            where = f"x {xname}, dy {dname}, z {zname}: output {i}"
            if same:
                assert torch.equal(a, e), f"{where} differs from the contiguous case"
            else:
                err = max_rel_err(to_np64(a), to_np64(e))
                assert err <= tol, f"{where}: err {err} vs the contiguous case"


def test_channels_last_grad_with_contiguous_input_and_reverse():
    n, c, h, wd = 3, 4, 3, 3
    w, b, rm, rv = _rand_pos(c, 81), _randn(c, 82), _randn(c, 83), _rand_pos(c, 84)
    x = _randn((n, c, h, wd), 85)
    dy = _randn((n, c, h, wd), 86)
    cl = torch.channels_last
    for training in (True, False):
        ref_nchw = _bn_run(x, dy, w, b, rm, rv, training)
        got = _bn_run(x, dy.contiguous(memory_format=cl), w, b, rm, rv, training)
        for i, (a, e) in enumerate(zip(got, ref_nchw, strict=True)):
            assert torch.equal(a, e), f"contiguous x, channels_last dy (training={training}): output {i}"
        ref_cl = _bn_run(x.contiguous(memory_format=cl), dy.contiguous(memory_format=cl), w, b, rm, rv, training)
        got = _bn_run(x.contiguous(memory_format=cl), dy, w, b, rm, rv, training)
        for i, (a, e) in enumerate(zip(got, ref_cl, strict=True)):
            assert torch.equal(a, e), f"channels_last x, contiguous dy (training={training}): output {i}"
        assert got[0].is_contiguous(memory_format=cl), "y of a channels_last x is not channels_last"
        assert got[1].is_contiguous(memory_format=cl) or got[1].is_contiguous(), "dx layout"


def test_expanded_input_and_grad_batch_norm():
    """x expanded along the batch (stride 0) and the all-stride-0 grad of ``y.sum()``."""
    c = 3
    w, b, rm, rv = _rand_pos(c, 91), _randn(c, 92), _randn(c, 93), _rand_pos(c, 94)
    one = _randn((1, c, 2, 3), 95)
    x = one.expand(4, c, 2, 3)
    for training in (True, False):
        dy = torch.ones(4, c, 2, 3, device=DEVICE)
        expected = _bn_run(x.contiguous(), dy, w, b, rm, rv, training)
        got = _bn_run(x, torch.ones((), device=DEVICE).expand(4, c, 2, 3), w, b, rm, rv, training)
        for i, (a, e) in enumerate(zip(got, expected, strict=True)):
            assert torch.equal(a, e), f"expanded x / grad (training={training}): output {i}"


@pytest.mark.parametrize("module", ["BatchNorm2d", "SyncBatchNorm", "FrozenBatchNorm2d"])
def test_modules_channels_last_grad_and_input(module):
    cl = torch.channels_last
    x, dy = _randn((2, 3, 3, 4), 101), _randn((2, 3, 3, 4), 102)
    results = {}
    for xf in (torch.contiguous_format, cl):
        for df in (torch.contiguous_format, cl):
            m = getattr(fnn, module)(3).to(DEVICE)
            with torch.no_grad():
                for name, t in m.named_buffers():
                    if t.is_floating_point():
                        t.copy_(_rand_pos(3, len(name)))
            xr = x.detach().clone(memory_format=xf).requires_grad_()
            y = m(xr)
            y.backward(dy.contiguous(memory_format=df))
            results[(xf, df)] = [y.detach(), xr.grad] + [p.grad for p in m.parameters()]
    for xf in (torch.contiguous_format, cl):
        base = results[(xf, xf)]
        other = results[(xf, cl if xf == torch.contiguous_format else torch.contiguous_format)]
        for i, (a, e) in enumerate(zip(other, base, strict=True)):
            assert torch.equal(a, e), f"{module}: grad layout changed output {i} (x {xf})"
    tol = OUTPUT_TOL["float32"]
    for i, (a, e) in enumerate(zip(results[(cl, cl)], results[(torch.contiguous_format,) * 2], strict=True)):
        assert max_rel_err(to_np64(a), to_np64(e)) <= tol, f"{module}: channels_last x, output {i}"


# ====================================================================================== strided parameters


def _strided(t, step=2, fill=0.0):
    """A view of ``t``'s values with stride ``step`` inside a larger buffer filled with ``fill``."""
    big = torch.full((t.numel() * step,), fill, dtype=t.dtype, device=t.device)
    v = big[::step]
    v.copy_(t)
    return big, v


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("kind", ["step", "expanded"])
def test_strided_weight_layer_norm(is_rms, kind):
    """A weight/bias that is a strided view (a step, or an expanded scalar) gives the contiguous result
    (or a clear error naming it); never a silently wrong result."""
    m, n = 3, 8
    x, dy = _randn((m, n), 111), _randn((m, n), 112)
    w, b = _randn(n, 113, offset=1.0), _randn(n, 114)
    if kind == "step":
        _, ws = _strided(w)
        _, bs = _strided(b)
    else:
        w = torch.full((n,), 1.5, device=DEVICE)
        b = torch.full((n,), -0.25, device=DEVICE)
        ws = torch.full((1,), 1.5, device=DEVICE).expand(n)
        bs = torch.full((1,), -0.25, device=DEVICE).expand(n)
    expected = _ln_run(is_rms, x, dy, w, b)
    try:
        got = _ln_run(is_rms, x, dy, ws, bs)
    except (ValueError, RuntimeError) as e:
        assert "weight" in str(e) or "bias" in str(e), f"error does not name the parameter: {e}"
        return
    for i, (a, e) in enumerate(zip(got, expected, strict=True)):
        assert torch.equal(a, e), f"{kind} weight/bias: output {i} differs from contiguous parameters"


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_strided_parameters_and_running_stats_batch_norm(training):
    """Weight, bias and running statistics that are views with a step: the contiguous result and an in-place
    update of the views only (the gaps of the underlying buffers untouched), or a clear error naming them."""
    c = 4
    x, dy = _randn((3, c, 2, 2), 121), _randn((3, c, 2, 2), 122)
    w, b, rm, rv = _rand_pos(c, 123), _randn(c, 124), _randn(c, 125), _rand_pos(c, 126)
    expected = _bn_run(x, dy, w, b, rm, rv, training)
    _, ws = _strided(w, fill=float("nan"))
    _, bs = _strided(b, fill=float("nan"))
    rm_big, rms_ = _strided(rm, fill=7.0)
    rv_big, rvs_ = _strided(rv, fill=7.0)
    xr = x.clone().requires_grad_()
    wr, br = ws.detach().requires_grad_(), bs.detach().requires_grad_()
    try:
        y = fastnorm.batch_norm(xr, rms_, rvs_, wr, br, training, 0.1, 1e-5)
        y.backward(dy)
    except (ValueError, RuntimeError) as e:
        assert any(k in str(e) for k in ("weight", "bias", "running_mean", "running_var")), str(e)
        return
    got = [y.detach(), xr.grad, wr.grad, br.grad, rms_, rvs_]
    names = ["y", "dx", "dweight", "dbias", "running_mean", "running_var"]
    for name, a, e in zip(names, got, expected, strict=True):
        assert torch.equal(a, e), f"strided parameters/statistics: {name} differs from the contiguous case"
    assert torch.all(rm_big[1::2] == 7.0) and torch.all(rv_big[1::2] == 7.0), \
        "the running-statistics update wrote outside the strided view"


# ====================================================================================== mixed precision sanity


@pytest.mark.parametrize("op", ["ln", "rms", "bn-train", "bn-eval"])
def test_bf16_input_fp32_params_output_dtypes(op):
    """bf16 input with fp32 parameters: y in bf16, parameter gradients in fp32, accurate to bf16."""
    x = _randn((4, 6, 2, 2) if op.startswith("bn") else (4, 6), 131, torch.bfloat16).requires_grad_()
    w, b = _rand_pos(6, 132).requires_grad_(), _randn(6, 133).requires_grad_()
    if op == "ln":
        y = fastnorm.layer_norm(x, 6, w, b)
    elif op == "rms":
        y = fastnorm.rms_norm(x, 6, w)
    else:
        y = fastnorm.batch_norm(x, _randn(6, 134), _rand_pos(6, 135), w, b, op == "bn-train")
    assert y.dtype == torch.bfloat16
    y.float().sum().backward()
    assert x.grad.dtype == torch.bfloat16 and w.grad.dtype == torch.float32
    if op != "rms":
        assert b.grad.dtype == torch.float32
    if op == "ln":
        ry, _, _ = R.layer_norm_forward(to_np64(x), to_np64(w), to_np64(b), 1e-5)
        assert_close("y", y, ry, torch.bfloat16)


# ====================================================================================== autocast


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm", "BatchNorm2d", "BatchNorm2d-eval", "FrozenBatchNorm2d",
                                    "SyncBatchNorm"])
def test_autocast_output_has_the_input_dtype(module):
    """Under autocast fastnorm does not up- or down-cast: a low-precision activation (from a conv run under
    autocast) gives a low-precision output, an fp32 tensor an fp32 output; parameters stay fp32 and get fp32
    gradients. (torch.nn.LayerNorm on CUDA returns fp32 under autocast; fastnorm returns the input's dtype.)"""
    dev_type = "cuda" if DEVICE == "cuda" else "cpu"
    adt = torch.bfloat16
    conv = torch.nn.Conv2d(3, 4, 1).to(DEVICE)
    name = module.removesuffix("-eval")
    m = (getattr(fnn, name)(4) if "Norm2d" in name or name == "SyncBatchNorm" else getattr(fnn, name)(5)).to(DEVICE)
    if module.endswith("-eval"):
        m.eval()
    x32 = _randn((2, 3, 3, 5), 141).requires_grad_()
    with torch.autocast(dev_type, dtype=adt):
        act = conv(x32)
        assert act.dtype == adt
        y = m(act)
        y32 = m(x32.detach().repeat(1, 2, 1, 1)[:, :4])
    assert y.dtype == adt, f"{module}: autocast activation {act.dtype} gave {y.dtype}"
    assert y32.dtype == torch.float32, f"{module}: fp32 input under autocast gave {y32.dtype}"
    y.float().sum().backward()
    assert x32.grad is not None and x32.grad.dtype == torch.float32
    for pname, p in m.named_parameters():
        assert p.dtype == torch.float32 and p.grad is not None and p.grad.dtype == torch.float32, pname


# ====================================================================================== devices


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_modules_run_on_the_meta_device(train):
    """Shape inference without data: every module runs forward and backward on meta tensors."""
    x = torch.empty(4, 3, 5, 5, device="meta", requires_grad=True)
    for m in (fnn.BatchNorm2d(3), fnn.FrozenBatchNorm2d(3), fnn.SyncBatchNorm(3, activation="relu"),
              fnn.LayerNorm(5), fnn.RMSNorm(5)):
        m = m.to("meta").train(train)
        y = m(x)
        assert y.shape == x.shape and y.is_meta, type(m).__name__
        y.sum().backward()
        for name, p in m.named_parameters():
            assert p.grad is not None and p.grad.shape == p.shape and p.grad.is_meta, f"{type(m).__name__}.{name}"


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensors_on_a_device_other_than_the_current_one():
    """Kernels run on the tensors' device, as torch's own ops do, whatever the current device: the same
    results as with that device current (BatchNorm training forward and backward, LayerNorm)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 8, 5, 5, generator=g).to("cuda:1")
    dy = torch.randn(4, 8, 5, 5, generator=g).to("cuda:1")
    h = torch.randn(64, 96, generator=g).to("cuda:1")
    outs = []
    for current in (1, 0):
        with torch.cuda.device(current):
            xg = x.clone().requires_grad_(True)
            y = fastnorm.batch_norm(xg, None, None, training=True)
            y.backward(dy)
            outs.append((y, xg.grad, fastnorm.layer_norm(h, (96,))))
    torch.cuda.synchronize(1)
    for want, got in zip(*outs, strict=True):
        assert got.device == want.device and torch.equal(got, want)
