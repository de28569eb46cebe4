"""Replayed eager launches (``kernels._replay``): a replayed call passes the C launch functions the same arguments
as the full call would, with its own tensors' addresses, and falls back to the full call where it must.

The launches are stubbed (a stand-in compiled kernel logs what its C launch function is given), so this runs on
the CPU without the interpreter; that the kernels compute the right thing when replayed is checked on CUDA by
``test_batch_norm.py::test_replayed_calls_match_the_reference`` and its LayerNorm twin.
"""

from __future__ import annotations

import functools

import pytest
import torch

import launch_stubs
from fastnorm.kernels import _replay, config
from fastnorm.kernels import batch_norm as KB
from fastnorm.kernels import layer_norm as KL
from fastnorm.ops import batch_norm as OB
from fastnorm.ops import layer_norm as OL
from helpers import frozen_flat_everywhere, peer_buffers
from launch_stubs import stub_launches


@pytest.fixture
def launches(monkeypatch):
    """The C launches made, as (kernel, grid, stream, arguments); CPU tensors take the kernels' path."""
    log: list = []
    counters = torch.zeros(1 << 14, dtype=torch.int32)
    stub_launches(functools.partial(monkeypatch.setattr, raising=False), log, counters)
    monkeypatch.setattr(_Noted, "scratch", set())
    made: list = []  # every scratch buffer held to the test's end: an output made later cannot take its address

    def noted(t, keep=False):
        made.append(t)
        _Noted.scratch.add(t.data_ptr())
        return _replay.scratch(t, keep=keep)

    for mod in (KB, KL):
        monkeypatch.setattr(mod, "scratch", noted)
    monkeypatch.setattr(KB, "_zeroed_counters", lambda n, device: noted(counters, keep=True))
    monkeypatch.setattr(_Noted, "counters", counters.data_ptr())
    return log


class _Noted:
    """What the ``launches`` fixture saw made in the current test: the addresses of the scratch buffers, and of
    the zeroed counters every launch on the stream shares."""

    scratch: set[int] = set()
    counters: int | None = None


def _labelled(log, inputs, outputs, scratch_at=None):
    """The launches with each address named by what it points at: an input, an output, or a scratch buffer
    (numbered in order of first use). Scratch addresses are those made in the test, or those at the positions
    ``scratch_at`` (which a replay fills with its own buffers); -> (labelled launches, the positions of scratch)."""
    names = {_Noted.counters: "counters"}
    for kind, ts in (("in", inputs), ("out", outputs)):
        for j, t in enumerate(ts):
            if isinstance(t, torch.Tensor) and t.numel():
                names.setdefault(t.data_ptr(), (kind, j))
    order: dict[int, int] = {}
    found = set()
    out = []
    for i, (k, grid, stream, args) in enumerate(log):
        labels = []
        for p, a in enumerate(args):
            if type(a) is int and a in names:
                labels.append(names[a])
            elif type(a) is int and ((i, p) in scratch_at if scratch_at is not None else a in _Noted.scratch):
                found.add((i, p))
                labels.append(("scratch", order.setdefault(a, len(order))))
            else:
                labels.append(a)
        out.append((k, grid, stream, tuple(labels)))
    return out, found


def _same_launches(replayed_log, full_log, inputs, replayed_out, full_out):
    full, scratch_at = _labelled(full_log, inputs, full_out)
    replayed, _ = _labelled(replayed_log, inputs, replayed_out, scratch_at)
    assert replayed == full and replayed


def _replay_matches_full_call(launches, counted, call, full, inputs):
    """``call()`` three times (the first compiles, the second is recorded): the third is replayed (``counted``, the
    calls of a function of the full path, does not grow) and launches what ``full()`` (the full path, called on
    the same inputs) launches; -> the third call's outputs."""
    for _ in range(2):
        call()
    before = len(counted)
    del launches[:]
    out = call()
    assert len(counted) == before, "the third call was not replayed"
    replayed = list(launches)
    del launches[:]
    expected = full(out)
    assert [t if t is None else (t.shape, t.stride(), t.dtype) for t in out] == [
        t if t is None else (t.shape, t.stride(), t.dtype) for t in expected]
    _same_launches(replayed, launches, inputs(out), out, expected)
    return out


