"""state_dict compatibility of every fastnorm module with torch.nn.

* Round trip in both directions with ``strict=True``: same keys, same values (bitwise), same dtypes, and
  the same outputs in evaluation after loading.
* A BatchNorm state_dict without ``num_batches_tracked`` loads with ``strict=False`` and keeps the
  module's existing count (with and without the state_dict's version metadata).
* Construction on the meta device, then ``load_state_dict(..., assign=True)``: the module holds the loaded
  tensors (Parameters stay Parameters), runs, and matches torch; also for a whole model.
* ``FrozenBatchNorm2d`` takes a ``BatchNorm2d`` state_dict with ``strict=True`` (``num_batches_tracked``
  dropped, as torchvision does) and gives ``BatchNorm2d`` every key but that one.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import fastnorm
import fastnorm.nn as fnn
from fastnorm.reference.tolerances import OUTPUT_TOL, max_rel_err
from helpers import to_np64

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# (id, fastnorm factory, torch factory, input shape)
PAIRS = [
    ("LayerNorm", lambda **f: fnn.LayerNorm(6, **f), lambda **f: nn.LayerNorm(6, **f), (3, 6)),
    ("LayerNorm-nobias", lambda **f: fnn.LayerNorm(6, bias=False, **f), lambda **f: nn.LayerNorm(6, bias=False, **f),
     (3, 6)),
    ("LayerNorm-noaffine", lambda **f: fnn.LayerNorm(6, elementwise_affine=False, **f),
     lambda **f: nn.LayerNorm(6, elementwise_affine=False, **f), (3, 6)),
    ("LayerNorm-2d", lambda **f: fnn.LayerNorm((2, 3), eps=1e-6, **f), lambda **f: nn.LayerNorm((2, 3), eps=1e-6, **f),
     (4, 2, 3)),
    ("RMSNorm", lambda **f: fnn.RMSNorm(6, **f), lambda **f: nn.RMSNorm(6, **f), (3, 6)),
    ("RMSNorm-eps", lambda **f: fnn.RMSNorm(6, eps=1e-5, **f), lambda **f: nn.RMSNorm(6, eps=1e-5, **f), (3, 6)),
    ("RMSNorm-noaffine", lambda **f: fnn.RMSNorm(6, elementwise_affine=False, **f),
     lambda **f: nn.RMSNorm(6, elementwise_affine=False, **f), (3, 6)),
    ("BatchNorm1d", lambda **f: fnn.BatchNorm1d(4, **f), lambda **f: nn.BatchNorm1d(4, **f), (3, 4, 5)),
    ("BatchNorm1d-noaffine", lambda **f: fnn.BatchNorm1d(4, affine=False, **f),
     lambda **f: nn.BatchNorm1d(4, affine=False, **f), (6, 4)),
    ("BatchNorm2d", lambda **f: fnn.BatchNorm2d(4, **f), lambda **f: nn.BatchNorm2d(4, **f), (2, 4, 3, 3)),
    ("BatchNorm2d-cma", lambda **f: fnn.BatchNorm2d(4, momentum=None, **f),
     lambda **f: nn.BatchNorm2d(4, momentum=None, **f), (2, 4, 3, 3)),
    ("BatchNorm2d-untracked", lambda **f: fnn.BatchNorm2d(4, track_running_stats=False, **f),
     lambda **f: nn.BatchNorm2d(4, track_running_stats=False, **f), (2, 4, 3, 3)),
    ("BatchNorm2d-relu", lambda **f: fnn.BatchNorm2d(4, activation="relu", **f), lambda **f: nn.BatchNorm2d(4, **f),
     None),
    ("BatchNorm3d", lambda **f: fnn.BatchNorm3d(4, **f), lambda **f: nn.BatchNorm3d(4, **f), (2, 4, 2, 2, 3)),
    ("SyncBatchNorm", lambda **f: fnn.SyncBatchNorm(4, **f), lambda **f: nn.SyncBatchNorm(4, **f), None),
    ("SyncBatchNorm-vs-BatchNorm2d", lambda **f: fnn.SyncBatchNorm(4, **f), lambda **f: nn.BatchNorm2d(4, **f),
     (2, 4, 3, 3)),
    ("SyncBatchNorm-noaffine", lambda **f: fnn.SyncBatchNorm(4, affine=False, **f),
     lambda **f: nn.SyncBatchNorm(4, affine=False, **f), None),
]
BN_IDS = {p[0] for p in PAIRS if "Batch" in p[0] and "untracked" not in p[0]}


def _randomize(m: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if name.endswith("num_batches_tracked"):
                t.fill_(7 + seed)
            elif name.endswith("running_var") or name.endswith("weight"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g))
    return m


def _assert_same_state(a: nn.Module, b: nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa.keys()) == list(sb.keys()), f"keys differ: {list(sa)} vs {list(sb)}"
    for k in sa:
        assert sa[k].dtype == sb[k].dtype, f"{k}: dtype {sa[k].dtype} vs {sb[k].dtype}"
        assert torch.equal(sa[k].cpu(), sb[k].cpu()), f"{k} differs after loading"


def _assert_same_eval_output(fast: nn.Module, ref: nn.Module, shape) -> None:
    if shape is None:  # torch.nn.SyncBatchNorm needs a process group even in eval on CPU; keys/values suffice
        return
    x = torch.randn(shape, generator=torch.Generator().manual_seed(3)).to(DEVICE)
    fast.eval()
    ref.eval()
    with torch.no_grad():
        err = max_rel_err(to_np64(fast(x)), to_np64(ref(x)))
    assert err <= OUTPUT_TOL["float32"], f"eval outputs differ after loading (err {err})"


@pytest.mark.parametrize(("make_fast", "make_torch", "shape"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_round_trip_both_directions_strict(make_fast, make_torch, shape):
    # torch -> fastnorm
    ref = _randomize(make_torch(device=DEVICE), 1)
    fast = make_fast(device=DEVICE)
    result = fast.load_state_dict(ref.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    _assert_same_state(fast, ref)
    _assert_same_eval_output(fast, ref, shape)
    # fastnorm -> torch
    fast2 = _randomize(make_fast(device=DEVICE), 2)
    ref2 = make_torch(device=DEVICE)
    ref2.load_state_dict(fast2.state_dict(), strict=True)
    _assert_same_state(ref2, fast2)
    _assert_same_eval_output(fast2, ref2, shape)
    # fastnorm -> fastnorm (a copy), with the version metadata torch writes
    fast3 = make_fast(device=DEVICE)
    sd = fast2.state_dict()
    assert sd._metadata[""].get("version") == ref2.state_dict()._metadata[""].get("version")
    fast3.load_state_dict(copy.deepcopy(sd), strict=True)
    _assert_same_state(fast3, fast2)


@pytest.mark.parametrize(("make_fast", "make_torch"), [p[1:3] for p in PAIRS if p[0] in BN_IDS],
                         ids=[p[0] for p in PAIRS if p[0] in BN_IDS])
@pytest.mark.parametrize("metadata", [True, False], ids=["with-version", "plain-dict"])
def test_missing_num_batches_tracked_keeps_count(make_fast, make_torch, metadata):
    src = _randomize(make_torch(device=DEVICE), 4)
    sd = src.state_dict()
    del sd["num_batches_tracked"]
    if not metadata:
        sd = dict(sd)  # no _metadata: torch treats it as a version-1 state_dict
    m = _randomize(make_fast(device=DEVICE), 5)
    count = int(m.num_batches_tracked)
    result = m.load_state_dict(sd, strict=False)
    assert not result.unexpected_keys
    assert set(result.missing_keys) <= {"num_batches_tracked"}
    assert int(m.num_batches_tracked) == count, "the existing num_batches_tracked was not kept"
    assert m.num_batches_tracked.dtype == torch.long
    for k, v in sd.items():
        assert torch.equal(m.state_dict()[k], v), f"{k} not loaded"
    if metadata:
        with pytest.raises(RuntimeError, match="num_batches_tracked"):
            make_fast(device=DEVICE).load_state_dict(sd, strict=True)


@pytest.mark.parametrize(("make_fast", "make_torch", "shape"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
@pytest.mark.parametrize("how", ["device-arg", "device-context"])
def test_meta_construction_then_assign(make_fast, make_torch, shape, how):
    ref = _randomize(make_torch(device=DEVICE), 6)
    if how == "device-arg":
        m = make_fast(device="meta")
    else:
        with torch.device("meta"):
            m = make_fast()
    assert all(t.is_meta for t in list(m.parameters()) + list(m.buffers()))
    sd = ref.state_dict()
    m.load_state_dict(sd, strict=True, assign=True)
    for name, p in m.named_parameters():
        assert isinstance(p, nn.Parameter) and p.requires_grad, f"{name} is no longer a trainable Parameter"
        assert p.device == torch.device(DEVICE) if DEVICE == "cpu" else p.is_cuda
    for name, t in m.named_buffers():
        assert not t.is_meta, f"buffer {name} is still on meta"
    _assert_same_state(m, ref)
    _assert_same_eval_output(m, ref, shape)
    if shape is not None and list(m.parameters()):  # and it trains
        m.train()
        x = torch.randn(shape, generator=torch.Generator().manual_seed(8)).to(DEVICE)
        m(x).square().sum().backward()
        for name, p in m.named_parameters():
            assert p.grad is not None and torch.isfinite(p.grad).all(), f"{name}.grad after a meta+assign load"


def test_frozen_batch_norm_takes_batch_norm_state():
    bn = _randomize(nn.BatchNorm2d(4, eps=1e-3), 9).to(DEVICE).eval()
    fz = fnn.FrozenBatchNorm2d(4, eps=1e-3, device=DEVICE)
    result = fz.load_state_dict(bn.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    for k in ("weight", "bias", "running_mean", "running_var"):
        assert torch.equal(getattr(fz, k), getattr(bn, k))
    _assert_same_eval_output(fz, bn, (2, 4, 3, 3))
    # back: every key but num_batches_tracked
    bn2 = nn.BatchNorm2d(4, eps=1e-3).to(DEVICE)
    result = bn2.load_state_dict(fz.state_dict(), strict=False)
    # the frozen layer's state_dict is version 1 for BatchNorm2d's loader, which then keeps its own count
    assert set(result.missing_keys) <= {"num_batches_tracked"} and not result.unexpected_keys
    _assert_same_eval_output(fz, bn2.eval(), (2, 4, 3, 3))
    # frozen -> frozen, and meta + assign
    fz2 = fnn.FrozenBatchNorm2d(4, eps=1e-3, device="meta")
    fz2.load_state_dict(fz.state_dict(), strict=True, assign=True)
    _assert_same_state(fz2, fz)
    _assert_same_eval_output(fz2, bn, (2, 4, 3, 3))


def _torch_model():
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4),
        nn.Flatten(2), nn.LayerNorm(9), nn.RMSNorm(9), nn.Flatten(1), nn.Linear(36, 5), nn.BatchNorm1d(5))


def test_whole_model_round_trip_and_meta_assign():
    """A torch model's state_dict loads into its fastnorm twin (built on meta, assign=True) and back."""
    ref = _randomize(_torch_model(), 10).to(DEVICE)
    with torch.device("meta"):
        fast = fastnorm.convert_model(_torch_model())
    kinds = {type(m).__module__.split(".")[0] for m in fast.modules() if "Norm" in type(m).__name__}
    assert kinds == {"fastnorm"}, "convert_model left torch norm layers"
    fast.load_state_dict(ref.state_dict(), strict=True, assign=True)
    _assert_same_state(fast, ref)
    x = torch.randn(4, 3, 3, 3, generator=torch.Generator().manual_seed(11)).to(DEVICE)
    ref.eval()
    fast.eval()
    with torch.no_grad():
        assert max_rel_err(to_np64(fast(x)), to_np64(ref(x))) <= 1e-5
    back = _torch_model().to(DEVICE)
    back.load_state_dict(fast.state_dict(), strict=True)
    _assert_same_state(back, fast)
    # training steps keep the two in step (same batch statistics, same running-stat updates)
    ref.train()
    fast.train()
    opt_r = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt_f = torch.optim.SGD(fast.parameters(), lr=0.1)
    for step in range(2):
        xb = torch.randn(4, 3, 3, 3, generator=torch.Generator().manual_seed(20 + step)).to(DEVICE)
        for model, opt in ((ref, opt_r), (fast, opt_f)):
            opt.zero_grad()
            model(xb).square().mean().backward()
            opt.step()
    for (k, a), (_, b) in zip(fast.state_dict().items(), ref.state_dict().items(), strict=True):
        if a.is_floating_point():
            assert max_rel_err(to_np64(a), to_np64(b)) <= 1e-4, f"{k} drifted from torch after two steps"
        else:
            assert torch.equal(a, b), k
