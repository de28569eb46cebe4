"""fastnorm.nn.SyncBatchNorm in one process: state_dict and conversion compatibility with torch, the local
path (no process group, or evaluation) with no collective, argument errors, and the global-count check.

The multi-process behaviour (2 and 3 gloo ranks) is in ``test_sync_batch_norm_gloo.py``.
"""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
import torch.distributed as dist

import fastnorm
from fastnorm import reference as ref
from fastnorm.distributed import GlobalCountCheck
from fastnorm.nn import SyncBatchNorm
from helpers import assert_close, channels_last_blocks, peer_buffers, to_np64

COLLECTIVES = ("all_gather", "all_gather_into_tensor", "all_gather_single", "all_reduce", "broadcast", "barrier")


@pytest.fixture
def no_collectives(monkeypatch):
    """Any torch.distributed collective called during the test fails it."""
    def forbid(name):
        def call(*args, **kwargs):
            raise AssertionError(f"torch.distributed.{name} was called")
        return call

    for name in COLLECTIVES:
        if hasattr(dist, name):
            monkeypatch.setattr(dist, name, forbid(name))


def _randomize(m: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if name.endswith("num_batches_tracked"):
                t.fill_(7)
            elif name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g))
    return m


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"track_running_stats": False}, {"momentum": None}])
def test_state_dict_round_trips_with_torch(kwargs):
    for other_cls in (torch.nn.SyncBatchNorm, torch.nn.BatchNorm2d):
        other = _randomize(other_cls(6, **kwargs))
        mine = SyncBatchNorm(6, **kwargs)
        mine.load_state_dict(other.state_dict(), strict=True)
        back = other_cls(6, **kwargs)
        back.load_state_dict(mine.state_dict(), strict=True)
        assert list(mine.state_dict()) == list(other.state_dict())
        for k, v in other.state_dict().items():
            assert torch.equal(mine.state_dict()[k], v), k
            assert torch.equal(back.state_dict()[k], v), k


def test_constructor_matches_torch():
    mine = SyncBatchNorm(5, eps=1e-3, momentum=0.2, dtype=torch.float64)
    theirs = torch.nn.SyncBatchNorm(5, eps=1e-3, momentum=0.2, dtype=torch.float64)
    for (n1, t1), (n2, t2) in zip(mine.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert n1 == n2 and t1.dtype == t2.dtype and torch.equal(t1, t2)
    assert (mine.eps, mine.momentum, mine.affine, mine.track_running_stats) == (1e-3, 0.2, True, True)
    assert mine.process_group is None
    assert isinstance(mine, torch.nn.modules.batchnorm._BatchNorm)
    assert "activation='relu'" in repr(SyncBatchNorm(3, activation="relu"))
    assert SyncBatchNorm(3, bias=False).bias is None


def _model():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.inner = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4, momentum=None))

    m = torch.nn.Sequential(Block(), torch.nn.BatchNorm3d(2, affine=False),
                            torch.nn.SyncBatchNorm(4, eps=1e-3, track_running_stats=False), torch.nn.ReLU())
    return _randomize(m)


def test_convert_sync_batchnorm_recursive_shares_state():
    model = _model()
    model[0].bn.weight.requires_grad_(False)
    model[0].inner[1].eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    old = {n: m for n, m in model.named_modules()}
    converted = SyncBatchNorm.convert_sync_batchnorm(model, process_group="pg-sentinel")
    assert converted is model
    mods = dict(converted.named_modules())
    for name in ("0.bn", "0.inner.1", "1", "2"):
        new, prev = mods[name], old[name]
        assert type(new) is SyncBatchNorm, name
        assert new.process_group == "pg-sentinel"
        assert (new.num_features, new.eps, new.momentum, new.affine, new.track_running_stats) == (
            prev.num_features, prev.eps, prev.momentum, prev.affine, prev.track_running_stats)
        assert new.training == prev.training
        for attr in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
            assert getattr(new, attr) is getattr(prev, attr), (name, attr)
    assert type(mods["0.conv"]) is torch.nn.Conv2d and type(mods["0.inner.0"]) is torch.nn.Linear
    assert mods["0.bn"].weight.requires_grad is False and mods["0.bn"].bias.requires_grad is True
    assert mods["0.inner.1"].training is False
    after = converted.state_dict()
    assert list(after) == list(before)
    assert all(torch.equal(after[k], v) for k, v in before.items())
    fresh = _model()
    fresh.load_state_dict(after, strict=True)  # and back into torch modules