def _counting(monkeypatch, owner, name):
    calls = []
    fn = getattr(owner, name)

    def counted(*a, **k):
        calls.append(1)
        return fn(*a, **k)
    monkeypatch.setattr(owner, name, counted)
    return calls


def _bn_inputs(shape=(4, 6, 5, 3), dtype=torch.bfloat16, cl=False, affine=True, z=False, running=True, nbt=False):
    """(x, weight, bias, z, running_mean, running_var, num_batches_tracked) as ``_forward_impl`` takes them."""
    g = torch.Generator().manual_seed(5)
    fmt = torch.channels_last if cl else torch.contiguous_format
    x = torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt)
    c = shape[1]
    w = torch.rand(c, generator=g) + 0.5 if affine else None
    b = torch.randn(c, generator=g) if affine else None
    zt = torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt) if z else None
    rm, rv = (torch.zeros(c), torch.ones(c)) if running else (None, None)
    return x, w, b, zt, rm, rv, torch.tensor(3, dtype=torch.long) if nbt else None


#: input options, then ``_forward_impl``'s (batch_stats, update, momentum, eps, fix_gamma, relu)
_BN_FWD_CASES = {
    "train": ({}, (True, True, 0.1, 1e-5, False, False)),
    "train, momentum None": (dict(nbt=True), (True, True, None, 1e-5, False, False)),
    "train, relu, z, channels-last": (dict(cl=True, z=True), (True, True, 0.1, 1e-5, False, True)),
    "batch statistics, no running": (dict(running=False), (True, False, 0.1, 1e-3, True, False)),
    "eval": ({}, (False, False, 0.1, 1e-5, False, False)),
    "eval, no affine, fp32, channels-last": (dict(cl=True, affine=False, dtype=torch.float32),
                                             (False, False, 0.1, 1e-5, False, True)),
    "train, large": (dict(shape=(2, 8, 150, 150)), (True, True, 0.1, 1e-5, False, False)),
}


@pytest.mark.parametrize("resident", [True, False])
@pytest.mark.parametrize("case", list(_BN_FWD_CASES))
def test_batch_norm_forward_replays_the_same_launches(launches, monkeypatch, case, resident):
    monkeypatch.setattr(config, "BN_RESIDENT", resident)
    spec, options = _BN_FWD_CASES[case]
    inputs = _bn_inputs(**spec)
    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"),
                              lambda: OB._forward_impl(*inputs, *options),
                              lambda out: OB._forward_triton(*inputs, *options), lambda out: inputs)


@pytest.mark.parametrize("case", ["train", "train, relu, z, channels-last", "eval",
                                  "eval, no affine, fp32, channels-last"])
def test_batch_norm_flat_apply_replays(launches, monkeypatch, case):
    """The one-pass forward through the flat kernel (its threshold lowered to 0; the training forward in two launches)
    records and replays like the tiled one: the same launches, the saved statistics returned as outputs its launch
    wrote. bf16 channels-last keeps the tiled kernel (the rule), so that case checks the rule's path too."""
    monkeypatch.setattr(config, "BN_APPLY_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_RESIDENT", False)
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    spec, options = _BN_FWD_CASES[case]
    inputs = _bn_inputs(**spec)
    flat = _counting(monkeypatch, KB, "_apply_flat_pass")
    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"),
                              lambda: OB._forward_impl(*inputs, *options),
                              lambda out: OB._forward_triton(*inputs, *options), lambda out: inputs)
    takes_flat = not (spec.get("cl") and spec.get("dtype", torch.bfloat16) == torch.bfloat16)
    assert bool(flat) == takes_flat, (case, flat)
    assert ("_bn_apply_flat_kernel" in [name for name, *_ in launches]) == takes_flat


