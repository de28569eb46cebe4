"""SyncBatchNorm's two exchanges through PyTorch's symmetric memory, inside fastnorm's own launches.

On one host whose GPUs can address each other's memory (NVLink or PCIe peer access), symmetric memory maps
every rank's buffer into every other rank's address space. SyncBatchNorm then needs no collective at all:

* forward: the statistics launch writes this rank's packed ``[mean (C) | M2 (C) | count]`` into its own
  buffer, and the apply launch reads all R ranks' packed statistics straight from their buffers, folds them
  with Chan's formula in rank order (the same merge as the collective path's, so every rank holds bitwise the
  same statistics), updates the running statistics and normalizes;
* backward: one launch computes this rank's ``[Σg | Σg·x̂]``, writes it into its buffer, adds the R ranks'
  sums in rank order once all of its own are in place, and computes dx from them.

So a training step of a synchronized layer makes no collective call and the launches of a local one
(statistics and apply in forward; one backward launch, where the local layer takes two).
A ProcessGroupNCCL collective costs the host several times a launch, and that was most of the eager
synchronization overhead.

The handshakes (``kernels.batch_norm``, "Peer exchange"): in the apply launch, the first program to start
tells every peer "my data of epoch e is in place", waits for all peers' word, and combines the R ranks' data
for the launch's other programs; no apply launch ends before every peer has said "I have read yours", so the
next statistics launch on the stream may overwrite this rank's row. The backward writes its sums into one of
two halves by the parity of its epoch, which makes that second handshake unnecessary there. Epochs live in
device memory, so a captured CUDA graph replays correctly. Within a device no spin waits on a program that
may not be resident; a wait for a peer that does not come (ranks out of step: a caller's bug, or a dead
rank) aborts the launch after ``config.BN_PEER_TIMEOUT_S`` (600 s, NCCL's default timeout) with a CUDA error.

Set-up: a buffer is zeroed and the device synchronized before the rendezvous releases the peers (so no
late zeroing can erase a peer's first flag); allocation and rendezvous success are agreed over the group,
and a failure on any rank turns the group to the collectives for good.

Buffers are allocated once per (process group, device, channel count), on the first training call that needs
them (a collective: every rank of the group makes the same calls in the same order, as SyncBatchNorm already
requires), and reused by every layer with that channel count. Calls are stream-ordered: two layers of one group
must not run concurrently on different streams (torch's collectives serialize them; these buffers do not).
Nothing is allocated while a CUDA graph is being captured: a call whose buffer does not exist yet uses the
torch.distributed collectives instead (every rank decides alike).

The exchange is used only when all of these hold, checked once per group (a few host-synchronizing
collectives, the first time a training call of the group runs outside graph capture):
``FASTNORM_SYNCBN_EXCHANGE`` is unset or ``auto`` (``collective`` uses torch.distributed's collectives; it is
read at every call, so it can be switched between steps, on every rank alike); CUDA tensors with float32
accumulation (fp32/fp16/bf16 input; fp64 uses the collectives); this torch has symmetric memory; every rank of
the group runs on this host, on a distinct GPU with peer access to all the others'. Every rank must agree, so
the result is all-reduced (minimum) over the group.
"""

from __future__ import annotations

import os
import socket
import warnings
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as _c10d  # setup collectives: not the per-step ones

from .kernels.batch_norm import Peers

__all__ = ["ENV", "Slot", "exchange_mode", "exchange_slot", "layout", "uses_symmetric_memory"]

ENV = "FASTNORM_SYNCBN_EXCHANGE"
_MODES = ("auto", "collective")

# (group name, device index) -> (the group object, its exchange or None when it cannot be used). A name can come
# back with another group after destroy_process_group and a new init: the object tells them apart.
_GROUPS: dict[tuple[str, int], tuple[object, _GroupExchange | None]] = {}


def _mode() -> str:
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in _MODES:
        raise ValueError(f"{ENV} must be one of {_MODES}, got {os.environ.get(ENV)!r}")
    return mode


@contextmanager
def exchange_mode(mode: str):
    """``FASTNORM_SYNCBN_EXCHANGE`` set to ``mode`` inside the block (every rank must do the same), then as
    it was."""
    old = os.environ.get(ENV)
    os.environ[ENV] = mode
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def _symmetric_memory():
    try:
        from torch.distributed import _symmetric_memory as symm_mem
    except ImportError:
        return None
    return symm_mem if hasattr(symm_mem, "empty") and hasattr(symm_mem, "rendezvous") else None


