"""SyncBatchNorm over ``torch.distributed``: the two collectives and the autograd function around them.

A batch split over the ranks of a process group is normalized exactly as if it were one batch:

forward   each rank computes the per-channel ``(mean, M2)`` of its own shard (``local_stats``; count =
          values per channel, known from the shape), written by one launch packed as
          ``[mean (C) | M2 (C) | count (1)]`` in one float32 tensor, and the ranks exchange them with ONE
          all-gather. Every rank then merges the ``R`` rows with Chan's formula in rank order
          (``merge_stats``), so every rank holds bitwise the same global count, mean and biased variance,
          and updates its running statistics from them in the same launch (bitwise identical on every
          rank as well). Never a division by the world size, never
          E[x²] − E[x]²: shards of different sizes, and empty shards (count 0, an exact no-op in the
          merge), are exact.
backward  each rank computes ``(Σ dy, Σ dy·x̂)`` of its shard with the global mean/invstd
          (``backward_sums``; the same launch writes the local parameter gradients), packed in one
          tensor, and ONE all-reduce (sum) makes them global;
          ``backward_dx`` turns them and the global count into this rank's dx.

Parameter gradients are LOCAL: ``dweight = Σ_local dy·x̂`` and ``dbias = Σ_local dy`` over this rank's
shard only (with ``dy`` masked by the ReLU when fused). Their sum over the ranks is the gradient of the
global batch — exactly what ``DistributedDataParallel`` forms when it all-reduces them (it then divides
by the world size, as it does for every other parameter).

No host synchronization in a training step: counts stay on the device as float32 (per-shard counts are exact
up to 2^24 values per channel; beyond that the count carries float32's relative rounding of 6e-8), no
``.item()``, no data-dependent shapes — forward and backward can be captured in a CUDA graph (with NCCL). (The
symmetric-memory exchange's set-up below synchronizes, once per group and once per channel count, in the first
calls; capture after a warm-up step, as graph capture needs anyway.)

Only the global count of one value per channel cannot be known on the host without waiting for the
all-gather; see ``GlobalCountCheck`` for how that error is raised.

Where every rank of the group runs on this host with peer access between the GPUs, neither collective is
called: the statistics launch writes into a symmetric-memory buffer and the apply launch reads every rank's
from there (gather-then-merge in rank order, as the collective path does, so the statistics are bitwise the
same); the backward is one launch that writes this rank's sums, adds the R ranks' in rank order (where NCCL's
all-reduce picks its own order) and computes dx;
``fastnorm._symm_exchange`` says when and how. Set ``FASTNORM_SYNCBN_EXCHANGE=collective`` to always use the
torch.distributed collectives. Collectives are looked up on ``torch.distributed`` at call time (so tools
that wrap those functions — profilers, tests counting collectives — see every call).
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from . import _symm_exchange
from ._runtime import apply_function
from .ops import batch_norm as _bn

__all__ = [
    "GlobalCountCheck",
    "all_gather_stats",
    "all_reduce_sums_",
    "resolve_group",
    "sync_batch_norm",
    "sync_world_size",
]

ONE_VALUE_MESSAGE = "Expected more than 1 value per channel when training, got input size"


def resolve_group(process_group):
    """The group to synchronize over: ``process_group``, or the default (world) group when it is None."""
    return process_group if process_group is not None else dist.group.WORLD


def sync_world_size(process_group) -> int:
    """Ranks to synchronize with: 1 when torch.distributed is absent or not initialized, and also for a
    rank that is not a member of ``process_group`` (torch reports -1 there) — those normalize locally."""
    if not (dist.is_available() and dist.is_initialized()):
        return 1
    return max(dist.get_world_size(resolve_group(process_group)), 1)


def all_gather_stats(packed: torch.Tensor, group, world_size: int) -> torch.Tensor:
    """One all-gather of every rank's 1-D ``packed`` into a new ``[world_size, packed.numel()]`` tensor,
    row ``r`` from group rank ``r``.

    CUDA tensors use the single-tensor all-gather (NCCL's native form; ``all_gather_single``, or
    ``all_gather_into_tensor`` on torch versions without it); CPU tensors use the list form, which every
    gloo version supports, writing straight into the rows of the result.
    """
    out = packed.new_empty((world_size, packed.numel()))
    if packed.device.type == "cpu":
        dist.all_gather(list(out.unbind(0)), packed, group=group)
    else:
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        gather(out, packed, group=group)
    return out


def all_reduce_sums_(packed: torch.Tensor, group) -> torch.Tensor:
    """One all-reduce (sum) of ``packed`` in place over ``group``; returns it."""
    dist.all_reduce(packed, op=dist.ReduceOp.SUM, group=group)
    return packed


def _one_value_error(x: torch.Tensor, world_size: int) -> ValueError:
    return ValueError(
        f"{ONE_VALUE_MESSAGE} {tuple(x.shape)} on this rank and 1 value per channel in total over the "
        f"{world_size} ranks of the process group"
    )


class GlobalCountCheck:
    """Raises torch's "Expected more than 1 value per channel when training" for the GLOBAL count.

    The global count is the sum of the per-rank counts, known only after the all-gather. A rank whose
    own count is at least 2 can never see a global count of 1, so only ranks holding 0 or 1 values per
    channel check at all — and when the global count is 1 every rank of the group is such a rank, so
    they all check.

    * CPU tensors (gloo): the gathered counts are already on the host; the error is raised at once,
      after the all-gather (every rank joined it, so the group stays consistent), before any state
      changes.
    * CUDA tensors: reading the count now would be a host synchronization. Instead the count is copied
      non-blocking into pinned host memory behind a CUDA event, and checked at this layer's NEXT
      training call once the event has completed (``Event.query``, which never waits); a check whose
      copy has not landed yet stays pending for the call after. So the error surfaces one step late,
      and the step that had one value per channel ran to the end: its variance is 0, so ``y`` equals
      the bias (plus ``z``), and the running variance update divides 0 by count − 1 = 0 and becomes
      NaN — never a silently wrong finite value. During CUDA-graph capture nothing is checked (the
      graph cannot call back into Python).
    """

    def __init__(self) -> None:
        self._pending: list[tuple[torch.cuda.Event, torch.Tensor, tuple[int, ...], int]] = []

    def __reduce__(self):  # copies and pickles start clean: pending events belong to this process's streams
        return (type(self), ())

    def check_gathered(self, x: torch.Tensor, gathered_counts: torch.Tensor, world_size: int) -> None:
        """Check after the all-gather. ``gathered_counts``: the ``[R]`` float32 per-rank counts."""
        if x.numel() // x.shape[1] > 1:
            return
        cpu = gathered_counts.device.type == "cpu"
        self.check_total(x, gathered_counts.double().sum() if cpu else gathered_counts.sum(), world_size)

    def check_total(self, x: torch.Tensor, total: torch.Tensor, world_size: int) -> None:
        """Check after the exchange. ``total``: the group's count per channel, a 0-dim tensor."""
        if x.numel() // x.shape[1] > 1:
            return
        if total.device.type == "cpu":
            if float(total) == 1.0:
                raise _one_value_error(x, world_size)
        elif total.device.type == "cuda" and not torch.cuda.is_current_stream_capturing():
            host = torch.empty((), dtype=total.dtype, pin_memory=True)
            host.copy_(total, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            self._pending.append((event, host, tuple(x.shape), world_size))

    def raise_pending(self) -> None:
        """Raise for an earlier call whose global count has since been found to be 1 (CUDA only)."""
        if not self._pending or torch.cuda.is_current_stream_capturing():
            return
        still = []
        for event, host, shape, world_size in self._pending:
            if not event.query():
                still.append((event, host, shape, world_size))
            elif float(host) == 1.0:
                self._pending = []
                raise ValueError(
                    f"{ONE_VALUE_MESSAGE} {shape} on this rank and 1 value per channel in total over the "
                    f"{world_size} ranks of the process group (found after that earlier training step; "
                    f"its running variance is NaN)"
                )
        self._pending = still


def _in_layout_of(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``t`` (same shape as ``x``) with ``x``'s strides — e.g. an expanded all-ones ``dy`` made dense once,
    rather than once in each of the two backward stages."""
    if t.stride() == x.stride():
        return t
    return torch.empty_like(x, dtype=t.dtype).copy_(t)


def _dense_layout(x: torch.Tensor) -> torch.Tensor:
    """``x`` if it is contiguous or channels-last (2-D/3-D), otherwise a contiguous copy."""
    if x.is_contiguous():
        return x
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last):
        return x
    if x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d):
        return x
    return x.contiguous()


class _SyncBatchNormFunction(torch.autograd.Function):
    """The arguments that take no gradient travel as one tuple ``(running_mean, running_var,
    num_batches_tracked, momentum, eps, activation, group, world_size, count_check)`` (fewer arguments, less
    host time in ``Function.apply``); entered through ``_runtime.apply_function``."""

    @staticmethod
    def forward(ctx, x, weight, bias, z, rest):
        running_mean, running_var, num_batches_tracked, momentum, eps, activation, group, world_size, count_check = rest
        c = x.shape[1]
        # [mean | M2 | count] of this rank's shard, written by one launch and gathered as it is: through a
        # symmetric-memory buffer on one host with peer access, else with torch.distributed's all-gather.
        running = None if running_mean is None else (running_mean, running_var, momentum, num_batches_tracked)
        relu = activation == "relu"
        slot = _symm_exchange.exchange_slot(group, x, c)
        if slot is None:
            gathered = all_gather_stats(_bn._local_stats(x, c), group, world_size)
            counts = gathered[:, 2 * c]
            if count_check is not None:
                count_check.check_gathered(x, counts, world_size)
            # The gathered rows are read in place; invstd = 1/sqrt(var + eps) and the running statistics'
            # update come from the same launch.
            count, gmean, _, invstd = _bn._merge_stats(counts, gathered[:, :c], gathered[:, c:2 * c], eps, running)
            y = _bn._apply(x, gmean, invstd, weight, bias, z, relu)
        else:
            # The apply launch merges every rank's packed statistics from its symmetric buffer first; both
            # launches (and the backward's one) are replayed per signature, as the local layer's are.
            y, count, gmean, invstd = _bn._forward_peers(x, weight, bias, z, running, slot.row, slot.stats_exchange(),
                                                         relu, eps)
            if count_check is not None:
                count_check.check_total(x, count, world_size)
        ctx.save_for_backward(x, weight, gmean, invstd, count, y if activation is not None else None)
        ctx.activation = activation
        ctx.group = group
        ctx.slot = slot
        ctx.bias_dtype = bias.dtype if bias is not None else None
        return y

    @staticmethod
    def backward(ctx, dy):
        if not torch.is_grad_enabled():
            return _sync_grads(ctx, dy)
        # create_graph=True: the same gradients, marked so that differentiating them again raises
        with torch.no_grad():
            grads = _sync_grads(ctx, dy)
        return _NoSecondDerivative.mark(grads, (dy, *ctx.saved_tensors[:2]))


def _sync_grads(ctx, dy):
    """``_SyncBatchNormFunction``'s backward: (dx, dweight, dbias, dz, None)."""
    x, weight, mean, invstd, count, y = ctx.saved_tensors
    need_dx, need_dw, need_db, need_dz = ctx.needs_input_grad[:4]
    dy = _in_layout_of(dy, x)
    relu = ctx.activation == "relu"
    c = x.shape[1]
    # The local parameter gradients come out of the same launch as the packed [Σg | Σg·x̂] sums.
    dw = x.new_empty(c, dtype=weight.dtype) if need_dw else None
    db = x.new_empty(c, dtype=ctx.bias_dtype) if need_db else None
    slot = ctx.slot
    dx = dz = None
    if need_dx and slot is not None:  # one launch: sums, the exchange through symmetric memory, dx
        dx, dz = _bn._backward_peers_dx(dy, x, mean, invstd, weight, count, y, relu, need_dz, dw, db,
                                        slot.sums_exchange())
    else:
        sums = _bn._backward_sums(dy, x, mean, invstd, y, relu, dw, db)
        if need_dx:  # summed over the ranks and passed to the dx kernel as they are
            dx, dz = _bn._backward_dx(dy, x, mean, invstd, weight, all_reduce_sums_(sums, ctx.group), count, y,
                                      relu, need_dz)
        elif need_dz:
            dz = dy if ctx.activation is None else dy.masked_fill(y <= 0, 0)
    if not need_dz:
        dz = None
    return dx, dw, db, dz, None


class _NoSecondDerivative(torch.autograd.Function):
    """SyncBatchNorm's gradients taken with ``create_graph=True`` (copies), made to depend on what they were computed
    from (dy, x, the weight) through a backward that raises: differentiating any of them again fails with a clear
    error, on every path to those tensors, instead of leaving SyncBatchNorm's share out of the second derivative. (Its
    global batch statistics' second derivatives would need differentiable collectives; dβ and dz, linear in dy, are
    refused too; fastnorm's BatchNorm differentiates twice.)"""

    @staticmethod
    def forward(ctx, count, *tensors):
        return tuple(t.clone() for t in tensors[:count])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("fastnorm's SyncBatchNorm does not support double backward: its gradients, taken with "
                           "create_graph=True, cannot be differentiated again (the global batch statistics' second "
                           "derivatives would need differentiable collectives)")

    @staticmethod
    def mark(grads, sources):
        present = [g for g in grads if g is not None]
        marked = iter(_NoSecondDerivative.apply(len(present), *present, *(t for t in sources if t is not None)))
        return tuple(None if g is None else next(marked) for g in grads)


_apply_sync_batch_norm = apply_function(_SyncBatchNormFunction)


def sync_batch_norm(x: torch.Tensor, running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
                    weight: torch.Tensor | None, bias: torch.Tensor | None, *, momentum: float | None, eps: float,
                    process_group, world_size: int, num_batches_tracked: torch.Tensor | None = None,
                    activation: str | None = None, z: torch.Tensor | None = None,
                    count_check: GlobalCountCheck | None = None) -> torch.Tensor:
    """Training-mode BatchNorm over the global batch of ``process_group``'s ``world_size`` (> 1) ranks.

    ``y = act(weight * (x - mean) * invstd + bias + z)`` with the mean and biased variance of all ranks'
    inputs together, ``invstd = 1 / sqrt(var + eps)``. One exchange in forward (an all-gather, or the
    symmetric-memory exchange of ``fastnorm._symm_exchange``), one in backward (an all-reduce, or the same;
    only when dx is needed). When ``running_mean``/``running_var`` are given they are updated in
    place with the global mean and unbiased variance: ``(1 - f)·old + f·new`` with ``f = momentum``, or
    with ``momentum=None`` ``f = 1 / num_batches_tracked`` (already incremented by the caller). Arguments
    are not re-validated here: ``fastnorm.nn.SyncBatchNorm`` checks them first.
    """
    if count_check is not None:
        count_check.raise_pending()
    # Made dense outside the Function: a copy is then in the autograd graph, so the double-backward guard
    # (``_NoSecondDerivative``) reaches x through it.
    x = _dense_layout(x)
    return _apply_sync_batch_norm(x, weight, bias, z, (running_mean, running_var, num_batches_tracked, momentum, eps,
                                                       activation, resolve_group(process_group), world_size,
                                                       count_check))