@pytest.mark.parametrize("mode", ["train", "train relu dz", "frozen", "sums only", "train two launches"])
def test_batch_norm_backward_replays_the_same_launches(launches, monkeypatch, mode):
    if mode == "train two launches":
        monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    x, w, b, z, rm, rv, _ = _bn_inputs()
    relu = "relu" in mode
    y, shift, mrel, rstd = OB._forward_impl(x, w, b, z, rm, rv, None, mode != "frozen", mode != "frozen", 0.1, 1e-5,
                                            False, relu)
    dy = torch.randn_like(x)
    need = (mode != "sums only", True, True, "dz" in mode)
    args = (dy, x, y if relu else None, w, shift, mrel, rstd, mode != "frozen", False, relu, *need,
            torch.float32, torch.float32)

    def inputs(out):  # the replayed call's inputs, its parameter gradients among them
        return x, dy, args[2], w, shift, mrel, rstd, out[1], out[2]

    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"), lambda: OB._backward_impl(*args),
                              lambda out: OB._backward_triton(*inputs(out), mode != "frozen", False, relu, need[0],
                                                              need[3] and relu), inputs)


@pytest.mark.parametrize("mode", ["train two launches", "frozen dx alone"])
def test_batch_norm_flat_dx_replays(launches, monkeypatch, mode):
    """The dx pass through the flat kernel (its threshold lowered to 0): the two-launch training backward and the
    frozen backward with dx alone record and replay like the tiled one."""
    monkeypatch.setattr(config, "BN_DX_FLAT", (0, 64, 2, 256))
    monkeypatch.setattr(config, "BN_TRAIN_FUSED", False)
    monkeypatch.setattr(config, "BN_RESIDENT_BACKWARD", False)  # (the single-read backward has no dx pass)
    x, w, b, z, rm, rv, _ = _bn_inputs()
    train = mode == "train two launches"
    y, shift, mrel, rstd = OB._forward_impl(x, w, b, z, rm, rv, None, train, train, 0.1, 1e-5, False, False)
    dy = torch.randn_like(x)
    args = (dy, x, None, w, shift, mrel, rstd, train, False, False, True, train, train, False, torch.float32,
            torch.float32)

    def inputs(out):  # the replayed call's inputs, its parameter gradients (training) among them
        return x, dy, None, w, shift, mrel, rstd, out[1], out[2]

    flat = _counting(monkeypatch, KB, "_dx_flat_pass")
    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"), lambda: OB._backward_impl(*args),
                              lambda out: OB._backward_triton(*inputs(out), train, False, False, True, False), inputs)
    assert flat and "_bn_bwd_dx_flat_kernel" in [name for name, *_ in launches]


def test_batch_norm_frozen_flat_replays(launches, monkeypatch):
    """The frozen backward with dγ, dβ (evaluation, or a frozen step) through the image-strided flat kernel and its
    sums launch (BN_FROZEN_FLAT's threshold lowered to 0; its partial sums scratch to the recording) records and
    replays like the tiled one."""
    monkeypatch.setattr(config, "BN_FROZEN_FLAT", frozen_flat_everywhere())
    x, w, b, z, rm, rv, _ = _bn_inputs()
    y, shift, mrel, rstd = OB._forward_impl(x, w, b, None, rm, rv, None, False, False, 0.1, 1e-5, False, False)
    dy = torch.randn_like(x)
    args = (dy, x, None, w, shift, mrel, rstd, False, False, False, True, True, True, False, torch.float32,
            torch.float32)

    def inputs(out):  # the replayed call's inputs, its parameter gradients among them
        return x, dy, None, w, shift, mrel, rstd, out[1], out[2]

    flat = _counting(monkeypatch, KB, "_frozen_flat_pass")
    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"), lambda: OB._backward_impl(*args),
                              lambda out: OB._backward_triton(*inputs(out), False, False, False, True, False), inputs)
    names = [name for name, *_ in launches]
    assert flat and "_bn_bwd_frozen_flat_kernel" in names and "_bn_frozen_sums_kernel" in names


