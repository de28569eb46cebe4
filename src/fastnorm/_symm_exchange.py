"""SyncBatchNorm's two exchanges through PyTorch's symmetric memory: one kernel launch instead of an NCCL call.

On one host whose GPUs can address each other's memory (NVLink or PCIe peer access), symmetric memory maps
every rank's buffer into every other rank's address space, and ``torch.ops.symm_mem.one_shot_all_reduce_out``
sums the R buffers in ONE kernel: a barrier through the peers' signal pads, each rank loads all R buffers and
writes their sum, and a second barrier, so no rank overwrites its buffer while a peer may still read it. Its
host cost is one dispatcher call; a ProcessGroupNCCL collective costs several times that on the host, which
at SyncBatchNorm's few-KB messages is most of the synchronization overhead of a step.

Both SyncBatchNorm exchanges use it, each with the same meaning as the collective it replaces:

* forward, all-gather: rank ``r`` writes its packed ``[mean (C) | M2 (C) | count]`` into row ``r`` of an
  ``[R, W]`` buffer (``W = 2C + 1`` rounded up to 4 floats) whose other rows it never writes and which was
  zeroed once. The sum over the ranks of these buffers is therefore every rank's row exactly (``v + 0 = v``):
  an all-gather, so the merge in rank order stays bitwise identical on every rank.
* backward, all-reduce: the packed ``[Σg | Σg·x̂]`` are summed as they are.

Buffers are allocated once per (process group, device, channel count), on the first training call that needs
them (a collective: every rank of the group makes the same calls in the same order, as SyncBatchNorm already
requires), and reused by every layer with that channel count. Calls are stream-ordered: two layers of one group
must not run concurrently on different streams (torch's collectives serialize them; these buffers do not).
Nothing is allocated while a CUDA graph is being captured: a call whose buffer does not exist yet uses the
torch.distributed collective instead (every rank decides alike).

The exchange is used only when all of these hold, checked once per group (a few host-synchronizing
collectives, the first time a training call of the group runs outside graph capture):
``FASTNORM_SYNCBN_EXCHANGE`` is unset or ``auto`` (``collective`` uses torch.distributed's collectives; it is
read at every call, so it can be switched between steps, on every rank alike); CUDA tensors
with float32 accumulation (fp32/fp16/bf16 input; fp64 uses the collective); this torch has symmetric memory's
one-shot all-reduce; every rank of the group runs on this host, on a distinct GPU with peer access to all the
others'. Every rank must agree, so the result is all-reduced (minimum) over the group.
"""

from __future__ import annotations

import os
import socket
import warnings

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as _c10d  # setup collectives: not the per-step ones

__all__ = ["ENV", "Slot", "exchange_slot", "one_shot_sum", "uses_symmetric_memory"]

ENV = "FASTNORM_SYNCBN_EXCHANGE"
_MODES = ("auto", "collective")

_GROUPS: dict[tuple[str, int], _GroupExchange | None] = {}


def _mode() -> str:
    mode = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if mode not in _MODES:
        raise ValueError(f"{ENV} must be one of {_MODES}, got {os.environ.get(ENV)!r}")
    return mode


def _one_shot_op():
    symm = getattr(torch.ops, "symm_mem", None)
    try:
        return symm.one_shot_all_reduce_out.default if symm is not None else None
    except (AttributeError, RuntimeError):
        return None


def one_shot_sum(inp: torch.Tensor, group_name: str, out: torch.Tensor) -> torch.Tensor:
    """``out`` = the sum over the group's ranks of their symmetric buffers ``inp`` (one kernel)."""
    return _one_shot_op()(inp, "sum", group_name, out)


class Slot:
    """The symmetric buffers of one channel count: ``row`` (this rank's row of the gather buffer) and
    ``sums_in`` (the backward sums), both written in place by the statistics/sums kernels."""

    def __init__(self, group_name: str, rank: int, world: int, c: int, device: torch.device):
        from torch.distributed import _symmetric_memory as symm_mem

        self.group_name = group_name
        width = -(-(2 * c + 1) // 4) * 4
        buf = symm_mem.empty(world * width + 2 * c, dtype=torch.float32, device=device)
        buf.zero_()
        symm_mem.rendezvous(buf, group_name)
        self.gather_in = buf[:world * width].view(world, width)
        self.row = self.gather_in[rank, :2 * c + 1]
        self.sums_in = buf[world * width:]

    def gather(self) -> torch.Tensor:
        """Every rank's row: a new ``[R, W]`` tensor (columns past ``2C + 1`` are zero)."""
        return one_shot_sum(self.gather_in, self.group_name, torch.empty_like(self.gather_in))

    def sum(self) -> torch.Tensor:
        """The sum over the ranks of ``sums_in``: a new ``[2C]`` tensor."""
        return one_shot_sum(self.sums_in, self.group_name, torch.empty_like(self.sums_in))


class _GroupExchange:
    def __init__(self, group, device: torch.device):
        self.group_name = group.group_name
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        self.device = device
        self.slots: dict[int, Slot] = {}

    def slot(self, c: int) -> Slot | None:
        s = self.slots.get(c)
        if s is None and not torch.cuda.is_current_stream_capturing():
            s = self.slots[c] = Slot(self.group_name, self.rank, self.world, c, self.device)
        return s


def _peers_reachable(group, device: torch.device) -> bool:
    """Every rank of ``group`` on this host, on distinct GPUs this one can access directly (a collective)."""
    world = dist.get_world_size(group)
    info: list = [None] * world
    _c10d.all_gather_object(info, (socket.gethostname(), device.index), group=group)
    if any(host != info[0][0] for host, _ in info) or len({d for _, d in info}) != world:
        return False
    return all(torch.cuda.can_device_access_peer(device.index, d) for _, d in info if d != device.index)


def _create(group, device: torch.device) -> _GroupExchange | None:
    ok = _one_shot_op() is not None and _peers_reachable(group, device)
    if ok:
        from torch.distributed import _symmetric_memory as symm_mem

        try:
            if not symm_mem.is_symm_mem_enabled_for_group(group.group_name):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    symm_mem.enable_symm_mem_for_group(group.group_name)
        except (RuntimeError, AttributeError):
            ok = False
    agree = torch.tensor([1 if ok else 0], dtype=torch.int32, device=device)
    _c10d.all_reduce(agree, op=dist.ReduceOp.MIN, group=group)
    return _GroupExchange(group, device) if int(agree.item()) == 1 else None


def exchange_slot(group, x: torch.Tensor, c: int) -> Slot | None:
    """The symmetric buffers for this training call, or None: use the torch.distributed collectives."""
    if x.device.type != "cuda" or x.dtype == torch.float64 or _mode() != "auto":
        return None
    key = (group.group_name, x.device.index)
    if key not in _GROUPS:
        if torch.cuda.is_current_stream_capturing():
            return None
        _GROUPS[key] = _create(group, x.device)
    ex = _GROUPS[key]
    return None if ex is None else ex.slot(c)


def uses_symmetric_memory(group, device: torch.device) -> bool:
    """Whether training calls of ``group`` on ``device`` exchange through symmetric memory (decided at the
    group's first training call; False before it)."""
    return _GROUPS.get((group.group_name, device.index)) is not None