def layout(c: int, world: int) -> tuple[int, int, int]:
    """A buffer's layout in 4-byte words -> (sums at, flags at, total): the packed statistics at 0 (2C + 1),
    the backward sums in two halves (2 × 2C: even and odd epochs), then the int32 flags described in
    ``kernels.batch_norm`` (4R + 8)."""
    sums_at = -(-(2 * c + 1) // 4) * 4
    flags_at = sums_at + 4 * c
    return sums_at, flags_at, flags_at + 4 * world + 8


class Slot:
    """The symmetric buffer of one channel count: ``row`` (this rank's packed statistics, written by the
    statistics launch); the exchanges happen in the launches that receive ``stats_exchange()`` (apply) and
    ``sums_exchange()`` (the one-launch backward, which also writes this rank's sums)."""

    def __init__(self, buf: torch.Tensor, handle, rank: int, world: int, c: int):
        sums_at, flags_at, _ = layout(c, world)
        offset = buf.data_ptr() - handle.buffer_ptrs[rank]
        ptrs = torch.tensor([p + offset for p in handle.buffer_ptrs], dtype=torch.int64, device=buf.device)
        self.row = buf[:2 * c + 1]
        self.peers = Peers(ptrs, buf[flags_at:].view(torch.int32), rank, world, flags_at, sums_at)

    def stats_exchange(self) -> Peers:
        """The forward exchange's buffers, for the apply launch (which performs it)."""
        return self.peers

    def sums_exchange(self) -> Peers:
        """The backward exchange's buffers, for the one-launch backward (which performs it)."""
        return self.peers


def _all_ranks(ok: bool, group, device: torch.device) -> bool:
    """Whether ``ok`` holds on every rank of ``group`` (a set-up collective; synchronizes with the host)."""
    flag = torch.tensor([1 if ok else 0], dtype=torch.int32, device=device)
    _c10d.all_reduce(flag, op=dist.ReduceOp.MIN, group=group)
    return int(flag.item()) == 1


class _GroupExchange:
    def __init__(self, group, device: torch.device):
        self.group = group
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        self.device = device
        self.slots: dict[int, Slot] = {}
        self.failed = False  # a buffer could not be set up on some rank: collectives from then on

    def slot(self, c: int) -> Slot | None:
        s = self.slots.get(c)
        if s is None and not self.failed and not torch.cuda.is_current_stream_capturing():
            s = self._allocate(c)
            if s is None:
                self.failed = True
            else:
                self.slots[c] = s
        return s

    def _allocate(self, c: int) -> Slot | None:
        """A zeroed buffer for ``c`` channels on every rank, then the rendezvous; None (on every rank alike)
        when any rank could not. The zeroing must have run before any peer can write its first flag: the
        device is synchronized before the rendezvous, which releases the peers."""
        symm_mem = _symmetric_memory()
        name = self.group.group_name
        with torch.cuda.device(self.device):
            buf = None
            try:
                buf = symm_mem.empty(layout(c, self.world)[2], dtype=torch.float32, device=self.device)
                buf.zero_()
                torch.cuda.synchronize(self.device)
            except RuntimeError:
                buf = None
            if not _all_ranks(buf is not None, self.group, self.device):
                return None
            try:
                handle = symm_mem.rendezvous(buf, name)
            except RuntimeError:
                handle = None
            if not _all_ranks(handle is not None, self.group, self.device):
                return None
            return Slot(buf, handle, self.rank, self.world, c)


def _host_id() -> str:
    """This machine: its host name and, where readable, the running kernel's boot id (containers on different
    hosts may share a host name; they never share a boot id)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def _peers_reachable(group, device: torch.device) -> bool:
    """Every rank of ``group`` on this host, on distinct GPUs this one can access directly (a collective)."""
    world = dist.get_world_size(group)
    info: list = [None] * world
    _c10d.all_gather_object(info, (_host_id(), device.index), group=group)
    if any(host != info[0][0] for host, _ in info) or len({d for _, d in info}) != world:
        return False
    return all(torch.cuda.can_device_access_peer(device.index, d) for _, d in info if d != device.index)


def _create(group, device: torch.device) -> _GroupExchange | None:
    symm_mem = _symmetric_memory()
    with torch.cuda.device(device):
        ok = _peers_reachable(group, device) and symm_mem is not None  # the all-gather runs on every rank
        if ok:
            try:
                if not symm_mem.is_symm_mem_enabled_for_group(group.group_name):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FutureWarning)
                        symm_mem.enable_symm_mem_for_group(group.group_name)
            except (RuntimeError, AttributeError):
                ok = False
        return _GroupExchange(group, device) if _all_ranks(ok, group, device) else None


def exchange_slot(group, x: torch.Tensor, c: int) -> Slot | None:
    """The symmetric buffers for this training call, or None: use the torch.distributed collectives."""
    if x.device.type != "cuda" or x.dtype == torch.float64 or _mode() != "auto":
        return None
    key = (group.group_name, x.device.index)
    known = _GROUPS.get(key)
    if known is None or known[0] is not group:
        if torch.cuda.is_current_stream_capturing():
            return None
        known = _GROUPS[key] = (group, _create(group, x.device))
    ex = known[1]
    return None if ex is None else ex.slot(c)


def uses_symmetric_memory(group, device: torch.device) -> bool:
    """Whether training calls of ``group`` on ``device`` exchange through symmetric memory (decided at the
    group's first training call; False before it)."""
    known = _GROUPS.get((group.group_name, device.index))
    return known is not None and known[0] is group and known[1] is not None and not known[1].failed