def test_batch_norm_not_replayed_where_it_must_not_be(launches, monkeypatch):
    x, w, b, z, rm, rv, _ = _bn_inputs()
    options = (True, True, 0.1, 1e-5, False, False)
    views = _counting(monkeypatch, KB, "view")

    def calls(*inputs):
        before = len(views)
        OB._forward_impl(*inputs, *options)
        return len(views) - before

    for _ in range(3):
        calls(x, w, b, None, rm, rv, None)
    assert calls(x, w, b, None, rm, rv, None) == 0
    # An input 2 bytes past the 16-byte alignment the kernels were compiled for.
    shifted = torch.empty(x.numel() + 1, dtype=x.dtype)[1:].view(x.shape).copy_(x)
    assert calls(shifted, w, b, None, rm, rv, None) == 1
    # A new launch heuristic: the programs made under the old one are dropped.
    monkeypatch.setattr(config, "BN_LAG", config.BN_LAG)
    assert calls(x, w, b, None, rm, rv, None) == 1
    # An input read through a copy (non-dense strides): recorded as not replayable, then always the full call.
    xt = x.transpose(2, 3)
    assert [calls(xt, w, b, None, rm, rv, None) for _ in range(4)] == [1, 1, 1, 1]
    # z in another layout than x: the kernels read a copy of it, made anew by each call.
    zc = torch.randn_like(x).contiguous(memory_format=torch.channels_last)
    assert [calls(x, w, b, zc, rm, rv, None) for _ in range(4)] == [1, 1, 1, 1]
    # One tensor in two positions (z is x): a program of its own, which calls with two tensors do not take.
    assert [calls(x, w, b, x, rm, rv, None) for _ in range(3)] == [1, 0, 0]  # recorded at once: kernels compiled
    z2 = torch.randn_like(x)
    assert [calls(x, w, b, z2, rm, rv, None) for _ in range(3)] == [1, 0, 0]
    assert calls(x, w, b, x, rm, rv, None) == 0
    # Replayed with z a view of x (the same addresses as the full call's); but recorded so, not replayable (a later
    # call may pass two tensors apart).
    assert calls(x, w, b, x.view(x.shape), rm, rv, None) == 0
    x2, *_ = _bn_inputs(shape=(3, 6, 5, 3))
    assert [calls(x2, w, b, x2.view(x2.shape), rm, rv, None) for _ in range(3)] == [1, 1, 1]
    # Another stream: its own program.
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda index: 8, raising=False)
    assert [calls(x, w, b, None, rm, rv, None) for _ in range(2)] == [1, 0]
    # CUDA-graph capture: never replayed (a captured launch needs counters of its own).
    monkeypatch.setattr(torch._C, "_cuda_isCurrentStreamCapturing", lambda: True, raising=False)
    assert calls(x, w, b, None, rm, rv, None) == 1


def _peers(c: int):
    """Rank 1 of 3's symmetric buffer and ``Peers`` (``helpers.peer_buffers``; the stubbed launches read nothing)."""
    bufs, peers = peer_buffers(c, 3, "cpu")
    return bufs[1], peers[1]


#: input options, then (momentum, relu) of SyncBatchNorm's forward
_PEER_FWD_CASES = {
    "train": ({}, (0.1, False)),
    "relu, z, channels-last, momentum None": (dict(cl=True, z=True, nbt=True), (None, True)),
    "no running statistics, no affine, fp32": (dict(running=False, affine=False, dtype=torch.float32), (0.1, False)),
}