def test_convert_a_bare_batchnorm_returns_a_new_layer():
    bn = _randomize(torch.nn.BatchNorm2d(3)).eval()
    out = SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(out) is SyncBatchNorm and out is not bn and out.weight is bn.weight and not out.training
    lin = torch.nn.Linear(2, 2)
    assert SyncBatchNorm.convert_sync_batchnorm(lin) is lin


def test_convert_keeps_outputs_in_eval(no_collectives):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                torch.nn.Conv2d(4, 5, 1), torch.nn.BatchNorm2d(5))
    _randomize(model[1], 1)
    _randomize(model[4], 2)
    model.eval()
    x = torch.randn(2, 3, 6, 5)
    expected = model(x)
    SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(model[1]) is SyncBatchNorm
    assert_close("converted output", model(x), to_np64(expected), torch.float32)


def test_module_is_copyable_and_picklable():
    m = SyncBatchNorm(4, activation="relu")
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(other) is SyncBatchNorm and other.activation == "relu"
        assert isinstance(other._count_check, GlobalCountCheck)
        assert all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), other.state_dict().values(),
                                                     strict=True))


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("activation,with_z", [(None, False), ("relu", True)])
def test_without_process_group_is_local_batch_norm(no_collectives, device, momentum, activation, with_z):
    """No torch.distributed group (or world size 1): plain local BatchNorm, no collective."""
    assert not (dist.is_available() and dist.is_initialized())
    c = 3
    m = SyncBatchNorm(c, momentum=momentum, activation=activation, device=device)
    _randomize(m, 3)
    m.num_batches_tracked.zero_()
    w, b = to_np64(m.weight), to_np64(m.bias)
    rm, rv, nbt = to_np64(m.running_mean), to_np64(m.running_var), 0
    g = torch.Generator().manual_seed(5)
    for _ in range(2):
        x = (torch.randn(3, c, 2, 3, generator=g) * 2 + 1).to(device).requires_grad_(True)
        z = torch.randn(3, c, 2, 3, generator=g).to(device).requires_grad_(True) if with_z else None
        dy = torch.randn(3, c, 2, 3, generator=g).to(device)
        m.zero_grad(set_to_none=True)
        m(x, z=z).backward(dy)
        fwd = ref.batch_norm_forward(to_np64(x), w, b, rm, rv, training=True, momentum=momentum, eps=1e-5,
                                     activation=activation, z=to_np64(z) if with_z else None, num_batches_tracked=nbt)
        dx, dw, db, dz = ref.batch_norm_backward(to_np64(dy), to_np64(x), w, fwd, training=True,
                                                 activation=activation, has_z=with_z)
        rm, rv, nbt = fwd.new_running_mean, fwd.new_running_var, fwd.new_num_batches_tracked
        assert_close("dx", x.grad, dx, torch.float32)
        assert_close("dweight", m.weight.grad, dw, torch.float32, param_grad=True)
        assert_close("dbias", m.bias.grad, db, torch.float32, param_grad=True)
        if with_z:
            assert_close("dz", z.grad, dz, torch.float32)
        assert_close("running_mean", m.running_mean, rm, torch.float32)
        assert_close("running_var", m.running_var, rv, torch.float32)
        assert int(m.num_batches_tracked) == nbt
    m.eval()
    x = torch.randn(4, c, 2, 2, generator=g).to(device)
    fwd = ref.batch_norm_forward(to_np64(x), w, b, rm, rv, training=False, momentum=momentum, eps=1e-5,
                                 activation=activation, z=to_np64(x) if with_z else None)
    assert_close("eval y", m(x, z=x if with_z else None), fwd.y, torch.float32)


def test_one_value_per_channel_without_group_raises(device):
    m = SyncBatchNorm(3, device=device)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        m(torch.randn(1, 3, device=device))
    m.eval()
    assert m(torch.randn(1, 3, device=device)).shape == (1, 3)  # evaluation: fine


def test_global_count_check_on_host():
    chk = GlobalCountCheck()
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training, got input size"):
        chk.check_gathered(torch.empty(0, 3), torch.tensor([0.0, 1.0, 0.0]), 3)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        chk.check_gathered(torch.empty(1, 3), torch.tensor([1.0, 0.0]), 2)
    chk.check_gathered(torch.empty(1, 3), torch.tensor([1.0, 1.0]), 2)  # 2 values in total: fine
    chk.check_gathered(torch.empty(0, 3), torch.tensor([0.0, 0.0]), 2)  # empty everywhere: fine (no-op step)
    chk.check_gathered(torch.empty(4, 3), torch.tensor([4.0, 0.0]), 2)  # local count >= 2 never checks
    chk.raise_pending()


