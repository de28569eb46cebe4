"""Programs of one launch exchanging partial results through global memory (BatchNorm's fused and resident
kernels, the split LayerNorm/RMSNorm rows): arrival counters, the wait for a count, and the zeroed counter
buffers the launches share.

A program that waits for others (:func:`gather`) relies on them being resident at the same time: such launches
are cooperative (CUDA refuses them when the grid does not fit at once) or order their work so that every item
waited for is held by a program that never waits. Every launch leaves its counters at 0 again; the split norm
rows' tag words are the exception (:func:`tag_words`).
"""

from __future__ import annotations

import threading

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
#: Values set aside, zeroed, per device and pool for launches captured in CUDA graphs (``_captured_buffer``), made
#: beside a pool's first stream buffer on the device. 4 MiB of counters: a BatchNorm launch takes ~100-10^4.
CAPTURE_RESERVE = {"counters": 1 << 20, "split rows": 1 << 16}
#: The reserves, by (device, pool): [the zeroed buffer, the first value not given out yet].
RESERVES: dict[tuple, list] = {}
#: Slices of a reserve start at multiples of this many values (128-byte lines apart at least).
_RESERVE_ALIGN = 32
_reserve_lock = threading.Lock()


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
    stay in stream order, so each is consistent on its own. A launch captured in a CUDA graph gets values of its
    own (``_captured_buffer``: the graph may be replayed on another stream); on the CPU (the interpreter) each
    launch gets a fresh zeroed buffer."""
    if device.type != "cuda":
        return torch.zeros(n, dtype=dtype, device=device)
    current = torch.cuda.current_device()
    index = device.index if device.index is not None else current
    if index == current:
        capturing = torch.cuda.is_current_stream_capturing()
    else:  # the launch's device, not the current one, is what may be capturing
        with torch.cuda.device(index):
            capturing = torch.cuda.is_current_stream_capturing()
    if capturing:
        return _captured_buffer(n, device, index, dtype, pool)
    key = (index, torch._C._cuda_getCurrentRawStream(index), pool)
    buf = SYNC_BUFFERS.get(key)
    if buf is None or buf.numel() < n:
        buf = SYNC_BUFFERS[key] = torch.zeros(max(n, 4096), dtype=dtype, device=device)
        with _reserve_lock:
            if (index, pool) not in RESERVES:
                RESERVES[index, pool] = [torch.zeros(CAPTURE_RESERVE[pool], dtype=dtype, device=device), 0]
    return scratch(buf, keep=True)


def _captured_buffer(n: int, device: torch.device, index: int, dtype: torch.dtype, pool: str) -> torch.Tensor:
    """``n`` zeroed values for a launch being captured in a CUDA graph: a slice of the device's reserve for the
    pool, zeroed when the reserve was made, outside any capture, so that the graph holds no fill of its own
    before the launch (a node of ~1-2 µs in every replay). Slices are never given back (a graph may be replayed as
    long as it lives) and the launches leave counters at 0, so every replay finds its own zeroed. Where there is no
    reserve yet (nothing ran on the device outside a capture) or it is spent, a zeroed buffer of the graph's own:
    a fill node, as every captured launch had before."""
    with _reserve_lock:
        entry = RESERVES.get((index, pool))
        if entry is not None and entry[0].dtype == dtype and entry[1] + n <= entry[0].numel():
            start = entry[1]
            entry[1] = -(-(start + n) // _RESERVE_ALIGN) * _RESERVE_ALIGN
            return entry[0][start:start + n]
    return torch.zeros(n, dtype=dtype, device=device)