@pytest.mark.parametrize("case", list(_PEER_FWD_CASES))
def test_sync_batch_norm_peer_forward_replays(launches, monkeypatch, case):
    """SyncBatchNorm's forward through the symmetric-memory exchange (this rank's statistics into its buffer's row,
    then the apply launch that merges every rank's) replays the launches of its full call; the variance the apply
    launch writes is scratch (not returned), the buffers and the running statistics are inputs."""
    spec, (momentum, relu) = _PEER_FWD_CASES[case]
    x, w, b, z, rm, rv, nbt = _bn_inputs(**spec)
    c = x.shape[1]
    buf, peers = _peers(c)
    row = buf[:2 * c + 1]
    running = None if rm is None else (rm, rv, momentum, nbt)

    def full(out):
        OB._local_stats(x, c, out=row)
        return OB._apply_peers(x, peers, w, b, z, relu, 1e-5, running)

    _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"),
                              lambda: OB._forward_peers(x, w, b, z, running, row, peers, relu, 1e-5), full,
                              lambda out: (x, w, b, z, rm, rv, nbt, row, peers.ptrs, peers.flags))


@pytest.mark.parametrize("relu", [False, True])
def test_sync_batch_norm_peer_backward_replays(launches, monkeypatch, relu):
    """SyncBatchNorm's one-launch backward (sums, their exchange, dx) replays the launch of its full call; dz is
    dy itself without the ReLU (an input returned), the kernel's dz with it."""
    x, w, *_ = _bn_inputs(cl=relu)
    c = x.shape[1]
    _, peers = _peers(c)
    dy = torch.randn_like(x)
    y = torch.randn_like(x) if relu else None
    mean, invstd, count = torch.randn(c), torch.rand(c) + 0.5, torch.tensor(37.0)
    dw, db = torch.empty(c), torch.empty(c)
    args = (dy, x, mean, invstd, w, count, y, relu, True, dw, db, peers)
    out = _replay_matches_full_call(launches, _counting(monkeypatch, KB, "view"),
                                    lambda: OB._backward_peers_dx(*args), lambda out: OB._backward_peers(*args)[:2],
                                    lambda out: (x, dy, y, w, mean, invstd, count, dw, db, peers.ptrs, peers.flags))
    assert (out[1] is dy) != relu


def test_sync_batch_norm_peer_calls_of_an_empty_batch_are_not_replayed(launches, monkeypatch):
    """An empty shard still takes part in the exchange, but its statistics row is zeroed by a torch op, which a
    replay would not repeat: every such call takes the full path."""
    x, w, b, _, rm, rv, _ = _bn_inputs(shape=(0, 6, 5, 3))
    buf, peers = _peers(6)
    views = _counting(monkeypatch, KB, "view")
    for _ in range(3):
        OB._forward_peers(x, w, b, None, (rm, rv, 0.1, None), buf[:13], peers, False, 1e-5)
    assert len(views) == 3  # each call's apply launch views x (the statistics of an empty x are a zeroing)


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("is_rms", [False, True])
def test_norm_replays_the_same_launches(launches, monkeypatch, is_rms, residual):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 40, generator=g).to(torch.bfloat16)  # 3-D: the kernels read a (6, 40) view of it
    w = torch.randn(40, generator=g)
    b = None if is_rms else torch.randn(40, generator=g)
    r = torch.randn(2, 3, 40, generator=g).to(torch.bfloat16) if residual else None
    rdt = torch.float32 if residual else None
    fwd_args = (x, w, b, r, 1, 1e-5, 0.0, is_rms, rdt, True, False)
    rows = _counting(monkeypatch, KL, "as_rows")
    out = _replay_matches_full_call(launches, rows, lambda: OL._forward(*fwd_args),
                                    lambda out: OL._forward_rows(x, w, b, r, 40, 1e-5, 0.0, is_rms, rdt, True, False),
                                    lambda out: (x, w, b, r))

    y, res_out, mean, rstd = out
    s = res_out if residual else x
    dy = torch.randn_like(x)
    dres = torch.randn(s.shape, dtype=s.dtype) if residual else None
    bwd_args = (dy, dres, s, w, mean, rstd, 1, 1e-5, 0.0, is_rms, None if is_rms else torch.float32, x.dtype,
                x.dtype if residual else None, False)
    inputs = (s, dy, dres, w, mean, rstd)
    _replay_matches_full_call(launches, rows, lambda: OL._backward(*bwd_args),
                              lambda out: OL._backward_rows(*inputs, (40,), 1e-5, 0.0, is_rms, bwd_args[10], x.dtype,
                                                            bwd_args[12], False), lambda out: inputs)