@pytest.mark.parametrize("bad,err,match", [
    (lambda m: m(torch.randn(4)), ValueError, "expected at least 2D input"),
    (lambda m: m(torch.randn(2, 5, 3)), ValueError, "num_features=4"),
    (lambda m: m(torch.randn(2, 0, 3)), ValueError, "input channels should be non-zero"),
    (lambda m: m(torch.randint(0, 3, (2, 4, 3))), TypeError, "input must have a floating dtype"),
    (lambda m: m(torch.randn(2, 4, 3), z=torch.randn(2, 4)), ValueError, "z must have the input's shape"),
    (lambda m: m(torch.randn(2, 4, 3), z=torch.randn(2, 4, 3).to(torch.int32)), TypeError, "z must have"),
])
def test_bad_input_raises_naming_the_argument(bad, err, match):
    with pytest.raises(err, match=match):
        bad(SyncBatchNorm(4))


@pytest.mark.parametrize("kwargs,err,match", [
    (dict(num_features=0), ValueError, "num_features"),
    (dict(num_features=3, activation="gelu"), ValueError, "activation"),
    (dict(num_features=3, momentum=1.5), ValueError, "momentum"),
    (dict(num_features=3, eps=-1.0), ValueError, "eps"),
])
def test_bad_constructor_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        SyncBatchNorm(**kwargs)


def test_exported():
    assert fastnorm.nn.SyncBatchNorm is SyncBatchNorm


def test_convert_model_sync_keeps_fastnorm_options(no_collectives):
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(3), fastnorm.nn.BatchNorm2d(3, activation="relu"),
                                torch.nn.Sequential(fastnorm.nn.BatchNorm1d(3, momentum=None)))
    _randomize(model).eval()
    x = torch.randn(2, 3, 4, 4)
    expected = model[1](model[0](x))
    params = [id(p) for p in model.parameters()]
    out = fastnorm.convert_model(model, sync=True, process_group=None)
    assert out is model
    assert [type(m) for m in (model[0], model[1], model[2][0])] == [SyncBatchNorm] * 3
    assert model[1].activation == "relu" and model[0].activation is None and model[2][0].momentum is None
    assert [id(p) for p in model.parameters()] == params
    assert_close("converted output", model[1](model[0](x)), to_np64(expected), torch.float32)


@pytest.mark.parametrize("channels_last", [False, True])
def test_packed_stats_write_into_a_given_row(device, channels_last):
    """The symmetric-memory exchange has the statistics launch write straight into a row of the gather buffer:
    the same values as a fresh tensor, nothing else in the buffer touched."""
    from fastnorm.ops import batch_norm as bn

    c, rows, width = 5, 3, 12
    x = (torch.randn(4, c, 3, 7, device=device) * 3 + 2)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    poison = -777.0
    buf = torch.full((rows, width), poison, device=device)
    written = bn._local_stats(x, c, out=buf[1, :2 * c + 1])
    fresh = bn._local_stats(x, c)
    assert written.data_ptr() == buf[1].data_ptr()
    assert torch.equal(buf[1, :2 * c + 1], fresh)
    assert (buf[0] == poison).all() and (buf[2] == poison).all() and (buf[1, 2 * c + 1:] == poison).all()

    empty = x[:0]
    assert torch.equal(bn._local_stats(empty, c, out=buf[2, :2 * c + 1]), torch.zeros(2 * c + 1, device=device))


def test_symmetric_exchange_only_for_cuda_and_auto(monkeypatch):
    """CPU tensors (gloo) and FASTNORM_SYNCBN_EXCHANGE=collective never use symmetric memory, without any
    collective; a wrong value of the variable is a ValueError naming it."""
    from fastnorm import _symm_exchange as ex

    class Group:
        group_name = "test-group"

    x = torch.randn(4, 3)
    for name in COLLECTIVES:
        if hasattr(dist, name):
            monkeypatch.setattr(dist, name, lambda *a, **k: pytest.fail("collective called"))
    monkeypatch.delenv(ex.ENV, raising=False)
    assert ex.exchange_slot(Group(), x, 3) is None
    monkeypatch.setenv(ex.ENV, "collective")
    assert ex.exchange_slot(Group(), x, 3) is None
    monkeypatch.setenv(ex.ENV, "nvlink")
    with pytest.raises(ValueError, match="FASTNORM_SYNCBN_EXCHANGE"):
        ex._mode()
    assert not ex.uses_symmetric_memory(Group(), torch.device("cpu"))


