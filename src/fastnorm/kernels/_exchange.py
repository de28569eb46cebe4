"""Programs of one launch exchanging partial results through global memory (BatchNorm's fused and resident
kernels, the split LayerNorm/RMSNorm rows): arrival counters, the wait for a count, and the zeroed counter
buffers the launches share.

A program that waits for others (:func:`gather`) relies on them being resident at the same time: such launches
are cooperative (CUDA refuses them when the grid does not fit at once) or order their work so that every item
waited for is held by a program that never waits. Every launch leaves its counters at 0 again; the split norm
rows' tag words are the exception (:func:`tag_words`).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._replay import scratch


@triton.jit
def arrive(counter_ptr, expected):
    """Count this program in at ``counter_ptr``; True for the last of ``expected`` arrivals.

    The barrier makes every thread's earlier stores precede the release of the atomic (the pattern
    of a grid barrier); acq_rel lets the last arriver read what the others wrote. The last arriver also
    resets the counter to 0 (nothing else touches it again in this launch), so a launch leaves its
    counters zeroed for the next one on the stream.
    """
    tl.debug_barrier()
    old = tl.atomic_add(counter_ptr, 1, sem="acq_rel", scope="gpu")
    last = old == expected - 1
    tl.store(counter_ptr, old * 0, mask=last)
    return last


@triton.jit
def gather(count_ptr, expected):
    """Count this program in at ``count_ptr`` and spin until the count reaches ``expected`` (release, then
    acquire: the partials the others stored before counting themselves in are visible afterwards); -> the
    count seen (>= expected). The spin polls with plain volatile loads (no read-modify-write traffic on the
    counter the others are adding to), then one acquire. Every program that waits here must be resident at once
    (a cooperative launch)."""
    tl.debug_barrier()
    seen = tl.atomic_add(count_ptr, 1, sem="acq_rel", scope="gpu") + 1
    while seen < expected:
        seen = tl.load(count_ptr, volatile=True)
    seen = tl.atomic_add(count_ptr, 0, sem="acquire", scope="gpu")
    tl.debug_barrier()
    return seen


#: The per-stream buffers of the eager launches, by (device, stream, pool) (see ``zeroed_counters``, ``tag_words``).
SYNC_BUFFERS: dict[tuple, torch.Tensor] = {}


def zeroed_counters(n: int, device: torch.device) -> torch.Tensor:
    """At least ``n`` zeroed int32 counters for a launch that leaves them at 0 again (pool "counters")."""
    return _stream_buffer(n, device, torch.int32, "counters")


def tag_words(n: int, device: torch.device) -> torch.Tensor:
    """At least ``n`` int64 words, zeroed when new, that the split norm rows' launches keep their round tags in
    (pool "split rows"): word 0 holds the epoch the next launch's tags start from, the rest tags older than it
    (``layer_norm``'s split-rows section). Not left at 0."""
    return _stream_buffer(n, device, torch.int64, "split rows")


def _stream_buffer(n: int, device: torch.device, dtype: torch.dtype, pool: str) -> torch.Tensor:
    """At least ``n`` values of ``pool``'s buffer for the current stream.

    Launches on one stream run one after another, so eager launches on a CUDA stream share one buffer per pool
    (a new zeroed one when a launch needs more): no allocation and no zero-fill launch per call. A call replayed by
    ``_replay`` keeps the buffer it was recorded with, which may since have been replaced: each buffer's launches
    stay in stream order, so each is consistent on its own. Under CUDA-graph
    capture (the graph may be replayed on another stream) and on the CPU (the interpreter) each launch gets a fresh
    zeroed buffer."""
    if device.type != "cuda" or torch.cuda.is_current_stream_capturing():
        return torch.zeros(n, dtype=dtype, device=device)
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (index, torch._C._cuda_getCurrentRawStream(index), pool)
    buf = SYNC_BUFFERS.get(key)
    if buf is None or buf.numel() < n:
        buf = SYNC_BUFFERS[key] = torch.zeros(max(n, 4096), dtype=dtype, device=device)
    return scratch(buf, keep=True)