def test_config_changes_count_and_clear_the_caches(monkeypatch):
    plan = config.batch_norm_plan(False, 64, 1024, 2, "stream", "fwd", 4, 0)
    assert config.batch_norm_plan.cache_info().currsize >= 1
    before = config.generation
    monkeypatch.setattr(config, "BN_LAG", config.BN_LAG)
    assert config.generation == before + 1
    assert config.batch_norm_plan.cache_info().currsize == 0
    assert config.batch_norm_plan(False, 64, 1024, 2, "stream", "fwd", 4, 0) == plan


def test_replay_holds_its_scratch_until_its_launches_are_queued(launches, monkeypatch):
    """A replay allocates its scratch in one buffer; freed before the last launch is queued, its memory could go to
    another thread's allocation on the stream, queued between the launches."""
    import weakref

    monkeypatch.setattr(config, "BN_RESIDENT", False)
    inputs = _bn_inputs(shape=(2, 8, 150, 150))
    options = (True, True, 0.1, 1e-5, False, False)
    freed, at_launch = [], []
    real_launch = launch_stubs._Runner.launch  # replays call the C launch function their program bound
    monkeypatch.setattr(launch_stubs._Runner, "launch", lambda self, *a: at_launch.append(len(freed)) or
                        real_launch(self, *a))
    for _ in range(2):
        OB._forward_impl(*inputs, *options)
    real_empty = torch.empty

    def empty(*a, **k):
        t = real_empty(*a, **k)
        if t.dtype == torch.uint8:  # the replay's scratch buffer
            weakref.finalize(t, freed.append, 1)
        return t

    monkeypatch.setattr(torch, "empty", empty)
    at_launch.clear()
    OB._forward_impl(*inputs, *options)
    assert at_launch == [0, 0] and freed == [1]


def test_program_source_edges():
    """A generated program with no outputs returns an empty tuple, and fresh scratch of zero bytes still gets its
    address (the start of an empty allocation); the arguments reach the C launch function in Triton's order."""
    calls = []

    class Entry:
        launch, function, cooperative, pdl, packed_metadata = staticmethod(lambda *a: calls.append(a)), 11, False, \
            False, (4, 1, 0)

    x = torch.zeros(8)
    source, names = _replay._program_source(x.device, [0], [0], [], [0], 0,
                                            [(Entry, 3, [("a", 0), ("w", 0), ("value", 7)], (5,))])
    program = _replay.Program(source, names, ())
    assert program.run((x,), 9) == ()
    ((grid, one, one_, stream, fn, coop, pdl, *rest),) = calls
    assert (grid, one, one_, stream, fn, coop, pdl) == (3, 1, 1, 9, 11, False, False)
    assert rest[:6] == [None, None, (4, 1, 0), None, None, None] and rest[6] == x.data_ptr()
    assert rest[8:] == [7, 5]
    assert program.run((x[1:],), 9) is None  # compiled as aligned: an unaligned address is not replayed


def test_config_deletions_count_too(monkeypatch):
    before = config.generation
    monkeypatch.setattr(config, "SOME_OVERRIDE", 1, raising=False)
    monkeypatch.undo()  # deletes the attribute again
    assert config.generation == before + 2 and not hasattr(config, "SOME_OVERRIDE")