def _flags(peers, kind: int):
    """One rank's flags of one exchange kind: ready[R], done[R], epoch, start, arrive, collected."""
    f, r = peers.flags, peers.world
    return (f[kind * r:(kind + 1) * r].tolist(), f[2 * r + kind * r:2 * r + (kind + 1) * r].tolist(),
            int(f[4 * r + kind]), int(f[4 * r + 2 + kind]), int(f[4 * r + 4 + kind]), int(f[4 * r + 6 + kind]))


def _peers_have_spoken(bufs, peers, rank: int, kind: int, epoch: int) -> None:
    """What the other ranks would have written into ``rank``'s flags by the time its launch of ``epoch``
    waits: their data is in place (ready) and they have read ``rank``'s (done)."""
    f, r = peers[rank].flags, peers[rank].world
    for p in range(r):
        if p != rank:
            f[kind * r + p] = epoch
            f[2 * r + kind * r + p] = epoch


@pytest.mark.parametrize("c,world", [(5, 3), (129, 2)])
def test_peer_apply_merges_every_rank_and_keeps_the_handshake(device, c, world, monkeypatch):
    """The forward exchange through symmetric buffers (simulated in one process; the launch runs with the
    peers' flags already set): the apply launch's merge equals the gathered-rows merge bitwise, running
    statistics included, and so does y, over two epochs (the second with an empty local batch, which still
    takes part); the launch tells every peer its data is ready and read, marks the epoch done, and resets its
    counters. The first program merges 4 channels a step here (several steps, the last ragged)."""
    from fastnorm.kernels import config
    from fastnorm.ops import batch_norm as bn

    monkeypatch.setattr(config, "BN_PEER_SUM_BLOCK", 4)
    bufs, peers = peer_buffers(c, world, device)
    rank = world - 1
    w, b = torch.rand(c, device=device) + 0.5, torch.randn(c, device=device)
    rm_peer, rv_peer = torch.randn(c, device=device), torch.rand(c, device=device) + 0.5
    rm_rows, rv_rows = rm_peer.clone(), rv_peer.clone()
    for epoch in (1, 2):
        rows, xs = [], []
        for r in range(world):
            n = 0 if (r == rank and epoch == 2) or (r == 0 and epoch == 1) else 3 + r  # empty shards
            xs.append(torch.randn(n, c, 4, device=device) * (r + 1) + r)
            rows.append(bn._local_stats(xs[-1], c, out=bufs[r][:2 * c + 1]).clone())
        gathered = torch.stack(rows)
        count, mean, _, invstd = bn._merge_stats(gathered[:, 2 * c], gathered[:, :c], gathered[:, c:2 * c], 1e-5,
                                                 (rm_rows, rv_rows, 0.1, None))
        want_y = bn._apply(xs[rank], mean, invstd, w, b, None, True)
        _peers_have_spoken(bufs, peers, rank, 0, epoch)
        y, got_count, got_mean, got_invstd = bn._apply_peers(xs[rank], peers[rank], w, b, None, True, 1e-5,
                                                             (rm_peer, rv_peer, 0.1, None))
        assert torch.equal(got_count, count) and torch.equal(got_mean, mean) and torch.equal(got_invstd, invstd)
        assert torch.equal(y, want_y) and y.shape == xs[rank].shape
        assert torch.equal(rm_peer, rm_rows) and torch.equal(rv_peer, rv_rows)
        assert _flags(peers[rank], 0)[2:] == (epoch, 0, 0, epoch)  # epoch complete, counters reset, collected
        for p in range(world - 1):
            ready, done, *_ = _flags(peers[p], 0)
            assert ready[rank] == epoch and done[rank] == epoch
        assert _flags(peers[rank], 1) == ([0] * world, [0] * world, 0, 0, 0, 0)  # the other kind untouched


@pytest.mark.parametrize("channels_last,relu", [(False, False), (True, True)])
def test_peer_backward_adds_every_ranks_sums_in_one_launch(device, channels_last, relu, monkeypatch):
    """The backward exchange in one launch (peers simulated in one process, their sums and flags in place
    before the launch): the launch writes this rank's sums into its buffer's half of the epoch (and dw, db: the
    same local sums), adds the R ranks' in rank order (4 channels a step here) and computes dx and dz from them
    — bitwise what the dx kernel computes from the same total. Three epochs alternate the halves (the stale half
    is NaN and must not be read); the third has an empty local batch, which still takes part. The channels are
    cut into several groups here (the launch exchanges once, after its last group)."""
    from fastnorm.kernels import batch_norm as K
    from fastnorm.kernels import config
    from fastnorm.ops import batch_norm as bn

    monkeypatch.setattr(config, "BN_PEER_SUM_BLOCK", 4)
    monkeypatch.setattr(config, "BN_ITEM", {"fused": 32, "stream": 32})
    monkeypatch.setattr(config, "BN_TILE", {"fwd": 16, "bwd": 16, "sums": 16})
    monkeypatch.setattr(config, "BN_GROUP_BYTES", 256)
    channels_last_blocks(monkeypatch, 2)
    c, world, rank = 6, 3, 1
    bufs, peers = peer_buffers(c, world, device)
    sums_at = peers[0].sums_at
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = (torch.randn(3, c, 4, 5, device=device) * 2 + 1).contiguous(memory_format=fmt)
    dy = torch.randn_like(x)
    y = torch.randn_like(x)  # the forward's output, for the ReLU mask
    xv = K.view(x)
    assert K._plan(xv, 12, "fused", "bwd").groups > 1
    mean, invstd = torch.randn(c, device=device), torch.rand(c, device=device) + 0.5
    w = torch.rand(c, device=device) + 0.5
    count = torch.tensor(37.0, device=device)
    for epoch in (1, 2, 3):
        half, stale = sums_at + (epoch % 2) * 2 * c, sums_at + ((epoch + 1) % 2) * 2 * c
        for r in range(world):
            if r != rank:
                bufs[r][half:half + 2 * c] = torch.randn(2 * c, device=device) * 10
                bufs[r][stale:stale + 2 * c] = float("nan")
        _peers_have_spoken(bufs, peers, rank, 1, epoch)
        xe, dye, ye = (t[:0] for t in (x, dy, y)) if epoch == 3 else (x, dy, y)
        dw, db = torch.empty(c, device=device), torch.empty(c, device=device)
        dx, dz, total = bn._backward_peers(dye, xe, mean, invstd, w, count, ye if relu else None, relu, True, dw,
                                           db, peers[rank])
        assert torch.equal(bufs[rank][half:half + 2 * c], torch.cat((db, dw)))
        want_total = torch.zeros(2 * c, device=device)
        for r in range(world):
            want_total = want_total + bufs[r][half:half + 2 * c]
        assert torch.equal(total, want_total)
        want_dx, want_dz = bn._backward_dx(dye, xe, mean, invstd, w, want_total, count, ye if relu else None,
                                           relu, True)
        assert torch.equal(dx, want_dx) and dx.shape == xe.shape
        assert torch.equal(dz, want_dz) if relu else dz is dye
        local = bn._backward_sums(dye, xe, mean, invstd, ye if relu else None, relu)
        assert_close("local sums", torch.cat((db, dw)), to_np64(local), torch.float32)
        assert _flags(peers[rank], 1)[2:] == (epoch, 0, 0, epoch)  # epoch complete, counters reset, released
        assert all(_flags(peers[p], 1)[0][rank] == epoch for p in range(world) if p != rank)  # peers told
        assert _flags(peers[rank], 0) == ([0] * world, [0] * world, 0, 0, 0, 0)  # the forward's untouched


def test_symmetric_exchange_is_set_up_once_per_group_object(monkeypatch):
    """The per-group decision is made at the group's first training call and kept; a new group object under
    an old name (after destroy_process_group and a new init) is set up afresh, never given the old buffers."""
    from types import SimpleNamespace

    from fastnorm import _symm_exchange as ex

    made = []

    class Exchange:
        failed = False

        def slot(self, c):
            return ("slot", c, self)

    def create(group, device):
        made.append(group)
        return Exchange() if group.usable else None

    monkeypatch.setattr(ex, "_create", create)
    monkeypatch.setattr(ex, "_GROUPS", {})
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    monkeypatch.delenv(ex.ENV, raising=False)
    x = SimpleNamespace(device=SimpleNamespace(type="cuda", index=0), dtype=torch.bfloat16)
    old = SimpleNamespace(group_name="0", usable=True)
    first = ex.exchange_slot(old, x, 8)
    assert first[:2] == ("slot", 8) and ex.exchange_slot(old, x, 16)[2] is first[2] and made == [old]
    assert ex.uses_symmetric_memory(old, x.device)
    new = SimpleNamespace(group_name="0", usable=False)
    assert ex.exchange_slot(new, x, 8) is None and made == [old, new]
    assert not ex.uses_symmetric_memory(new, x.device) and not ex.uses_symmetric_memory(old, x.device)
    x64 = SimpleNamespace(device=x.device, dtype=torch.float64)
    assert ex.exchange_slot(old, x64, 8) is None and made == [old, new]  # fp64: collectives, no set-up
