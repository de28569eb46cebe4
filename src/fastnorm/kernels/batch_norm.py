"""Triton kernels of BatchNorm over (N, C, *spatial): training, evaluation and frozen, forward and backward.

Layout. Every kernel sees its input through one 2-D "view" — channel ``c`` and an inner index ``v``
that walks the other dimensions — so a tensor is read in its own memory layout, never copied:

* NCHW-contiguous, S = prod(spatial) > 64: ``v = n·S + s``, offset ``(n·C + c)·S + s`` (the division
  ``v // S`` is by a compile-time constant: a multiply and shifts; past ``config.BN_SPATIAL_COMPILED`` distinct
  sizes in a process, S is an argument instead, its power-of-two factor compiled in, so that inputs of ever new
  sizes compile once per factor: ``_spatial``; the quotient then comes from a multiply-high by a magic number the
  host passes, ``_quotient``);
* NCHW-contiguous, S <= 64 ("row layout"): ``v = n·L + s`` with L the power of two >= S, lanes
  ``s >= S`` are padding (shifts and masks instead of the division);
* channels-last, channels-last-3d, (N, C) and any input with ``S == 1`` ("flat"): ``v`` is the row
  index ``m`` of the (M, C) matrix, offset ``m·C + c``.

Work decomposition. Channels are cut into blocks of ``CB`` and the inner extent ``V`` of a channel into
``SPLIT`` chunks of ``VPI`` (a multiple of the tile width ``BS``); an *item* is one (channel block,
chunk) pair, processed tile by tile ([CB, BS] elements), one item per program. Channel blocks are
gathered into *groups* of ``NCB_G`` blocks.

Statistics. Within an item every lane of the [CB, BS] tile keeps a Welford state over the full tiles
(all lanes see the same count, so there is no cross-thread work in the loop); the lanes are merged at
the end and a ragged last tile is Chan-merged from its own two-pass statistics. Items write these
(count, mean, M2) partials; the last item of each sub-group of ``MSUB`` chunks (found with an arrival
counter) merges them, and the last sub-group of a channel block merges the sub-groups into the block's
final statistics — fixed shapes and a fixed order whatever the arrival order, so results are bitwise
reproducible. Values are shifted by a per-channel sample ``K = x[0, c, 0]`` before accumulating
(``x - K`` is exact for data near the mean) and the mean is kept as ``K + mean_rel``, so a channel of
1e4 + randn keeps all its fp32 digits. The block's final merge also writes the saved statistics and
updates the running statistics on device (momentum ``None``: factor 1/num_batches_tracked read from
device memory), so there is no host synchronization.

Single read. A training forward whose tensor fits in the registers of one program per multiprocessor
(``config.batch_norm_resident_plan``) runs as one cooperative launch of ``_bn_fwd_resident_kernel``: each program
loads its item once, stores the item's exact two-pass partial, waits for the other items of its channel block,
merges their partials in a fixed order and writes y from its registers (x read once: the fewest bytes, x and z
read, y written). The training backward does the same with dy and x (``_bn_bwd_resident_kernel``: each item's
(Σg, Σg·x̂) partial, the block's sums, dx from registers) where both fit (``config.BN_RESIDENT_BACKWARD``).

Training passes run in two launches (statistics or (Σg, Σg·x̂) sums, then the one-pass apply or dx
kernel) or in one (``config.BN_TRAIN_FUSED``: two, as measured). In one launch, items
take tickets from an atomic queue ordered stats(g), apply(g - LAG), stats(g + 1), ...; the last block of
a group raises the group's ready flag and an apply/dx item spins (acquire) until its group is ready. Every
launch leaves its counters and flags at 0 again, so one zeroed buffer per stream serves all eager launches. A
waiting item's group has all its statistics items already dequeued by running programs that never wait,
so there is no deadlock whatever the residency, and under the interpreter (programs run one after
another) nothing ever waits. Frozen/eval backward is one pass (dx, plus sums partials for dγ, dβ when
they are needed). Evaluation forward is one pass; over large tensors the one-pass forward (evaluation, the
training forward's apply) runs as a flat pointwise kernel instead (``_bn_apply_flat_kernel``: the channel of each
element computed from its index, S and C compiled in, or both arguments where S is; ``config.BN_APPLY_FLAT``), and
so does the dx pass (the training backward's second launch, the frozen backward with dx alone, the stage API's
``backward_dx``) from 2^20 elements (``_bn_bwd_dx_flat_kernel``, ``config.BN_DX_FLAT``). The frozen backward with
dγ, dβ over large NCHW batches runs image-strided instead (``_bn_bwd_frozen_flat_kernel``, ``config.BN_FROZEN_FLAT``):
a program takes one block of consecutive offsets of an image in a share of the images, so each lane keeps one
channel and its own sums; a segmented scan over the block's runs gives per-run partials, which a second launch
(``_bn_frozen_sums_kernel``) adds per channel in a fixed order. The backward's sums pass over runs of up to
``config.BN_SUMS_FLAT`` elements takes the same kernel without its dx. Over large channels-last rows the frozen
backward with dγ, dβ runs row-strided (``_bn_bwd_frozen_rows_kernel``, ``config.BN_FROZEN_ROWS``): a program takes
a block of channels in a share of the rows, each lane one channel and its own sums, and a second launch
(``_bn_rows_sums_kernel``) adds the shares' partials per channel in a fixed order; the backward's sums pass over
large channels-last rows of 16-bit x takes the same kernel without its dx, grid-strided, and the dx pass after it
reads x from the end down (``config.BN_SUMS_ROWS``).

All statistics and sums are accumulated in fp32 (fp64 for fp64 input). Offsets are int64 when the
tensor has 2^31 elements or more. No float atomics anywhere: parameter gradients are deterministic.
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from .._runtime import INTERPRETER
from . import config
from ._exchange import arrive as _arrive
from ._exchange import gather as _gather
from ._exchange import zeroed_counters as _zeroed_counters
from ._launch import _Launcher
from ._reduce import rounded_prod
from ._replay import scratch

# Item kinds of the fused kernels.
_STATS = tl.constexpr(0)
_APPLY = tl.constexpr(1)


@triton.jit
def _hl(hi, lo, ACC: tl.constexpr):
    """A host float passed as an fp32 (hi, lo) pair, rebuilt in the accumulation dtype (exact for fp64)."""
    return tl.cast(hi, ACC) + tl.cast(lo, ACC)


@triton.jit
def _invstd(var, eps, ACC: tl.constexpr):
    """1/sqrt(var + eps), correctly rounded square root (fp32 or fp64)."""
    if ACC == tl.float64:
        return 1.0 / tl.sqrt(var + eps)
    else:
        return 1.0 / tl.sqrt_rn(var + eps)


@triton.jit
def _chan(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    """Chan's merge of two (count, mean, M2) triples; a side with count 0 is an exact no-op."""
    n = n_a + n_b
    w = tl.where(n_b > 0, n_b / tl.where(n > 0, n, 1.0), 0.0)
    delta = tl.where(n_b > 0, mean_b - mean_a, 0.0)
    mean = mean_a + delta * w
    m2 = m2_a + tl.where(n_b > 0, m2_b + delta * delta * (n_a * w), 0.0)
    return n, mean, m2


@triton.jit
def _tile_offsets(c, v, C, S: tl.constexpr, S_RT, S_MG, FLAT: tl.constexpr, L: tl.constexpr):
    """Element offsets of the [CB, BS] tile of channels ``c`` and inner indices ``v``.

    NCHW offsets are written ``(n·C + c)·S + s`` with S a compile-time constant, so that Triton sees the
    divisibility of S: runs of S elements are then read with vector loads (e.g. 4-wide at S = 196). S < 0: the
    spatial size is ``S_RT·(−S)``, −S its power-of-two factor up to 16 (``_spatial``): one compile serves every size
    with that factor, and Triton still sees the divisibility that sets the loads' width and the tile's layout — and
    with it the order of the sums, so the results are bitwise those of S compiled in. The image index is then
    n = (v // p) // S_RT, formed as a multiply-high by the host's magic number for S_RT (``S_MG``, see
    ``_quotient``): a division by a run-time value costs tens of instructions an index. Triton cannot see through the
    multiply-high, so what it derived from the division is stated: the callers' first index is a multiple of ``v``'s
    power-of-two length, so over each aligned run of h = min(p, len(v)) indices n is constant and s counts up from a
    multiple of h.
    """
    if FLAT:
        return v[None, :] * C + c[:, None]
    elif L > 0:
        # rows of L (a power of two >= S) lanes per image: v = n·L + s, lanes s >= S are padding
        n = v // L
        s = v % L
        return (n[None, :] * C + c[:, None]) * S + s[None, :]
    elif S > 0:
        n = v // S
        s = v - n * S
        return (n[None, :] * C + c[:, None]) * S + s[None, :]
    else:
        sz = S_RT * (-S)
        H: tl.constexpr = -S if -S < v.shape[0] else v.shape[0]
        n = _divided(v, S, S_RT, S_MG, H)
        s = v - n * sz
        if v.dtype != tl.int64:  # (64-bit indices divide: Triton derives these facts itself)
            s = tl.max_contiguous(tl.multiple_of(s, H), H)
        return (n[None, :] * C + c[:, None]) * sz + s[None, :]


@triton.jit
def _quotient(v, MG, RUNS: tl.constexpr):
    """v // d in v's dtype, for indices 0 <= v < 2**31 and a run-time divisor d given by its magic number MG =
    ``_divisor_magic(d)``: umulhi(2v, M) >> SH, two instructions where a division takes tens. RUNS > 0 states that
    the quotients are constant over aligned runs of RUNS elements of the 1-D v (set here: a hint on the caller's side
    lands on the inlined call, or on a cast, whose op is folded away with it)."""
    q = tl.umulhi(v.to(tl.uint32) << 1, (MG >> 5).to(tl.uint32)) >> (MG & 31).to(tl.uint32)
    if RUNS > 0:
        q = tl.max_constancy(q, RUNS)
    return q.to(v.dtype)


@triton.jit
def _divided(v, D: tl.constexpr, D_RT, MG, RUNS: tl.constexpr):
    """v // d for indices v >= 0, with d = D compiled in (D > 0), or d = −D·D_RT: the power of two −D compiled in,
    D_RT an argument given with its magic number MG, as the tile kernels take S (``_spatial``) — then
    (v // −D) // D_RT, by a multiply-high where v indexes in 32 bits (``_quotient``, RUNS its hint), by a division
    in 64."""
    if D > 0:
        return v // D
    elif v.dtype == tl.int64:
        return v // (-D) // D_RT
    else:
        return _quotient(v // (-D), MG, RUNS)


@triton.jit
def _aligned_rows(c, cmask, w, w_end, C, S_RT, MG, AL: tl.constexpr):
    """The NCHW reductions' aligned rows (``config.BN_ALIGNED_ROWS``; the statistics, the backward's sums): each
    image's run of S = S_RT elements of a channel is read as a row of AL·M lanes (M = ceil((S + AL − 1) / AL)) from
    the AL-aligned element at or before its start, so that runs of any S load as whole aligned vectors of AL elements
    (16 bytes) where an odd S allows no vector at all.

    Vectors w (w = n·M + k, those below ``w_end``) of channels ``c`` -> the [CB, AL, len(w)] tile's element offsets,
    the [CB, len(w)] offsets r0 of each vector's first element in its run (in [1 − AL, S + AL − 2]), the vectors to
    load ([CB, len(w)]) and the real elements ([CB, AL, len(w)]). Lane i of a vector is a real element of its channel
    iff 0 <= r0 + i < S; the others belong to the neighbouring runs. A vector with r0 < S overlaps its run, so it lies
    inside the tensor when N·C·S is a multiple of AL (``_reduction_view``): only those are loaded, by a mask constant
    over each vector, which keeps the loads whole vectors. Each vector's image n = w // M by the host's magic number
    MG for M (``_divided``); per element only its lane is added (the lanes lie along axis 1 in each thread's
    registers)."""
    m_rt = (S_RT + 2 * AL - 2) // AL
    n = _divided(w, -1, m_rt, MG, 0)
    start = (n[None, :] * C + c[:, None]) * S_RT
    first = (start & -AL) + ((w - n * m_rt) * AL)[None, :]
    lane = tl.arange(0, AL)[None, :, None]
    off = tl.multiple_of(first[:, None, :], [AL, AL, AL]) + lane.to(w.dtype)
    r0 = (first - start).to(tl.int32)
    vm = cmask[:, None] & (w < w_end)[None, :] & (r0 < S_RT)
    return off, r0, vm, vm[:, None, :] & ((r0[:, None, :] + lane).to(tl.uint32, bitcast=True) < S_RT)


@triton.jit
def _lanes_ok(v, S: tl.constexpr, L: tl.constexpr):
    """Which inner indices are real elements (all but the padding lanes of the row layout, L > 0)."""
    if L > 0:
        if L > S:
            return (v % L) < S
        else:
            return v == v
    else:
        return v == v


@triton.jit
def _item_extent(i, g, C, V, VPI, NCB_G, CB: tl.constexpr, IDX: tl.constexpr):
    """Item ``i`` of group ``g`` -> (channel block, chunk, its channels ``c`` and their mask, inner range
    [v0, v1)). Groups of NCB_G blocks can overrun the channels: a block past them gets an empty range (its item
    still stores its masked partial and arrives, so the counters complete)."""
    cb = g * NCB_G + i % NCB_G
    j = i // NCB_G
    c = cb * CB + tl.arange(0, CB)
    v0 = j.to(IDX) * VPI
    return cb, j, c, c < C, v0, tl.where(cb * CB < C, tl.minimum(v0 + VPI, V), v0)


@triton.jit
def _sync_counters(sync_ptr, G, NCB_G, NSUB):
    """The counters in the zeroed int32 sync buffer of a fused kernel, after the ticket queue at
    sync_ptr[0]: sub-group arrivals (NCB·NSUB), channel-block arrivals (NCB), group arrivals (G), group
    ready flags (G), the apply/dx items that have passed each ready flag (G), NCB = G·NCB_G, then the count
    of completed groups (1; SyncBatchNorm's one-launch backward). Every launch leaves them all at 0 again
    (``_take_ticket``, ``_arrive``, ``_pass_ready``) -> (sub, blk, grp, ready, groups done)."""
    sub_ptr = sync_ptr + 1
    blk_ptr = sub_ptr + G * NCB_G * NSUB
    grp_ptr = blk_ptr + G * NCB_G
    return sub_ptr, blk_ptr, grp_ptr, grp_ptr + G, grp_ptr + 3 * G


@triton.jit
def _channel_shift(x_ptr, c, cmask, S: tl.constexpr, S_RT, ACC: tl.constexpr):
    """The per-channel shift K = x[0, c, 0] (0 when not finite), in the accumulation dtype (S < 0: the spatial
    size is ``S_RT·(−S)``, as in ``_tile_offsets``)."""
    if S > 0:
        k = tl.load(x_ptr + c * S, mask=cmask, other=0.0).to(ACC)
    else:
        k = tl.load(x_ptr + c * (S_RT * (-S)), mask=cmask, other=0.0).to(ACC)
    return tl.where(tl.abs(k) < float("inf"), k, 0.0)


@triton.jit
def _tile_two_pass(xv, m, ACC: tl.constexpr, AXIS: tl.constexpr = 1):
    """(count, mean, M2) over axis AXIS of a masked tile (per row by default): mean first, then squared deviations
    from it."""
    nt = tl.sum(m.to(ACC), AXIS)
    mt = tl.sum(tl.where(m, xv, 0.0), AXIS) / tl.maximum(nt, 1.0)
    d = tl.where(m, xv - tl.expand_dims(mt, AXIS), 0.0)
    return nt, mt, tl.sum(rounded_prod(d, d), AXIS)


@triton.jit
def _item_stats(x_ptr, c, cmask, shift, v0, v1, V, C, KEEPV, IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG,
                FLAT: tl.constexpr, L: tl.constexpr, AL: tl.constexpr, CB: tl.constexpr, BS: tl.constexpr,
                STAGES: tl.constexpr, KEEP: tl.constexpr, ACC: tl.constexpr):
    """(count, mean, M2) of x - shift over channels ``c`` and inner range [v0, v1).

    Full tiles update a Welford state per lane (every lane sees the same count, so the update factor
    1/k is one scalar per tile and the loop has no cross-thread reduction); the lanes are merged once
    at the end (equal counts: mean of means, M2 = ΣM2 + k·Σ(mean_l - mean)²), and a ragged last tile
    is merged in with Chan's formula from its own two-pass statistics. AL > 0: NCHW runs read as aligned rows
    (``_aligned_item_stats``). KEEP (not with AL): the tiles of the item's last KEEPV indices load ``evict_last``
    (``_kept_from``).
    """
    tl.static_assert(AL == 0 or not KEEP, "aligned rows keep no tail (config.BN_KEEP_BYTES)")
    if AL > 0:
        return _aligned_item_stats(x_ptr, c, cmask, shift, v0, v1, C, S_RT, S_MG, AL, IDX, CB, BS, STAGES, ACC)
    ar = tl.arange(0, BS).to(IDX)
    nfull = (v1 - v0) // BS
    mean_l = tl.zeros([CB, BS], ACC)
    m2_l = tl.zeros([CB, BS], ACC)
    lm = cmask[:, None] & _lanes_ok(ar, S, L)[None, :]  # the same lanes are padding in every tile
    tk = nfull  # the kept tiles' first (KEEP), else past the last
    if KEEP:
        tk = (_kept_from(v0, v1, KEEPV, BS) - v0) // BS
    mean_l, m2_l = _welford_tiles(x_ptr, c, lm, shift, v0, 0, tk, mean_l, m2_l, C, IDX, S, S_RT, S_MG, FLAT, L, BS,
                                  STAGES, "", ACC)
    if KEEP:
        mean_l, m2_l = _welford_tiles(x_ptr, c, lm, shift, v0, tk, nfull, mean_l, m2_l, C, IDX, S, S_RT, S_MG, FLAT, L,
                                      BS, STAGES, "evict_last", ACC)
    kf = tl.cast(nfull, ACC)
    lw = _lanes_ok(ar, S, L).to(ACC)
    nl = tl.sum(lw, 0)
    mean = tl.sum(mean_l * lw[None, :], 1) / nl
    dm = (mean_l - mean[:, None]) * lw[None, :]
    m2 = tl.sum(m2_l * lw[None, :], 1) + kf * tl.sum(rounded_prod(dm, dm), 1)
    cnt = tl.zeros([CB], ACC) + kf * nl
    vs = v0 + nfull * BS
    if vs < v1:
        v = vs + ar
        m = cmask[:, None] & ((v < v1) & _lanes_ok(v, S, L))[None, :]
        off = _tile_offsets(c, v, C, S, S_RT, S_MG, FLAT, L)
        xv = tl.load(x_ptr + off, mask=m, other=0.0, eviction_policy="evict_last" if KEEP else "").to(ACC) \
            - shift[:, None]
        tn, tm, tq = _tile_two_pass(xv, m, ACC)
        cnt, mean, m2 = _chan(cnt, mean, m2, tn, tm, tq)
    return cnt, mean, m2


@triton.jit
def _kept_from(v0, v1, KEEPV, BS: tl.constexpr):
    """The first index of the tile from which an item [v0, v1) read in tiles of BS loads its last KEEPV indices (at
    least) with ``evict_last``: the reduction passes (statistics, sums) leave those lines in L2 for the pass that
    reads x again (``config.BN_KEEP_BYTES``); the tiles themselves are the same, so the sums' order is too. Those
    tiles load unpipelined: Triton 3.6's pipelined loads (cp.async) drop the eviction hint."""
    return v0 + tl.maximum(v1 - v0 - KEEPV, 0) // BS * BS


@triton.jit
def _welford_tiles(x_ptr, c, lm, shift, v0, t0, t1, mean_l, m2_l, C, IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG,
                   FLAT: tl.constexpr, L: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr, EV: tl.constexpr,
                   ACC: tl.constexpr):
    """``_item_stats``' per-lane Welford update over its full tiles t0 .. t1 - 1 (tile t: indices v0 + t·BS ..), the
    loads with eviction policy EV."""
    ar = tl.arange(0, BS).to(IDX)
    KS: tl.constexpr = STAGES if EV == "" else 1  # hinted loads unpipelined (``_kept_from``)
    for t in tl.range(t0, t1, num_stages=KS):
        v = v0 + t * BS + ar
        off = _tile_offsets(c, v, C, S, S_RT, S_MG, FLAT, L)
        xv = tl.load(x_ptr + off, mask=lm, other=0.0, eviction_policy=EV).to(ACC) - shift[:, None]
        mean_l, m2_l = _welford_step(xv, mean_l, m2_l, t, ACC)
    return mean_l, m2_l


@triton.jit
def _welford_step(xv, mean_l, m2_l, t, ACC: tl.constexpr):
    """Tile t (from 0) of a per-lane Welford state: every lane sees the same count t + 1, so the update factor is one
    scalar a tile and there is no reduction across threads."""
    rk = 1.0 / tl.cast(t + 1, ACC)
    d = xv - mean_l
    mean_l += d * rk
    m2_l += d * (xv - mean_l)
    return mean_l, m2_l


@triton.jit
def _aligned_item_stats(x_ptr, c, cmask, shift, v0, v1, C, S_RT, S_MG, AL: tl.constexpr, IDX: tl.constexpr,
                        CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr, ACC: tl.constexpr):
    """``_item_stats`` over aligned rows of AL·M lanes (``_aligned_rows``; V = N·AL·M, v0 and v1 multiples of AL).
    The loads take the whole aligned vectors that overlap a run; the real lanes differ from vector to vector, so a
    per-lane Welford state (one count for all lanes) does not apply. Instead each vector's real lanes give its
    two-pass (count, mean, M2) of x − shift in its thread's registers, merged with Chan's formula into a state per
    vector slot of the tile, and the slots are merged once, at the end, in a fixed tree (``tl.reduce``): no reduction
    across threads per tile."""
    WB: tl.constexpr = BS // AL
    ar = tl.arange(0, WB).to(IDX)
    n_s = tl.zeros([CB, WB], ACC)
    mean_s = tl.zeros([CB, WB], ACC)
    m2_s = tl.zeros([CB, WB], ACC)
    for ws in tl.range(v0 // AL, v1 // AL, WB, num_stages=STAGES):
        off, r0, vm, m = _aligned_rows(c, cmask, ws + ar, v1 // AL, C, S_RT, S_MG, AL)
        xv = tl.load(x_ptr + off, mask=vm[:, None, :], other=0.0).to(ACC) - shift[:, None, None]
        mf = tl.where(m, 1.0, 0.0)
        xz = tl.where(m, xv, 0.0)
        nv = tl.where(vm, tl.maximum(tl.minimum(S_RT - r0, AL) - tl.maximum(-r0, 0), 0), 0).to(ACC)
        mv = tl.sum(xz, 1) / tl.maximum(nv, 1.0)
        d = tl.fma(-mv[:, None, :], mf, xz)  # the real lanes' x − mean (mf = 1: one rounding), 0 elsewhere
        n_s, mean_s, m2_s = _chan_slot(n_s, mean_s, m2_s, nv, mv, tl.sum(rounded_prod(d, d), 1))
    return tl.reduce((n_s, mean_s, m2_s), 1, _chan)


@triton.jit
def _chan_slot(n_a, mean_a, m2_a, n_b, mean_b, m2_b):
    """``_chan`` with its weight n_b / n by the fast division (within 2 ulp: the merge of each vector into its slot,
    the hot loop's; no change where the means agree, so a constant channel, all zeros after the shift, stays 0). A
    channel holding ±Inf gets NaN statistics, as the per-lane Welford states of ``_item_stats`` give it."""
    n = n_a + n_b
    w = tl.where(n_b > 0, tl.fdiv(n_b, tl.maximum(n, 1.0)), 0.0)
    delta = mean_b - mean_a
    return n, mean_a + delta * w, m2_a + tl.where(n_b > 0, m2_b + delta * delta * (n_a * w), 0.0)


@triton.jit
def _store_partial(p, stride_q, cmask, n, mean, m2):
    """Store partial (count, mean, M2) of channels at p, p + stride_q, p + 2·stride_q (``_merge_partials``' layout)."""
    tl.store(p, n, mask=cmask)
    tl.store(p + stride_q, mean, mask=cmask)
    tl.store(p + 2 * stride_q, m2, mask=cmask)


@triton.jit
def _partial_tile(part_ptr, c, cmask, j, j1, stride_c, ROWS: tl.constexpr, stride_j=1):
    """Pointers and mask of partials j (< j1) of channels c (partial j at j·stride_j): a [MS, CB] tile (ROWS) or a
    [CB, MS] one."""
    if ROWS:
        return part_ptr + c[None, :] * stride_c + j[:, None] * stride_j, cmask[None, :] & (j < j1)[:, None]
    else:
        return part_ptr + c[:, None] * stride_c + j[None, :] * stride_j, cmask[:, None] & (j < j1)[None, :]


@triton.jit
def _merge_step_loads(part_ptr, c, cmask, j, j1, stride_q, stride_c, stride_j):
    """One step of ``_merge_partials``: the [MS, CB] tiles of partials j (< j1) of channels c -> (count, mean, M2,
    mask)."""
    p, m = _partial_tile(part_ptr, c, cmask, j, j1, stride_c, True, stride_j)
    pn = tl.load(p, mask=m, other=0.0, cache_modifier=".cg")
    pm = tl.load(p + stride_q, mask=m, other=0.0, cache_modifier=".cg")
    pq = tl.load(p + 2 * stride_q, mask=m, other=0.0, cache_modifier=".cg")
    return pn, pm, pq, m


@triton.jit
def _merge_partials(part_ptr, c, cmask, j0, j1, stride_q, stride_c, MS: tl.constexpr, CB: tl.constexpr,
                    ACC: tl.constexpr, stride_j=1):
    """Merge partials [count, mean, M2] at part_ptr[q·stride_q + c·stride_c + j·stride_j], j in [j0, j1), MS at a
    time (fixed-shape sums, chunks folded left to right: the same order whoever runs it). The tiles are [MS, CB],
    reduced over axis 0: with [CB, MS] tiles the compiler gave the merged values their own layout and converted the
    single-read forward's whole x tile to it and y back (channels-last: two shared-memory round trips of the tile)."""
    cnt = tl.zeros([CB], ACC)
    mean = tl.zeros([CB], ACC)
    m2 = tl.zeros([CB], ACC)
    js = tl.arange(0, MS)
    pn, pm, pq, m = _merge_step_loads(part_ptr, c, cmask, j0 + js, j1, stride_q, stride_c, stride_j)
    for jb in range(j0, j1, MS):
        # The next step's loads go out before this step's arithmetic: one step costs the larger of the loads' L2
        # latency and its shuffles and divisions, not their sum (the last step's are all masked off).
        nn, nm, nq, mn = _merge_step_loads(part_ptr, c, cmask, jb + MS + js, j1, stride_q, stride_c, stride_j)
        # The multi-way form of Chan's merge: n = Σn_j, mean = Σn_j·mean_j / n,
        # M2 = Σ(M2_j + n_j·(mean_j - mean)²) — deviations from the merged mean, fixed-shape sums.
        bn = tl.sum(pn, 0)
        bm = tl.sum(rounded_prod(pn, pm), 0) / tl.where(bn > 0, bn, 1.0)
        dm = tl.where(m, pm - bm[None, :], 0.0)
        bq = tl.sum(pq + pn * dm * dm, 0)
        cnt, mean, m2 = _chan(cnt, mean, m2, bn, bm, bq)
        pn, pm, pq, m = nn, nm, nq, mn
    return cnt, mean, m2


@triton.jit
def _sum_step_loads(part_ptr, c, cmask, j, j1, stride_q, stride_c, ROWS: tl.constexpr, stride_j):
    """One step of ``_sum_partials``: the [CB, MS] tiles (ROWS: [MS, CB]) of partials j (< j1) of channels c ->
    (a, b)."""
    p, m = _partial_tile(part_ptr, c, cmask, j, j1, stride_c, ROWS, stride_j)
    return tl.load(p, mask=m, other=0.0, cache_modifier=".cg"), tl.load(p + stride_q, mask=m, other=0.0,
                                                                         cache_modifier=".cg")


@triton.jit
def _sum_partials(part_ptr, c, cmask, j0, j1, stride_q, stride_c, MS: tl.constexpr, CB: tl.constexpr,
                  ACC: tl.constexpr, ROWS: tl.constexpr = False, stride_j=1):
    """Sum partials [a, b] at part_ptr[q·stride_q + c·stride_c + j·stride_j], j in [j0, j1): fixed tree; masked
    channels 0.
    (The final select gives the loop's sums one use each: Triton 3.6's TritonGPUOptimizeThreadLocality asserts that
    of a loop whose reductions it moves, and the sums feed several stores.) ROWS: [MS, CB] tiles reduced over axis
    0, as ``_merge_partials``' (the single-read backward: with [CB, MS] tiles its data tile changed layout)."""
    AXIS: tl.constexpr = 0 if ROWS else 1
    sa = tl.zeros([CB], ACC)
    sb = tl.zeros([CB], ACC)
    js = tl.arange(0, MS)
    pa, pb = _sum_step_loads(part_ptr, c, cmask, j0 + js, j1, stride_q, stride_c, ROWS, stride_j)
    for jb in range(j0, j1, MS):
        na, nb = _sum_step_loads(part_ptr, c, cmask, jb + MS + js, j1, stride_q, stride_c, ROWS,
                                 stride_j)  # as _merge_partials
        sa += tl.sum(pa, AXIS)
        sb += tl.sum(pb, AXIS)
        pa, pb = na, nb
    return tl.where(cmask, sa, 0.0), tl.where(cmask, sb, 0.0)


@triton.jit
def _take_ticket(queue_ptr):
    """The next ticket of the fused schedule's queue; the program taking the launch's last ticket resets the
    queue to 0 (every program takes exactly one, so no one takes another after it)."""
    t = tl.atomic_add(queue_ptr, 1)
    tl.store(queue_ptr, t * 0, mask=t == tl.num_programs(0) - 1)
    return t


@triton.jit
def _pass_ready(ready_ptr, G, g, K):
    """Spin until group g's ready flag is non-zero (acquire); the last of the group's K waiting items to pass
    it lowers it again (the counter of passed items follows the G flags)."""
    while tl.atomic_add(ready_ptr + g, 0, sem="acquire", scope="gpu") == 0:
        pass
    tl.debug_barrier()
    if _arrive(ready_ptr + G + g, K):
        tl.store(ready_ptr + g, 0)


@triton.jit
def _schedule(t, G, K, LAG):
    """Ticket ``t`` of the fused schedule -> (kind, group, item in group).

    Order: stats(0..L-1), then rounds [stats(g), apply(g - L)] for g = L..G-1, then apply(G-L..G-1),
    with L = min(LAG, G); every group has K stats items and K apply items.
    """
    L = tl.minimum(LAG, G)
    t1 = L * K
    mid = (G - L) * 2 * K
    kind = _STATS
    g = t // K
    i = t % K
    if t >= t1:
        u = t - t1
        if u < mid:
            r = u // (2 * K)
            w = u % (2 * K)
            if w < K:
                g = L + r
                i = w
            else:
                kind = _APPLY
                g = r
                i = w - K
        else:
            u2 = u - mid
            kind = _APPLY
            g = G - L + u2 // K
            i = u2 % K
    return kind, g, i


@triton.jit
def _load_param(p_ptr, c, cmask, HAS: tl.constexpr, default: tl.constexpr, ACC: tl.constexpr):
    if HAS:
        return tl.load(p_ptr + c, mask=cmask, other=default).to(ACC)
    else:
        return tl.full(c.shape, default, ACC)


@triton.jit
def _weight_scale(w_ptr, rstd, c, cmask, HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, ACC: tl.constexpr):
    """w·invstd per channel (invstd alone under FIX_GAMMA or without a weight)."""
    if FIX_GAMMA:
        return rstd
    else:
        return _load_param(w_ptr, c, cmask, HAS_W, 1.0, ACC) * rstd


@triton.jit
def _channel_rstd(sd_ptr, c, cmask, eps_hi, eps_lo, IS_VAR: tl.constexpr, ACC: tl.constexpr):
    """invstd per channel: read as it is, or 1/sqrt(var + eps) from a variance when IS_VAR."""
    sd = tl.load(sd_ptr + c, mask=cmask, other=1.0).to(ACC)
    if IS_VAR:
        return _invstd(sd, _hl(eps_hi, eps_lo, ACC), ACC)
    else:
        return sd


@triton.jit
def _channel_center(mean_ptr, mrel_ptr, c, cmask, HAS_MREL: tl.constexpr, CB: tl.constexpr, ACC: tl.constexpr):
    """(shift, mean_rel) per channel: the mean is shift + mean_rel (mean_rel 0 when absent)."""
    mean = tl.load(mean_ptr + c, mask=cmask, other=0.0).to(ACC)
    if HAS_MREL:
        mrel = tl.load(mrel_ptr + c, mask=cmask, other=0.0).to(ACC)
    else:
        mrel = tl.zeros([CB], ACC)
    return mean, mrel


@triton.jit
def _pass_item(C, V, VPI, CB: tl.constexpr, IDX: tl.constexpr, REV: tl.constexpr):
    """The one-pass kernels' item of this program -> (chunk j, channels c, their mask, inner range [v0, v1)). REV: the
    programs take the chunks from the last down (``config.BN_APPLY_REVERSE``, the dx pass after the row-strided sums
    pass: ``config.BN_SUMS_ROWS``), a short last chunk still last
    (the launch's last programs the quick ones, as in the ascending order); each chunk's tiles stay ascending."""
    pid = tl.program_id(0)
    ncb = tl.cdiv(C, CB)
    j = pid // ncb
    if REV:
        full = V // VPI  # chunks of VPI indices; one more, shorter, where VPI does not divide V
        j = tl.where(j < full, full - 1 - j, j)
    c = (pid % ncb) * CB + tl.arange(0, CB)
    v0 = j.to(IDX) * VPI
    return j, c, c < C, v0, tl.minimum(v0 + VPI, V)


# ----------------------------------------------------------------------------------------------- forward


@triton.jit
def _apply_tiles(x_ptr, y_ptr, z_ptr, c, cmask, shift, mrel, scale, beta, v0, v1, C,
                 IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG, FLAT: tl.constexpr, L: tl.constexpr, BS: tl.constexpr,
                 STAGES: tl.constexpr, HAS_Z: tl.constexpr, RELU: tl.constexpr, ACC: tl.constexpr):
    """y = act(((x - shift) - mrel)·scale + beta + z) over channels ``c`` and inner range [v0, v1)."""
    ar = tl.arange(0, BS).to(IDX)
    for vs in tl.range(v0, v1, BS, num_stages=STAGES):
        v = vs + ar
        m = cmask[:, None] & ((v < v1) & _lanes_ok(v, S, L))[None, :]
        off = _tile_offsets(c, v, C, S, S_RT, S_MG, FLAT, L)
        _apply_tile(tl.load(x_ptr + off, mask=m, other=0.0), off, m, y_ptr, z_ptr, shift[:, None], mrel[:, None],
                    scale[:, None], beta[:, None], HAS_Z, RELU, ACC)


@triton.jit
def _apply_tile(xv, off, m, y_ptr, z_ptr, shift, mrel, scale, beta, HAS_Z: tl.constexpr, RELU: tl.constexpr,
                ACC: tl.constexpr):
    """Store y = act(((x - shift) - mrel)·scale + beta + z) of x (as loaded) at ``off``: a [CB, *] tile with the
    channels' values as [CB, 1], or a flat block with each element's own."""
    yv = ((xv.to(ACC) - shift) - mrel) * scale + beta
    if HAS_Z:
        yv += tl.load(z_ptr + off, mask=m, other=0.0).to(ACC)
    if RELU:
        yv = tl.where(yv < 0, 0.0, yv)  # NaN passes, as through torch.relu
    tl.store(y_ptr + off, yv.to(y_ptr.dtype.element_ty), mask=m)


@triton.jit(do_not_specialize=["S_MG", "KEEPV"])
def _bn_fwd_fused_kernel(
    x_ptr, y_ptr, z_ptr, w_ptr, b_ptr,
    out_a_ptr, out_b_ptr, out_c_ptr,  # MODE 0/2: shift, mean_rel, invstd;  MODE 1: out_a = packed stats
    rm_ptr, rv_ptr, nbt_ptr,
    part_ptr, sync_ptr,
    C, V, VPI, SPLIT, NSUB, G, NCB_G, LAG, KEEPV,
    mom_hi, mom_lo, eps_hi, eps_lo, cnt_hi, cnt_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr, MSUB: tl.constexpr, MS: tl.constexpr,
    MODE: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_Z: tl.constexpr,
    RELU: tl.constexpr, FIX_GAMMA: tl.constexpr, UPDATE_RUNNING: tl.constexpr, MOMENTUM_NONE: tl.constexpr,
    AL: tl.constexpr, KEEP: tl.constexpr,
):
    """MODE 0: fused training forward (statistics + merge + running update + normalize, one launch);
    MODE 1: the statistics only, packed at out_a as [mean (C) | M2 (C) | count (cnt_hi + cnt_lo)] — the
    buffer SyncBatchNorm all-gathers (out_b, out_c unused); MODE 2: the first launch of the two-launch
    training forward (statistics, saved (shift, mean_rel, invstd), running update). AL > 0 (MODE 1 and 2): the
    statistics read NCHW runs as aligned rows of AL-element vectors (``_aligned_item_stats``; S = −1 and S_RT the
    spatial size, S_MG the magic number of the rows' vectors per image, V = N·AL·M).

    Partials: part_ptr[3, C, SPLIT] (count, mean, M2 of x - K per item), then part_ptr[3, C, NSUB] at
    offset 3·C·SPLIT (per sub-group of MSUB chunks). sync_ptr: the zeroed int32 counters of
    ``_sync_counters`` (left zeroed at the end). The last
    item of a sub-group merges it; the last sub-group of a channel block writes the block's final
    statistics (and running statistics); the last block of a group raises the group's ready flag. A channel block
    of one item (SPLIT = 1) writes its own statistics, and one of a single sub-group (NSUB = 1) takes the
    sub-group's merge as final: no partials, arrivals or merges that would change nothing.
    """
    tl.static_assert(AL == 0 or MODE != 0, "aligned rows: not where the apply items share the statistics' extents")
    K = NCB_G * SPLIT
    STATS_ONLY: tl.constexpr = MODE == 1
    if MODE == 0:
        kind, g, i = _schedule(_take_ticket(sync_ptr), G, K, LAG)
    else:
        kind = _STATS
        g = tl.program_id(0) // K
        i = tl.program_id(0) % K
    cb, j, c, cmask, v0, v1 = _item_extent(i, g, C, V, VPI, NCB_G, CB, IDX)
    p2_ptr = part_ptr + 3 * C * SPLIT
    sub_ptr, blk_ptr, grp_ptr, ready_ptr, _groups_done = _sync_counters(sync_ptr, G, NCB_G, NSUB)
    if kind == _STATS:
        shift = _channel_shift(x_ptr, c, cmask, S, S_RT, ACC)
        cnt, mean, m2 = _item_stats(x_ptr, c, cmask, shift, v0, v1, V, C, KEEPV, IDX, S, S_RT, S_MG, FLAT, L, AL, CB,
                                    BS, STAGES, KEEP, ACC)
        # Read by every item (a few bytes), used by the block's last: their latency runs beside its merges.
        running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cmask, mom_hi, mom_lo, ACC,
                                 UPDATE_RUNNING and not STATS_ONLY, MOMENTUM_NONE)
        # The channel block's statistics: the item's own where the block is one item; else the last item of a
        # sub-group merges its partials (fixed shapes and order), and where there are several sub-groups the last
        # of them merges theirs. Each level is an arrival and a merge on the launch's critical path.
        fmean = mean
        fm2 = m2
        last = SPLIT == 1
        if SPLIT > 1:
            _store_partial(part_ptr + c * SPLIT + j, C * SPLIT, cmask, cnt, mean, m2)
            jj = j // MSUB
            j0 = jj * MSUB
            j1 = tl.minimum(j0 + MSUB, SPLIT)
            if _arrive(sub_ptr + cb * NSUB + jj, j1 - j0):
                sn_, fmean, fm2 = _merge_partials(part_ptr, c, cmask, j0, j1, C * SPLIT, SPLIT, MS, CB, ACC)
                last = NSUB == 1
                if NSUB > 1:
                    _store_partial(p2_ptr + c * NSUB + jj, C * NSUB, cmask, sn_, fmean, fm2)
                    last = _arrive(blk_ptr + cb, NSUB)
                    if last:
                        _, fmean, fm2 = _merge_partials(p2_ptr, c, cmask, 0, NSUB, C * NSUB, NSUB, MS, CB, ACC)
        if last:
            if STATS_ONLY:
                tl.store(out_a_ptr + c, (shift + fmean).to(out_a_ptr.dtype.element_ty), mask=cmask)
                tl.store(out_a_ptr + C + c, fm2.to(out_a_ptr.dtype.element_ty), mask=cmask)
                if cb == 0:
                    tl.store(out_a_ptr + 2 * C, _hl(cnt_hi, cnt_lo, ACC).to(out_a_ptr.dtype.element_ty))
            else:
                count = _hl(cnt_hi, cnt_lo, ACC)
                var = fm2 / count
                _save_batch_stats(out_a_ptr, out_b_ptr, out_c_ptr, rm_ptr, rv_ptr, c, cmask, shift, fmean,
                                  _invstd(var, _hl(eps_hi, eps_lo, ACC), ACC), var, count, running, UPDATE_RUNNING)
                if MODE == 0:
                    if _arrive(grp_ptr + g, NCB_G):
                        tl.atomic_xchg(ready_ptr + g, 1, sem="release", scope="gpu")
    elif MODE == 0:
        _pass_ready(ready_ptr, G, g, K)
        shift = tl.load(out_a_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg")
        mrel = tl.load(out_b_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg")
        rstd = tl.load(out_c_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg")
        scale = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
        beta = _load_param(b_ptr, c, cmask, HAS_B, 0.0, ACC)
        _apply_tiles(x_ptr, y_ptr, z_ptr, c, cmask, shift, mrel, scale, beta, v0, v1, C,
                     IDX, S, S_RT, S_MG, FLAT, L, BS, STAGES, HAS_Z, RELU, ACC)


@triton.jit(do_not_specialize=["S_MG"])
def _bn_apply_kernel(
    x_ptr, y_ptr, z_ptr, w_ptr, b_ptr,
    mean_ptr, mrel_ptr, sd_ptr,  # sd: invstd, or the variance when IS_VAR
    save_mean_ptr, save_rstd_ptr,
    peers_ptr, flags_ptr, count_out_ptr, var_out_ptr, rm_ptr, rv_ptr, nbt_ptr,  # PEERS only
    C, V, VPI, SPLIT,
    eps_hi, eps_lo, rank, R, FLAGS, mom_hi, mom_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr,
    HAS_MREL: tl.constexpr, IS_VAR: tl.constexpr, SAVE: tl.constexpr,
    HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_Z: tl.constexpr, RELU: tl.constexpr, FIX_GAMMA: tl.constexpr,
    PEERS: tl.constexpr, XB: tl.constexpr, TIMEOUT_NS: tl.constexpr, UPDATE_RUNNING: tl.constexpr,
    MOMENTUM_NONE: tl.constexpr, REV: tl.constexpr,
):
    """One pass: y = act(w·((x - mean) - mean_rel)·invstd + b + z). With IS_VAR, invstd = 1/sqrt(var + eps)
    (evaluation from running statistics); SAVE writes mean and invstd out for the backward. REV: the chunks from
    the last down (``_pass_item``).

    PEERS (SyncBatchNorm's forward exchange): the launch's first program merges the R ranks' packed
    statistics from their symmetric buffers (``_bn_merge_stats_kernel``'s fold, XB channels a step) into
    save_mean, var_out, save_rstd, count_out (and the running statistics), and the others wait for it."""
    if PEERS:
        first, e = _exchange_begin(peers_ptr, flags_ptr, rank, R, FLAGS, 0, TIMEOUT_NS)
        if first:
            for c0 in range(0, C, XB):
                cc = c0 + tl.arange(0, XB)
                cm = cc < C
                running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, cc, cm, mom_hi, mom_lo, ACC, UPDATE_RUNNING,
                                         MOMENTUM_NONE)
                n = tl.zeros([XB], ACC)
                mu = tl.zeros([XB], ACC)
                m2 = tl.zeros([XB], ACC)
                for r in range(0, R):
                    base = _peer(peers_ptr, r, tl.float32)
                    nb = tl.load(base + 2 * C, volatile=True).to(ACC)
                    mb = tl.load(base + cc, mask=cm, other=0.0, volatile=True).to(ACC)
                    qb = tl.load(base + C + cc, mask=cm, other=0.0, volatile=True).to(ACC)
                    n, mu, m2 = _fold_shard(n, mu, m2, nb, mb, qb)
                _merged_outputs(count_out_ptr, save_mean_ptr, var_out_ptr, save_rstd_ptr, rm_ptr, rv_ptr, cc, cm,
                                n, mu, m2, eps_hi, eps_lo, running, c0 == 0, ACC, True, UPDATE_RUNNING)
        _exchange_combined(peers_ptr, flags_ptr, rank, R, FLAGS, first, e, 0, TIMEOUT_NS)
        j, c, cmask, v0, v1 = _pass_item(C, V, VPI, CB, IDX, REV)
        mean = tl.load(save_mean_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg").to(ACC)
        mrel = tl.zeros([CB], ACC)
        rstd = tl.load(save_rstd_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg").to(ACC)
        _exchange_finish(flags_ptr, R, e, tl.num_programs(0), 0)
    else:
        j, c, cmask, v0, v1 = _pass_item(C, V, VPI, CB, IDX, REV)
        mean, mrel = _channel_center(mean_ptr, mrel_ptr, c, cmask, HAS_MREL, CB, ACC)
        rstd = _channel_rstd(sd_ptr, c, cmask, eps_hi, eps_lo, IS_VAR, ACC)
        if SAVE:
            if j == 0:
                tl.store(save_mean_ptr + c, mean, mask=cmask)
                tl.store(save_rstd_ptr + c, rstd, mask=cmask)
    scale = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
    beta = _load_param(b_ptr, c, cmask, HAS_B, 0.0, ACC)
    _apply_tiles(x_ptr, y_ptr, z_ptr, c, cmask, mean, mrel, scale, beta, v0, v1, C,
                 IDX, S, S_RT, S_MG, FLAT, L, BS, STAGES, HAS_Z, RELU, ACC)


@triton.jit
def _flat_window(blk, i0, i, numel, S_RT, C_RT, S_MG, C_MG, S: tl.constexpr, C: tl.constexpr, FLAT: tl.constexpr,
                 BLOCK: tl.constexpr, WIN: tl.constexpr):
    """The channels a flat pointwise block [i0, i0 + BLOCK) of program ``blk`` can touch (see
    ``_bn_apply_flat_kernel``) -> (channel of each of the WIN slots, the slots in use, the slots whose channel's run
    in image 0 starts in this block (FLAT: every channel, in the first block), each element's slot)."""
    t = tl.arange(0, WIN)
    if FLAT:
        cw = t
        wm = t < C
        first = wm & (t * 0 + blk == 0)  # the first block (as a vector: the interpreter's masks)
        slot = (i % C).to(tl.int32)
    else:
        sz = S if S > 0 else S_RT * (-S)
        nc = C if C > 0 else C_RT
        q0 = _divided(i0, S, S_RT, S_MG, 0)
        qw = q0 + t
        cw = (qw - _divided(qw, C, C_RT, C_MG, 0) * nc).to(tl.int32)
        wm = qw <= _divided(tl.minimum(i0 + BLOCK, numel) - 1, S, S_RT, S_MG, 0)  # the runs the block holds
        first = wm & (qw < nc) & (qw * sz >= i0)  # image 0's run of each channel, by the block holding its start
        # As arguments, S's power-of-two factor p = −S (<= 16 <= BLOCK) is compiled in: the quotient of i is the same
        # over aligned runs of p (i0 is a multiple of BLOCK), which lets each thread form one per run, as Triton
        # derives where S is compiled in.
        tl.static_assert(S > 0 or -S <= BLOCK)
        slot = (_divided(i, S, S_RT, S_MG, -S if S < 0 else 0) - q0).to(tl.int32)
    return cw, wm, first, slot


@triton.jit(do_not_specialize=["S_RT", "C_RT", "S_MG", "C_MG"])
def _bn_apply_flat_kernel(
    x_ptr, y_ptr, z_ptr, w_ptr, b_ptr, mean_ptr, mrel_ptr, sd_ptr, save_mean_ptr, save_rstd_ptr, numel, eps_hi, eps_lo,
    S_RT, C_RT, S_MG, C_MG,
    S: tl.constexpr, C: tl.constexpr, FLAT: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr,
    WIN: tl.constexpr, HAS_MREL: tl.constexpr, IS_VAR: tl.constexpr, SAVE: tl.constexpr, HAS_W: tl.constexpr,
    HAS_B: tl.constexpr, FIX_GAMMA: tl.constexpr, HAS_Z: tl.constexpr, RELU: tl.constexpr, REV: tl.constexpr,
):
    """The one-pass forward (``_bn_apply_kernel``'s y) as a flat pointwise kernel over a dense x, BLOCK consecutive
    elements a program (REV: the last block first, ``config.BN_APPLY_REVERSE``): element i belongs to channel
    (i // S) % C (NCHW) or i % C (FLAT: channels-last rows), S and C compiled in (divisions by constants), or in NCHW
    with S < 0 and C = −1 as arguments: S = −S·S_RT as the tile kernels take it and C = C_RT, with their magic numbers
    S_MG and C_MG (past ``config.BN_SPATIAL_COMPILED`` sizes, ``_spatial``; quotients by ``_divided``). A program
    first forms the per-channel values of the WIN channel slots its block can touch — NCHW: the runs q = i // S from
    its first one, q0, on; FLAT: every channel (WIN >= C) — as ``_bn_apply_kernel`` forms them per item, then gathers
    each element's from registers. SAVE: each channel's mean and invstd are written out once for the backward, by the
    program holding the start of the channel's run in image 0 (NCHW; FLAT: the first block)."""
    blk = tl.program_id(0)
    if REV:
        blk = tl.num_programs(0) - 1 - blk
    i0 = blk.to(IDX) * BLOCK
    i = i0 + tl.arange(0, BLOCK).to(IDX)
    m = i < numel
    cw, wm, first, slot = _flat_window(blk, i0, i, numel, S_RT, C_RT, S_MG, C_MG, S, C, FLAT, BLOCK, WIN)
    mean_w, mrel_w = _channel_center(mean_ptr, mrel_ptr, cw, wm, HAS_MREL, WIN, ACC)
    rstd_w = _channel_rstd(sd_ptr, cw, wm, eps_hi, eps_lo, IS_VAR, ACC)
    if SAVE:
        tl.store(save_mean_ptr + cw, mean_w, mask=first)
        tl.store(save_rstd_ptr + cw, rstd_w, mask=first)
    scale_w = _weight_scale(w_ptr, rstd_w, cw, wm, HAS_W, FIX_GAMMA, ACC)
    beta_w = _load_param(b_ptr, cw, wm, HAS_B, 0.0, ACC)
    _apply_tile(tl.load(x_ptr + i, mask=m, other=0.0), i, m, y_ptr, z_ptr, tl.gather(mean_w, slot, 0),
                tl.gather(mrel_w, slot, 0), tl.gather(scale_w, slot, 0), tl.gather(beta_w, slot, 0), HAS_Z, RELU, ACC)


@triton.jit
def _resident_index(c, cmask, j, V, C, VP: tl.constexpr, IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG,
                    FLAT: tl.constexpr, L: tl.constexpr):
    """Item ``j`` of a channel block, the [CB, VP] tile of inner indices [j·VP, (j + 1)·VP) -> (its element
    offsets, the mask of its real elements)."""
    v = tl.cast(j, IDX) * VP + tl.arange(0, VP).to(IDX)
    return _tile_offsets(c, v, C, S, S_RT, S_MG, FLAT, L), cmask[:, None] & ((v < V) & _lanes_ok(v, S, L))[None, :]


@triton.jit
def _resident_item(C, CB: tl.constexpr):
    """This program's item of a single-read launch (program j·NCB + cb) -> (channel blocks NCB, cb, j, channels c,
    their mask)."""
    pid = tl.program_id(0)
    ncb = tl.cdiv(C, CB)
    cb = pid % ncb
    c = cb * CB + tl.arange(0, CB)
    return ncb, cb, pid // ncb, c, c < C


@triton.jit
def _resident_partial(part_ptr, xr, m, shift, c, cmask, j, SPLIT, C, ACC: tl.constexpr):
    """Store the tile's exact two-pass (count, mean, M2) of x - shift as partial ``j`` of its channels."""
    tn, tm, tq = _tile_two_pass(xr.to(ACC) - shift[:, None], m, ACC)
    _store_partial(part_ptr + c * SPLIT + j, C * SPLIT, cmask, tn, tm, tq)


@triton.jit(do_not_specialize=["S_MG"])
def _bn_fwd_resident_kernel(
    x_ptr, y_ptr, z_ptr, w_ptr, b_ptr, shift_ptr, mrel_ptr, rstd_ptr, rm_ptr, rv_ptr, nbt_ptr, part_ptr, sync_ptr,
    C, V, SPLIT, mom_hi, mom_lo, eps_hi, eps_lo, cnt_hi, cnt_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, VP: tl.constexpr, MS: tl.constexpr, SERIAL: tl.constexpr,
    HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_Z: tl.constexpr, RELU: tl.constexpr, FIX_GAMMA: tl.constexpr,
    UPDATE_RUNNING: tl.constexpr, MOMENTUM_NONE: tl.constexpr,
):
    """Single-read training forward: x is read once and held in registers from the statistics to the output.

    Program (j, channel block cb) loads its item — the [CB, VP] tile of inner indices [j·VP, (j + 1)·VP) — and
    stores the tile's exact two-pass (count, mean, M2) of x - K (K = x[0, c, 0]) as partial j; when all SPLIT
    items of the block have stored theirs (``_gather`` on the block's counter), each program merges the SPLIT
    partials in the same fixed order (``_merge_partials``: every program gets bitwise the same statistics) and
    writes y = act(((x - K) - mean_rel)·w·invstd + b + z) from its registers. Program j = 0 writes the saved
    (shift, mean_rel, invstd) and updates the running statistics. All NCB·SPLIT programs must be resident at once:
    the launcher keeps the grid within one program per multiprocessor and launches it cooperatively.

    sync_ptr: 2·NCB zeroed int32 counters (arrivals, then programs past the merge); the last program of a block
    past its merge zeroes both again. SERIAL (the interpreter, which runs programs one after another, so no
    program could wait for a later one): every program computes all SPLIT partials of its block itself (the
    same values each time) and nothing waits.
    """
    ncb, cb, j, c, cmask = _resident_item(C, CB)
    shift = _channel_shift(x_ptr, c, cmask, S, S_RT, ACC)
    off, m = _resident_index(c, cmask, j, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
    xr = tl.load(x_ptr + off, mask=m, other=0.0)
    if SERIAL:
        for jj in range(0, SPLIT):
            off_o, m_o = _resident_index(c, cmask, jj, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
            _resident_partial(part_ptr, tl.load(x_ptr + off_o, mask=m_o, other=0.0), m_o, shift, c, cmask, jj,
                              SPLIT, C, ACC)
        jo = j
    else:
        _resident_partial(part_ptr, xr, m, shift, c, cmask, j, SPLIT, C, ACC)
        # min(j, seen) is j (seen >= SPLIT > j), but the compiler cannot know it: the output's offsets and mask
        # are computed afresh after the wait instead of being held in registers through it beside x.
        jo = tl.minimum(j, _gather(sync_ptr + cb, SPLIT))
    running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cmask & (j == 0), mom_hi, mom_lo, ACC, UPDATE_RUNNING,
                             MOMENTUM_NONE)
    _, mrel, m2 = _merge_partials(part_ptr, c, cmask, 0, SPLIT, C * SPLIT, SPLIT, MS, CB, ACC)
    if not SERIAL:
        if _arrive(sync_ptr + ncb + cb, SPLIT):
            tl.store(sync_ptr + cb, 0)
    count = _hl(cnt_hi, cnt_lo, ACC)
    var = m2 / count
    rstd = _invstd(var, _hl(eps_hi, eps_lo, ACC), ACC)
    if j == 0:
        _save_batch_stats(shift_ptr, mrel_ptr, rstd_ptr, rm_ptr, rv_ptr, c, cmask, shift, mrel, rstd, var, count,
                          running, UPDATE_RUNNING)
    scale = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
    beta = _load_param(b_ptr, c, cmask, HAS_B, 0.0, ACC)
    off, m = _resident_index(c, cmask, jo, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
    _apply_tile(xr, off, m, y_ptr, z_ptr, shift[:, None], mrel[:, None], scale[:, None], beta[:, None], HAS_Z, RELU,
                ACC)


# ---------------------------------------------------------------------------------------------- backward


@triton.jit
def _masked_grad(dy_ptr, y_ptr, off, m, RELU: tl.constexpr, ACC: tl.constexpr, EV: tl.constexpr = ""):
    """g = dy, zeroed where the ReLU output is <= 0 (a NaN output lets the gradient through); loads with eviction
    policy EV."""
    g = tl.load(dy_ptr + off, mask=m, other=0.0, eviction_policy=EV).to(ACC)
    if RELU:
        yv = tl.load(y_ptr + off, mask=m, other=1.0, eviction_policy=EV).to(ACC)
        g = tl.where(yv <= 0, 0.0, g)
    return g


@triton.jit
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@triton.jit
def _xhat_center(shift, mrel, rstd):
    """(ctr, off_r) with x̂ = (x − ctr)·rstd + off_r for mean = shift + mrel = ctr + err exactly (``_two_sum``),
    off_r = −err·rstd (see ``_bwd_tiles``)."""
    ctr, err = _two_sum(shift, mrel)
    return ctr, -err * rstd


@triton.jit
def _xhat_tile(x, ctr, off_r, rstd):
    """x̂ of a [CB, *] tile of x (in the accumulation dtype) from ``_xhat_center``'s (ctr, off_r) and rstd."""
    return (x - ctr[:, None]) * rstd[:, None] + off_r[:, None]


@triton.jit
def _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, shift, mrel, rstd, k1, k2, k3, v0, v1,
               C, KEEPV, IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG, FLAT: tl.constexpr, L: tl.constexpr,
               CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr, RELU: tl.constexpr, SUMS: tl.constexpr,
               DX: tl.constexpr,
               DX_TRAIN: tl.constexpr, DZ: tl.constexpr, KEEP: tl.constexpr, ACC: tl.constexpr):
    """Over channels ``c`` and inner range [v0, v1): with SUMS, return (Σg, Σg·x̂); with DX, write
    dx = k1·g + k2 + k3·x̂ (DX_TRAIN) or dx = k1·g, and dz = g with DZ. KEEP: the tiles of the last KEEPV indices
    load ``evict_last`` (``_kept_from``).

    x̂ = (x - mean)·rstd with mean = shift + mrel = ctr + err exactly (``_two_sum``): x̂ = (x - ctr)·rstd - err·rstd,
    one subtraction (exact for x near the mean) and one multiply-add per element where ((x - shift) - mrel)·rstd
    took three operations. x̂ itself enters the sums and dx, as in the reference, so Inf and NaN in g or x give
    what the reference gives (a correction applied to the sums instead would turn Σg = Inf into NaN)."""
    ctr, off_r = _xhat_center(shift, mrel, rstd)
    sg = tl.zeros([CB, BS], ACC)  # per-lane sums, reduced once at the end (no cross-thread work in the loop)
    sgx = tl.zeros([CB, BS], ACC)
    vk = v1  # the kept tiles' first index (KEEP), else the item's end
    if KEEP:
        vk = _kept_from(v0, v1, KEEPV, BS)
    sg, sgx = _bwd_tile_loop(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, ctr, off_r, rstd, k1, k2, k3, v0, vk, v1,
                             sg, sgx, C, IDX, S, S_RT, S_MG, FLAT, L, BS, STAGES, RELU, SUMS, DX, DX_TRAIN, DZ, "", ACC)
    if KEEP:
        sg, sgx = _bwd_tile_loop(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, ctr, off_r, rstd, k1, k2, k3, vk,
                                 v1, v1, sg, sgx, C, IDX, S, S_RT, S_MG, FLAT, L, BS, STAGES, RELU, SUMS, DX,
                                 DX_TRAIN, DZ, "evict_last", ACC)
    return tl.sum(sg, 1), tl.sum(sgx, 1)


@triton.jit
def _bwd_tile_loop(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, ctr, off_r, rstd, k1, k2, k3, vs0, vs1, v1,
                   sg, sgx, C, IDX: tl.constexpr, S: tl.constexpr, S_RT, S_MG, FLAT: tl.constexpr, L: tl.constexpr,
                   BS: tl.constexpr, STAGES: tl.constexpr, RELU: tl.constexpr, SUMS: tl.constexpr, DX: tl.constexpr,
                   DX_TRAIN: tl.constexpr, DZ: tl.constexpr, EV: tl.constexpr, ACC: tl.constexpr):
    """``_bwd_tiles``' work over its tiles starting at vs0, vs0 + BS, .. below vs1 (v1: the item's end), the per-lane
    sums carried in and out, the loads with eviction policy EV."""
    NEED_X: tl.constexpr = SUMS or (DX and DX_TRAIN)
    ar = tl.arange(0, BS).to(IDX)
    KS: tl.constexpr = STAGES if EV == "" else 1  # hinted loads unpipelined (``_kept_from``)
    for vs in tl.range(vs0, vs1, BS, num_stages=KS):
        v = vs + ar
        m = cmask[:, None] & ((v < v1) & _lanes_ok(v, S, L))[None, :]
        off = _tile_offsets(c, v, C, S, S_RT, S_MG, FLAT, L)
        g = _masked_grad(dy_ptr, y_ptr, off, m, RELU, ACC, EV)
        if NEED_X:
            xv = tl.load(x_ptr + off, mask=m, other=0.0, eviction_policy=EV).to(ACC)
            xh = _xhat_tile(xv, ctr, off_r, rstd)
        if SUMS:
            sg += g
            sgx += tl.where(m, g * xh, 0.0)
        if DX:
            if DX_TRAIN:
                dx = k1[:, None] * g + (k2[:, None] + k3[:, None] * xh)
            else:
                dx = k1[:, None] * g
            tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=m)
            if DZ:
                tl.store(dz_ptr + off, g.to(dz_ptr.dtype.element_ty), mask=m)
    return sg, sgx


@triton.jit
def _aligned_bwd_sums(dy_ptr, x_ptr, y_ptr, c, cmask, shift, mrel, rstd, v0, v1, C, S_RT, S_MG, KEEPV,
                      AL: tl.constexpr, IDX: tl.constexpr, CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr,
                      RELU: tl.constexpr, KEEP: tl.constexpr, ACC: tl.constexpr):
    """``_bwd_tiles``' sums (Σg, Σg·x̂) over aligned rows of AL·M lanes (``_aligned_rows``; v0 and v1 multiples of AL):
    dy, x (and y) load as the whole aligned vectors that overlap a run; the lanes outside their run are left out of
    the per-lane sums, which are reduced once at the end. x̂ as in ``_bwd_tiles``; KEEP as there."""
    WB: tl.constexpr = BS // AL
    ctr, off_r = _xhat_center(shift, mrel, rstd)
    sg = tl.zeros([CB, AL, WB], ACC)
    sgx = tl.zeros([CB, AL, WB], ACC)
    w0 = v0 // AL
    w1 = v1 // AL
    wk = w1  # the kept tiles' first vector (KEEP), else the item's end
    if KEEP:
        wk = _kept_from(w0, w1, tl.cdiv(KEEPV, AL), WB)
    sg, sgx = _aligned_sum_lanes(dy_ptr, x_ptr, y_ptr, c, cmask, ctr, off_r, rstd, w0, wk, w1, sg, sgx, C, S_RT, S_MG,
                                 AL, IDX, WB, STAGES, RELU, "", ACC)
    if KEEP:
        sg, sgx = _aligned_sum_lanes(dy_ptr, x_ptr, y_ptr, c, cmask, ctr, off_r, rstd, wk, w1, w1, sg, sgx, C, S_RT,
                                     S_MG, AL, IDX, WB, STAGES, RELU, "evict_last", ACC)
    return tl.sum(tl.sum(sg, 1), 1), tl.sum(tl.sum(sgx, 1), 1)


@triton.jit
def _aligned_sum_lanes(dy_ptr, x_ptr, y_ptr, c, cmask, ctr, off_r, rstd, w0, w1, w_end, sg, sgx, C, S_RT, S_MG,
                       AL: tl.constexpr, IDX: tl.constexpr, WB: tl.constexpr, STAGES: tl.constexpr, RELU: tl.constexpr,
                       EV: tl.constexpr, ACC: tl.constexpr):
    """``_aligned_bwd_sums``' per-lane sums over the tiles of vectors w0 .. w1 - 1 (w_end: the item's end), the loads
    with eviction policy EV."""
    ar = tl.arange(0, WB).to(IDX)
    KS: tl.constexpr = STAGES if EV == "" else 1  # hinted loads unpipelined (``_kept_from``)
    for ws in tl.range(w0, w1, WB, num_stages=KS):
        off, _, vm, m = _aligned_rows(c, cmask, ws + ar, w_end, C, S_RT, S_MG, AL)
        lm = vm[:, None, :]
        g = _masked_grad(dy_ptr, y_ptr, off, lm, RELU, ACC, EV)
        xh = (tl.load(x_ptr + off, mask=lm, other=0.0, eviction_policy=EV).to(ACC) - ctr[:, None, None]) \
            * rstd[:, None, None] + off_r[:, None, None]
        sg += tl.where(m, g, 0.0)
        sgx += tl.where(m, g * xh, 0.0)
    return sg, sgx


@triton.jit
def _store_param_grads(dw_ptr, db_ptr, c, cmask, sg, sgx, FIX_GAMMA: tl.constexpr, WRITE_DW: tl.constexpr,
                       WRITE_DB: tl.constexpr):
    """db = Σg and dw = Σg·x̂ (0 under FIX_GAMMA, also where Σg·x̂ is NaN, as the reference) for channels ``c``."""
    if WRITE_DB:
        tl.store(db_ptr + c, sg.to(db_ptr.dtype.element_ty), mask=cmask)
    if WRITE_DW:
        if FIX_GAMMA:
            sgx = tl.zeros_like(sgx)
        tl.store(dw_ptr + c, sgx.to(dw_ptr.dtype.element_ty), mask=cmask)


@triton.jit(do_not_specialize=["S_MG", "KEEPV"])
def _bn_bwd_fused_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr,
    shift_ptr, mrel_ptr, rstd_ptr,
    dw_ptr, db_ptr, sums_ptr,  # sums_ptr: fp32/fp64 [2, C] (Σg, Σg·x̂) out
    part_ptr, sync_ptr, count_ptr,
    peers_ptr, flags_ptr, rank, R, FLAGS, SUMS_AT,
    C, V, VPI, SPLIT, NSUB, G, NCB_G, LAG, KEEPV,
    cnt_hi, cnt_lo, eps_hi, eps_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr, MSUB: tl.constexpr, MS: tl.constexpr,
    MODE: tl.constexpr,  # 0: training (sums, then dx), 1: sums only, 2: frozen (dx and sums in one pass)
    IS_VAR: tl.constexpr, HAS_MREL: tl.constexpr,
    HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr, DZ: tl.constexpr,
    WRITE_DW: tl.constexpr, WRITE_DB: tl.constexpr,
    PEERS: tl.constexpr, XB: tl.constexpr, TIMEOUT_NS: tl.constexpr, AL: tl.constexpr, KEEP: tl.constexpr,
):
    """Backward with parameter sums. Partials part_ptr[2, C, SPLIT] then [2, C, NSUB]; sync and merge
    hierarchy as in the forward (sub-group, channel block, group).

    AL > 0 (MODE 1): the sums read NCHW runs as aligned rows of AL-element vectors (``_aligned_bwd_sums``; S = −1,
    S_RT the spatial size, S_MG the magic number of the rows' vectors per image, V = N·AL·M).

    Training: dx = w·invstd·(g - Σg/n - x̂·Σg·x̂/n), dz = g, n = cnt_hi + cnt_lo or, with PEERS (the group's
    count), read at count_ptr. Frozen: dx = w·invstd·g. Both write dw = Σg·x̂ (0 under FIX_GAMMA) and db = Σg
    when asked, and the fp32 sums to sums_ptr.

    PEERS (training, SyncBatchNorm; the launch needs LAG >= G: every sums item before any dx item): the sums
    are the R ranks'. Each rank's channel blocks write its sums into its symmetric buffer at SUMS_AT, in the
    half of epoch e's parity (two halves: a rank writes epoch e + 2 only after reading every peer's epoch
    e + 1, which each peer wrote after its epoch-e launch had read this rank's epoch e — so no "read" handshake
    is needed). The item completing the last group tells every peer, waits for theirs, adds the R ranks' sums
    in rank order into sums_ptr (XB channels a step) and releases the dx items (collected). The R ranks may
    cut the channels into groups differently: the exchange covers all channels at once.
    """
    tl.static_assert(AL == 0 or MODE == 1, "aligned rows: the sums-only launch alone (the others write dx)")
    K = NCB_G * SPLIT
    if PEERS:
        e = _epoch(flags_ptr, R, 1)
        half = SUMS_AT + (e & 1) * 2 * C  # this epoch's half of every rank's sums
        own_ptr = _peer(peers_ptr, rank, tl.float32) + half
    if MODE == 0:
        kind, g, i = _schedule(_take_ticket(sync_ptr), G, K, LAG)
    else:
        kind = _STATS
        g = tl.program_id(0) // K
        i = tl.program_id(0) % K
    cb, j, c, cmask, v0, v1 = _item_extent(i, g, C, V, VPI, NCB_G, CB, IDX)
    p2_ptr = part_ptr + 2 * C * SPLIT
    sub_ptr, blk_ptr, grp_ptr, ready_ptr, done_ptr = _sync_counters(sync_ptr, G, NCB_G, NSUB)
    shift, mrel = _channel_center(shift_ptr, mrel_ptr, c, cmask, HAS_MREL, CB, ACC)
    rstd = _channel_rstd(rstd_ptr, c, cmask, eps_hi, eps_lo, IS_VAR, ACC)
    k1 = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
    if kind == _STATS:
        if MODE == 2:
            sg, sgx = _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, shift, mrel, rstd, k1, k1, k1,
                                 v0, v1, C, 0, IDX, S, S_RT, S_MG, FLAT, L, CB, BS, STAGES, RELU, True, True, False, DZ,
                                 False, ACC)
        elif AL > 0:
            sg, sgx = _aligned_bwd_sums(dy_ptr, x_ptr, y_ptr, c, cmask, shift, mrel, rstd, v0, v1, C, S_RT, S_MG,
                                        KEEPV, AL, IDX, CB, BS, STAGES, RELU, KEEP, ACC)
        else:
            sg, sgx = _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, shift, mrel, rstd, k1, k1, k1,
                                 v0, v1, C, KEEPV, IDX, S, S_RT, S_MG, FLAT, L, CB, BS, STAGES, RELU, True, False,
                                 False, False, KEEP, ACC)
        # The channel block's sums, as the forward's statistics: the item's own where the block is one item, else
        # one or two levels of merges.
        fa = sg
        fb = sgx
        last = SPLIT == 1
        if SPLIT > 1:
            p = part_ptr + c * SPLIT + j
            tl.store(p, sg, mask=cmask)
            tl.store(p + C * SPLIT, sgx, mask=cmask)
            jj = j // MSUB
            j0 = jj * MSUB
            j1 = tl.minimum(j0 + MSUB, SPLIT)
            if _arrive(sub_ptr + cb * NSUB + jj, j1 - j0):
                fa, fb = _sum_partials(part_ptr, c, cmask, j0, j1, C * SPLIT, SPLIT, MS, CB, ACC)
                last = NSUB == 1
                if NSUB > 1:
                    q = p2_ptr + c * NSUB + jj
                    tl.store(q, fa, mask=cmask)
                    tl.store(q + C * NSUB, fb, mask=cmask)
                    last = _arrive(blk_ptr + cb, NSUB)
                    if last:
                        fa, fb = _sum_partials(p2_ptr, c, cmask, 0, NSUB, C * NSUB, NSUB, MS, CB, ACC)
        if last:
            if PEERS:
                tl.store(own_ptr + c, fa, mask=cmask)
                tl.store(own_ptr + C + c, fb, mask=cmask)
            else:
                tl.store(sums_ptr + c, fa, mask=cmask)
                tl.store(sums_ptr + C + c, fb, mask=cmask)
            _store_param_grads(dw_ptr, db_ptr, c, cmask, fa, fb, FIX_GAMMA, WRITE_DW, WRITE_DB)
            if MODE == 0:
                if _arrive(grp_ptr + g, NCB_G):
                    if PEERS:
                        if _arrive(done_ptr, G):  # the last group: all of this rank's sums are in
                            _add_peer_sums(peers_ptr, flags_ptr, sums_ptr, rank, R, FLAGS, half, C, e, XB,
                                           TIMEOUT_NS, ACC)
                    else:
                        tl.atomic_xchg(ready_ptr + g, 1, sem="release", scope="gpu")
    elif MODE == 0:
        if PEERS:
            _wait_collected(flags_ptr, R, e, 1)
        else:
            _pass_ready(ready_ptr, G, g, K)
        fa = tl.load(sums_ptr + c, mask=cmask, other=0.0, cache_modifier=".cg")
        fb = tl.load(sums_ptr + C + c, mask=cmask, other=0.0, cache_modifier=".cg")
        if PEERS:
            count = tl.load(count_ptr).to(ACC)
        else:
            count = _hl(cnt_hi, cnt_lo, ACC)
        k2 = -k1 * (fa / count)
        k3 = -k1 * (fb / count)
        _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, shift, mrel, rstd, k1, k2, k3,
                   v0, v1, C, 0, IDX, S, S_RT, S_MG, FLAT, L, CB, BS, STAGES, RELU, False, True, True, DZ, False, ACC)
    if PEERS:
        _exchange_finish(flags_ptr, R, e, tl.num_programs(0), 1)


@triton.jit
def _add_peer_sums(peers_ptr, flags_ptr, total_ptr, rank, R, FLAGS, AT, C, e, XB: tl.constexpr,
                   TIMEOUT_NS: tl.constexpr, ACC: tl.constexpr):
    """SyncBatchNorm's backward exchange, by the one program that completes this rank's sums (epoch e): tell
    every peer they are in place (ready[1]), wait for theirs, add the R ranks' [Σg | Σg·x̂] at word AT of their
    buffers in rank order into total_ptr (XB channels a step), then release this launch's dx items
    (collected[1] = e)."""
    tl.debug_barrier()
    _tell_peers(peers_ptr, rank, R, FLAGS + R, e)
    _wait_peers(flags_ptr, rank, R, R, e, TIMEOUT_NS)
    for c0 in range(0, C, XB):
        cc = c0 + tl.arange(0, XB)
        cm = cc < C
        ta = tl.zeros([XB], ACC)
        tb = tl.zeros([XB], ACC)
        for r in range(0, R):
            base = _peer(peers_ptr, r, tl.float32) + AT
            ta += tl.load(base + cc, mask=cm, other=0.0, volatile=True).to(ACC)
            tb += tl.load(base + C + cc, mask=cm, other=0.0, volatile=True).to(ACC)
        tl.store(total_ptr + cc, ta, mask=cm)
        tl.store(total_ptr + C + cc, tb, mask=cm)
    _release_collected(flags_ptr, R, e, 1)


@triton.jit(do_not_specialize=["S_MG"])
def _bn_bwd_dx_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr,
    mean_ptr, mrel_ptr, sd_ptr, sums_ptr, count_ptr,
    C, V, VPI, SPLIT,
    cnt_hi, cnt_lo, eps_hi, eps_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr,
    TRAIN: tl.constexpr, COUNT_PTR: tl.constexpr, IS_VAR: tl.constexpr, HAS_MREL: tl.constexpr,
    HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr, DZ: tl.constexpr, REV: tl.constexpr,
):
    """One pass of dx (and dz = g): TRAIN from given sums sums_ptr[2, C] and count (a float, or a device
    scalar with COUNT_PTR); otherwise frozen dx = w·invstd·g. REV: the chunks from the last down (``_pass_item``)."""
    _, c, cmask, v0, v1 = _pass_item(C, V, VPI, CB, IDX, REV)
    if TRAIN:
        fa = tl.load(sums_ptr + c, mask=cmask, other=0.0).to(ACC)
        fb = tl.load(sums_ptr + C + c, mask=cmask, other=0.0).to(ACC)
    rstd = _channel_rstd(sd_ptr, c, cmask, eps_hi, eps_lo, IS_VAR, ACC)
    k1 = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
    if TRAIN:
        mean, mrel = _channel_center(mean_ptr, mrel_ptr, c, cmask, HAS_MREL, CB, ACC)
        if COUNT_PTR:
            n = tl.load(count_ptr).to(ACC)
        else:
            n = _hl(cnt_hi, cnt_lo, ACC)
        k2 = -k1 * (fa / n)
        k3 = -k1 * (fb / n)
        _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, mean, mrel, rstd, k1, k2, k3,
                   v0, v1, C, 0, IDX, S, S_RT, S_MG, FLAT, L, CB, BS, STAGES, RELU, False, True, True, DZ, False, ACC)
    else:
        _bwd_tiles(dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, c, cmask, rstd, rstd, rstd, k1, k1, k1,
                   v0, v1, C, 0, IDX, S, S_RT, S_MG, FLAT, L, CB, BS, STAGES, RELU, False, True, False, DZ, False, ACC)


@triton.jit
def _resident_grad(dy, y, RELU: tl.constexpr, ACC: tl.constexpr):
    """g = dy of an item held in registers (0 past its end: loaded so), zeroed where the ReLU output y is <= 0 (as
    ``_masked_grad``)."""
    g = dy.to(ACC)
    if RELU:
        g = tl.where(y.to(ACC) <= 0, 0.0, g)
    return g


@triton.jit
def _resident_bwd_partial(part_ptr, dy, x, y, m, ctr, off_r, rstd, c, cmask, j, SPLIT, C, RELU: tl.constexpr,
                          ACC: tl.constexpr):
    """Store the item's (Σg, Σg·x̂) as partial ``j`` of its channels (``_sum_partials``' layout)."""
    g = _resident_grad(dy, y, RELU, ACC)
    xh = _xhat_tile(x.to(ACC), ctr, off_r, rstd)
    p = part_ptr + c * SPLIT + j
    tl.store(p, tl.sum(g, 1), mask=cmask)
    tl.store(p + C * SPLIT, tl.sum(tl.where(m, g * xh, 0.0), 1), mask=cmask)


@triton.jit(do_not_specialize=["S_MG"])
def _bn_bwd_resident_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr, shift_ptr, mrel_ptr, rstd_ptr, dw_ptr, db_ptr, sums_ptr,
    part_ptr, sync_ptr,
    C, V, SPLIT, cnt_hi, cnt_lo,
    S_RT, S_MG,
    S: tl.constexpr, FLAT: tl.constexpr, L: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr,
    CB: tl.constexpr, VP: tl.constexpr, MS: tl.constexpr, SERIAL: tl.constexpr,
    HAS_MREL: tl.constexpr, HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr, DZ: tl.constexpr,
    WRITE_DW: tl.constexpr, WRITE_DB: tl.constexpr,
):
    """Single-read training backward: dy and x (and y with RELU) are read once and held in registers from the sums
    to dx — the single-read forward's schedule (``_bn_fwd_resident_kernel``) with sums for statistics.

    Program (j, channel block cb) loads its item, stores the item's (Σg, Σg·x̂) as partial j; when all SPLIT items
    of the block have stored theirs (``_gather``), each program adds the SPLIT partials in the same fixed order
    (``_sum_partials``: every program gets bitwise the same sums) and writes dx = k1·g + k2 + k3·x̂ (k1 = w·invstd,
    k2 = −k1·Σg/n, k3 = −k1·Σg·x̂/n) and dz = g with DZ from its registers. Program j = 0 writes the sums [2, C] to
    sums_ptr and dw = Σg·x̂, db = Σg. x̂ as ``_bwd_tiles`` forms it. g and x̂ are formed twice, for the partial and
    for dx, from the loads held as loaded: what crosses the wait is dy and x in their own dtype (the budget
    ``config.batch_norm_resident_held_bytes`` counts), not fp32 g and x̂. All NCB·SPLIT programs must be resident at
    once (a cooperative launch of at most one program per multiprocessor); sync_ptr and SERIAL as in the forward.
    """
    ncb, cb, j, c, cmask = _resident_item(C, CB)
    shift, mrel = _channel_center(shift_ptr, mrel_ptr, c, cmask, HAS_MREL, CB, ACC)
    rstd = tl.load(rstd_ptr + c, mask=cmask, other=1.0).to(ACC)
    ctr, off_r = _xhat_center(shift, mrel, rstd)
    off, m = _resident_index(c, cmask, j, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
    dyr = tl.load(dy_ptr + off, mask=m, other=0.0)
    xr = tl.load(x_ptr + off, mask=m, other=0.0)
    yr = dyr  # (y is read only with RELU)
    if RELU:
        yr = tl.load(y_ptr + off, mask=m, other=1.0)
    if SERIAL:
        for jj in range(0, SPLIT):
            off_o, m_o = _resident_index(c, cmask, jj, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
            dy_o = tl.load(dy_ptr + off_o, mask=m_o, other=0.0)
            y_o = dy_o
            if RELU:
                y_o = tl.load(y_ptr + off_o, mask=m_o, other=1.0)
            _resident_bwd_partial(part_ptr, dy_o, tl.load(x_ptr + off_o, mask=m_o, other=0.0), y_o, m_o, ctr, off_r,
                                  rstd, c, cmask, jj, SPLIT, C, RELU, ACC)
        jo = j
    else:
        _resident_bwd_partial(part_ptr, dyr, xr, yr, m, ctr, off_r, rstd, c, cmask, j, SPLIT, C, RELU, ACC)
        jo = tl.minimum(j, _gather(sync_ptr + cb, SPLIT))  # as the forward: offsets formed again after the wait
    fa, fb = _sum_partials(part_ptr, c, cmask, 0, SPLIT, C * SPLIT, SPLIT, MS, CB, ACC, True)
    if not SERIAL:
        if _arrive(sync_ptr + ncb + cb, SPLIT):
            tl.store(sync_ptr + cb, 0)
    if j == 0:
        tl.store(sums_ptr + c, fa, mask=cmask)
        tl.store(sums_ptr + C + c, fb, mask=cmask)
        _store_param_grads(dw_ptr, db_ptr, c, cmask, fa, fb, FIX_GAMMA, WRITE_DW, WRITE_DB)
    k1 = _weight_scale(w_ptr, rstd, c, cmask, HAS_W, FIX_GAMMA, ACC)
    count = _hl(cnt_hi, cnt_lo, ACC)
    k2 = -k1 * (fa / count)
    k3 = -k1 * (fb / count)
    off, m = _resident_index(c, cmask, jo, V, C, VP, IDX, S, S_RT, S_MG, FLAT, L)
    g = _resident_grad(dyr, yr, RELU, ACC)
    xh = _xhat_tile(xr.to(ACC), ctr, off_r, rstd)
    dx = k1[:, None] * g + (k2[:, None] + k3[:, None] * xh)
    tl.store(dx_ptr + off, dx.to(dx_ptr.dtype.element_ty), mask=m)
    if DZ:
        tl.store(dz_ptr + off, g.to(dz_ptr.dtype.element_ty), mask=m)


@triton.jit(do_not_specialize=["S_RT", "C_RT", "S_MG", "C_MG"])
def _bn_bwd_dx_flat_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr, mean_ptr, mrel_ptr, sd_ptr, sums_ptr, count_ptr, numel,
    cnt_hi, cnt_lo, eps_hi, eps_lo, S_RT, C_RT, S_MG, C_MG,
    S: tl.constexpr, C: tl.constexpr, FLAT: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr,
    WIN: tl.constexpr, TRAIN: tl.constexpr, COUNT_PTR: tl.constexpr, IS_VAR: tl.constexpr, HAS_MREL: tl.constexpr,
    HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr, DZ: tl.constexpr,
):
    """``_bn_bwd_dx_kernel``'s pass as a flat pointwise kernel over dense x, dy (and y), BLOCK consecutive elements a
    program, with the channels of its block found as ``_bn_apply_flat_kernel`` finds them (``_flat_window``): each
    of the WIN channel slots gets k1 = w·invstd and, TRAIN, k2 = −k1·(Σg)/n, k3 = −k1·(Σg·x̂)/n and x̂'s centre,
    invstd and compensation (``_bwd_tiles``: x̂ itself, as there, so that an Inf in dy gives what the reference gives
    — folding the compensation into k2 turned it into NaN); each element gathers its channel's and writes
    dx = k1·g + k2 + k3·x̂ (TRAIN) or k1·g, and dz = g with DZ."""
    blk = tl.program_id(0)
    i0 = blk.to(IDX) * BLOCK
    i = i0 + tl.arange(0, BLOCK).to(IDX)
    m = i < numel
    cw, wm, _, slot = _flat_window(blk, i0, i, numel, S_RT, C_RT, S_MG, C_MG, S, C, FLAT, BLOCK, WIN)
    rstd_w = _channel_rstd(sd_ptr, cw, wm, eps_hi, eps_lo, IS_VAR, ACC)
    k1_w = _weight_scale(w_ptr, rstd_w, cw, wm, HAS_W, FIX_GAMMA, ACC)
    g = _masked_grad(dy_ptr, y_ptr, i, m, RELU, ACC, "")
    if TRAIN:
        nc = C if C > 0 else C_RT
        fa = tl.load(sums_ptr + cw, mask=wm, other=0.0).to(ACC)
        fb = tl.load(sums_ptr + nc + cw, mask=wm, other=0.0).to(ACC)
        if COUNT_PTR:
            n = tl.load(count_ptr).to(ACC)
        else:
            n = _hl(cnt_hi, cnt_lo, ACC)
        mean_w, mrel_w = _channel_center(mean_ptr, mrel_ptr, cw, wm, HAS_MREL, WIN, ACC)
        ctr_w, offr_w = _xhat_center(mean_w, mrel_w, rstd_w)
        k2_w, k3_w = -k1_w * (fa / n), -k1_w * (fb / n)
        xv = tl.load(x_ptr + i, mask=m, other=0.0).to(ACC)
        xh = (xv - tl.gather(ctr_w, slot, 0)) * tl.gather(rstd_w, slot, 0) + tl.gather(offr_w, slot, 0)
        dx = tl.gather(k1_w, slot, 0) * g + (tl.gather(k2_w, slot, 0) + tl.gather(k3_w, slot, 0) * xh)
    else:
        dx = tl.gather(k1_w, slot, 0) * g
    tl.store(dx_ptr + i, dx.to(dx_ptr.dtype.element_ty), mask=m)
    if DZ:
        tl.store(dz_ptr + i, g.to(dz_ptr.dtype.element_ty), mask=m)


@triton.jit
def _segment_sum(first_a, ga, gxa, first_b, gb, gxb):
    """The combine of a segmented scan over (starts a segment, Σg, Σg·x̂): b's sums alone where b starts a segment."""
    return first_a | first_b, tl.where(first_b, gb, ga + gb), tl.where(first_b, gxb, gxa + gxb)


@triton.jit(do_not_specialize=["S_RT", "S_MG"])
def _bn_bwd_frozen_flat_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr, mean_ptr, mrel_ptr, sd_ptr, part_ptr,
    N, C, CS, NB, NPS, HALF, eps_hi, eps_lo, S_RT, S_MG,
    S: tl.constexpr, IDX: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr, WIN: tl.constexpr,
    IS_VAR: tl.constexpr, HAS_MREL: tl.constexpr, HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr,
    DX: tl.constexpr, DZ: tl.constexpr, STAGES: tl.constexpr,
):
    """The partial sums (Σg, Σg·x̂) over a dense NCHW x that ``_bn_frozen_sums_kernel`` adds up, and with DX the
    frozen dx = k1·g (k1 = w·invstd) and dz = g with DZ: the frozen backward with parameter sums
    (``config.BN_FROZEN_FLAT``), or the sums pass alone (``config.BN_SUMS_FLAT``).

    Program b + j·NB takes the block b of NB [b·BLOCK, (b + 1)·BLOCK) of image offsets o (of CS = C·S) in images
    j·NPS .. min((j + 1)·NPS, N) − 1: element n·CS + o belongs to channel o // S in every image, so each lane keeps its
    channel's k1, centre and invstd (gathered once from the WIN channel slots its block can touch, as
    ``_flat_window``) and its own running sums, and the loads and stores are whole 16-byte vectors wherever CS
    allows; the loads pipelined STAGES deep. x̂ as in ``_bwd_tiles``. At the end a segmented scan over the block's
    runs of one channel leaves each run's sums at its last lane, which writes them to part_ptr[2, SPLIT, NB, WIN] at
    (j, b, slot) (HALF: the size of one of the two)."""
    b = tl.program_id(0) % NB
    j = tl.program_id(0) // NB
    lane = tl.arange(0, BLOCK)
    o = b.to(IDX) * BLOCK + lane.to(IDX)
    om = o < CS
    q0 = _divided(b.to(IDX) * BLOCK, S, S_RT, S_MG, 0)
    q = _divided(o, S, S_RT, S_MG, 0)
    slot = (q - q0).to(tl.int32)
    sz = S if S > 0 else S_RT * (-S)
    r = o - q * sz  # the offset in its run
    cw = q0 + tl.arange(0, WIN)
    wm = cw < C
    rstd_w = _channel_rstd(sd_ptr, cw, wm, eps_hi, eps_lo, IS_VAR, ACC)
    k1_w = _weight_scale(w_ptr, rstd_w, cw, wm, HAS_W, FIX_GAMMA, ACC)
    mean_w, mrel_w = _channel_center(mean_ptr, mrel_ptr, cw, wm, HAS_MREL, WIN, ACC)
    ctr_w, offr_w = _xhat_center(mean_w, mrel_w, rstd_w)
    k1 = tl.gather(k1_w, slot, 0)
    ctr = tl.gather(ctr_w, slot, 0)
    rstd = tl.gather(rstd_w, slot, 0)
    off_r = tl.gather(offr_w, slot, 0)
    sg = tl.zeros([BLOCK], ACC)
    sgx = tl.zeros([BLOCK], ACC)
    n0 = j * NPS
    i = n0.to(IDX) * CS + o
    for _ in tl.range(n0, tl.minimum(n0 + NPS, N), num_stages=STAGES):
        g = _masked_grad(dy_ptr, y_ptr, i, om, RELU, ACC, "")
        xh = (tl.load(x_ptr + i, mask=om, other=0.0).to(ACC) - ctr) * rstd + off_r
        sg += g
        sgx += tl.where(om, g * xh, 0.0)
        if DX:
            tl.store(dx_ptr + i, (k1 * g).to(dx_ptr.dtype.element_ty), mask=om)
            if DZ:
                tl.store(dz_ptr + i, g.to(dz_ptr.dtype.element_ty), mask=om)
        i += CS
    first = (lane == 0) | (r == 0)
    _, sg, sgx = tl.associative_scan((first, sg, sgx), 0, _segment_sum)
    last = om & ((lane == BLOCK - 1) | (r == sz - 1))
    p = part_ptr + tl.program_id(0) * WIN + slot
    tl.store(p, sg, mask=last)
    tl.store(p + HALF, sgx, mask=last)


@triton.jit
def _bn_bwd_frozen_rows_kernel(
    dy_ptr, x_ptr, y_ptr, dx_ptr, dz_ptr, w_ptr, mean_ptr, mrel_ptr, sd_ptr, part_ptr,
    R, C, NB, RPS, eps_hi, eps_lo,
    IDX: tl.constexpr, ACC: tl.constexpr, W: tl.constexpr, K: tl.constexpr,
    IS_VAR: tl.constexpr, HAS_MREL: tl.constexpr, HAS_W: tl.constexpr, FIX_GAMMA: tl.constexpr, RELU: tl.constexpr,
    DX: tl.constexpr, DZ: tl.constexpr, STAGES: tl.constexpr, STRIDED: tl.constexpr,
):
    """The frozen backward with parameter sums over channels-last x (R rows of C channels;
    ``config.BN_FROZEN_ROWS``), row-strided: with DX, dx = k1·g (k1 = w·invstd) and dz = g with DZ, and the partial
    sums (Σg, Σg·x̂) that ``_bn_rows_sums_kernel`` adds up; without DX the backward's sums pass alone
    (``config.BN_SUMS_ROWS``). The channels-last form of ``_bn_bwd_frozen_flat_kernel``.

    Program b + j·NB takes the W channels b·W .. of rows j·RPS .. min((j + 1)·RPS, R) − 1 in tiles of K rows (with
    STRIDED, of the tiles j, j + SPLIT, j + 2·SPLIT, …: the grid walks x from its start to its end together and leaves
    its end in L2 for a dx pass that reads x from the end down): each lane keeps one channel's k1, centre and invstd
    and its own running sums, the loads and stores whole 16-byte vectors where C allows, pipelined STAGES deep. x̂ as
    in ``_bwd_tiles``. At the end the K rows' sums are added per channel and written to part_ptr[2, SPLIT, NB, W] at
    (j, b), SPLIT·NB = the programs."""
    b = tl.program_id(0) % NB
    j = tl.program_id(0) // NB
    c = b * W + tl.arange(0, W)
    cm = c < C
    rstd = _channel_rstd(sd_ptr, c, cm, eps_hi, eps_lo, IS_VAR, ACC)
    k1 = _weight_scale(w_ptr, rstd, c, cm, HAS_W, FIX_GAMMA, ACC)
    mean, mrel = _channel_center(mean_ptr, mrel_ptr, c, cm, HAS_MREL, W, ACC)
    ctr, off_r = _xhat_center(mean, mrel, rstd)
    sg = tl.zeros([K, W], ACC)
    sgx = tl.zeros([K, W], ACC)
    k = tl.arange(0, K)
    if STRIDED:  # tiles j, j + SPLIT, ...: the grid walks x from its start to its end together
        split = tl.num_programs(0) // NB
        r0 = j.to(IDX) * K  # rows in IDX: the loop's last step passes R (the launch sizes IDX for it)
        r1 = R
        rstep = split * K
    else:
        r0 = j.to(IDX) * RPS
        r1 = tl.minimum(r0 + RPS, R)
        rstep = K
    i = (r0 + k)[:, None] * C + c[None, :]
    for r in tl.range(r0, r1, rstep, num_stages=STAGES):
        m = ((r + k) < r1)[:, None] & cm[None, :]
        g = _masked_grad(dy_ptr, y_ptr, i, m, RELU, ACC, "")
        xh = (tl.load(x_ptr + i, mask=m, other=0.0).to(ACC) - ctr[None, :]) * rstd[None, :] + off_r[None, :]
        sg += g
        sgx += g * xh  # g is 0 where masked (x̂ is finite there unless the channel's own statistics are not)
        if DX:
            tl.store(dx_ptr + i, (k1[None, :] * g).to(dx_ptr.dtype.element_ty), mask=m)
            if DZ:
                tl.store(dz_ptr + i, g.to(dz_ptr.dtype.element_ty), mask=m)
        i += rstep * C
    p = part_ptr + tl.program_id(0) * W + tl.arange(0, W)
    tl.store(p, tl.sum(sg, 0), mask=cm)
    tl.store(p + tl.num_programs(0) * W, tl.sum(sgx, 0), mask=cm)


@triton.jit
def _bn_rows_sums_kernel(part_ptr, sums_ptr, dw_ptr, db_ptr, C, SPLIT, LD, CB: tl.constexpr,
                         JB: tl.constexpr, ACC: tl.constexpr, FIX_GAMMA: tl.constexpr, WRITE_DW: tl.constexpr,
                         WRITE_DB: tl.constexpr):
    """``_bn_bwd_frozen_rows_kernel``'s partial sums part_ptr[2, SPLIT, LD] added per channel, JB shares a step
    (``_sum_partials`` over [JB, CB] tiles: its shares are many, its channel blocks few) -> sums_ptr [2, C] = (Σg,
    Σg·x̂), and db, dw as ``_bn_frozen_sums_kernel``. The partials are laid out [2, SPLIT, LD], not [2, C, SPLIT]:
    that layout scatters the row-strided pass's partial stores, which cost up to 14 points of copy at C = 2048
    (NOTES.md, session 35, call 10)."""
    c = tl.program_id(0) * CB + tl.arange(0, CB)
    cm = c < C
    sa, sb = _sum_partials(part_ptr, c, cm, 0, SPLIT, SPLIT * LD, 1, JB, CB, ACC, True, LD)
    tl.store(sums_ptr + c, sa, mask=cm)
    tl.store(sums_ptr + C + c, sb, mask=cm)
    _store_param_grads(dw_ptr, db_ptr, c, cm, sa, sb, FIX_GAMMA, WRITE_DW, WRITE_DB)


@triton.jit
def _bn_stats_rows_kernel(x_ptr, part_ptr, R, C, NB, IDX: tl.constexpr, ACC: tl.constexpr, W: tl.constexpr,
                          K: tl.constexpr, STAGES: tl.constexpr):
    """The training forward's statistics over channels-last x (R rows of C channels; ``config.BN_STATS_ROWS``),
    row-strided: per channel (count, mean, M2) of x − shift (shift = x[0, c], ``_channel_shift``) over a share of the
    rows, as partials that ``_bn_rows_stats_kernel`` merges.

    The rows are cut in tiles of K rows of W channels; program b + j·NB takes channel block b of tiles j, j + SPLIT,
    j + 2·SPLIT, … (SPLIT·NB = the programs), so the grid walks x from its start to its end together and leaves its
    end in L2 for the apply pass, which reads x from the end (``config.BN_APPLY_REVERSE``; loading the last 8 MB
    ``evict_last``, as the tile pass does, gained nothing here: NOTES.md, session 36, call 3). Each lane keeps a
    Welford state of one channel over the full tiles (``_welford_step``); the K rows' states are merged once at the
    end (equal counts: mean of means, M2 = ΣM2 + k·Σ(mean_l − mean)²) and a ragged last tile by Chan's formula from
    its own two-pass statistics. Partials: part_ptr[3, SPLIT, NB, W] (count, mean, M2) at (j, b)."""
    b = tl.program_id(0) % NB
    j = tl.program_id(0) // NB
    split = tl.num_programs(0) // NB
    c = b * W + tl.arange(0, W)
    cm = c < C
    shift = _channel_shift(x_ptr, c, cm, 1, 0, ACC)
    k = tl.arange(0, K)
    full = R // K
    nf = (tl.maximum(full - j, 0) + split - 1) // split  # full tiles j, j + SPLIT, … below ``full``
    lm = (k >= 0)[:, None] & cm[None, :]
    mean_l = tl.zeros([K, W], ACC)
    m2_l = tl.zeros([K, W], ACC)
    i = (j * K + k).to(IDX)[:, None] * C + c[None, :]
    step = split.to(IDX) * K * C
    for t in tl.range(0, nf, num_stages=STAGES):
        xv = tl.load(x_ptr + i, mask=lm, other=0.0).to(ACC) - shift[None, :]
        mean_l, m2_l = _welford_step(xv, mean_l, m2_l, t, ACC)
        i += step
    kf = tl.cast(nf, ACC)
    mean = tl.sum(mean_l, 0) / K
    dm = mean_l - mean[None, :]
    m2 = tl.sum(m2_l, 0) + kf * tl.sum(rounded_prod(dm, dm), 0)
    cnt = tl.zeros([W], ACC) + kf * K
    if (full * K < R) & (full % split == j):
        r = full * K + k
        m = (r < R)[:, None] & cm[None, :]
        xv = tl.load(x_ptr + r.to(IDX)[:, None] * C + c[None, :], mask=m, other=0.0).to(ACC) - shift[None, :]
        tn, tm, tq = _tile_two_pass(xv, m, ACC, 0)
        cnt, mean, m2 = _chan(cnt, mean, m2, tn, tm, tq)
    p = part_ptr + tl.program_id(0) * W + tl.arange(0, W)
    q = tl.num_programs(0) * W
    _store_partial(p, q, cm, cnt, mean, m2)


@triton.jit
def _bn_rows_stats_kernel(x_ptr, part_ptr, shift_ptr, mrel_ptr, rstd_ptr, rm_ptr, rv_ptr, nbt_ptr, C, SPLIT, LD,
                          mom_hi, mom_lo, eps_hi, eps_lo, cnt_hi, cnt_lo, CB: tl.constexpr, JB: tl.constexpr,
                          ACC: tl.constexpr, UPDATE_RUNNING: tl.constexpr, MOMENTUM_NONE: tl.constexpr):
    """``_bn_stats_rows_kernel``'s partials part_ptr[3, SPLIT, LD] merged per channel, JB shares a step in a fixed
    order (``_merge_partials``) -> the saved (shift, mean_rel, invstd) and, with UPDATE_RUNNING, the running
    statistics, as the statistics pass of the two-launch training forward writes them."""
    c = tl.program_id(0) * CB + tl.arange(0, CB)
    cm = c < C
    shift = _channel_shift(x_ptr, c, cm, 1, 0, ACC)
    running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cm, mom_hi, mom_lo, ACC, UPDATE_RUNNING, MOMENTUM_NONE)
    _, mrel, m2 = _merge_partials(part_ptr, c, cm, 0, SPLIT, SPLIT * LD, 1, JB, CB, ACC, LD)
    count = _hl(cnt_hi, cnt_lo, ACC)
    var = m2 / count
    _save_batch_stats(shift_ptr, mrel_ptr, rstd_ptr, rm_ptr, rv_ptr, c, cm, shift, mrel,
                      _invstd(var, _hl(eps_hi, eps_lo, ACC), ACC), var, count, running, UPDATE_RUNNING)


@triton.jit
def _bn_frozen_sums_kernel(part_ptr, sums_ptr, dw_ptr, db_ptr, C, S, SPLIT, NB, HALF, PIECES,
                           CB: tl.constexpr, BLOCK: tl.constexpr, WIN: tl.constexpr, ACC: tl.constexpr,
                           FIX_GAMMA: tl.constexpr, WRITE_DW: tl.constexpr, WRITE_DB: tl.constexpr):
    """``_bn_bwd_frozen_flat_kernel``'s partial sums added per channel in a fixed order (its blocks b holding the
    channel's run, each at slot c − (b·BLOCK) // S, then the splits j), into sums_ptr [2, C] = (Σg, Σg·x̂),
    db = Σg and dw = Σg·x̂ (0 under FIX_GAMMA) when asked. PIECES: at least the most blocks a run of S can touch (an
    argument: a compile serves every S)."""
    c = tl.program_id(0) * CB + tl.arange(0, CB)
    cmask = c < C
    start = c.to(tl.int64) * S
    b_lo = start // BLOCK
    b_hi = (start + S - 1) // BLOCK
    fa = tl.zeros([CB], ACC)
    fb = tl.zeros([CB], ACC)
    for k in range(PIECES):
        b = b_lo + k
        m = cmask & (b <= b_hi)
        at = b * WIN + (c - (b * BLOCK) // S)
        for j in range(SPLIT):
            q = part_ptr + j * NB * WIN + at
            fa += tl.load(q, mask=m, other=0.0)
            fb += tl.load(q + HALF, mask=m, other=0.0)
    tl.store(sums_ptr + c, fa, mask=cmask)
    tl.store(sums_ptr + C + c, fb, mask=cmask)
    _store_param_grads(dw_ptr, db_ptr, c, cmask, fa, fb, FIX_GAMMA, WRITE_DW, WRITE_DB)


# ------------------------------------------------------------------------------------- SyncBN stage pieces


@triton.jit
def _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cmask, mom_hi, mom_lo, ACC: tl.constexpr,
                   UPDATE_RUNNING: tl.constexpr, MOMENTUM_NONE: tl.constexpr):
    """What the running statistics' update of channels ``c`` reads -> (f, running mean, running var): f = momentum,
    or 1/num_batches_tracked read on device. The kernels that end in the update load these before their last merge,
    so that the reads' memory latency runs beside the merge instead of after it (zeros without UPDATE_RUNNING)."""
    f = _hl(mom_hi, mom_lo, ACC)
    rm = tl.zeros(c.shape, ACC)
    rv = tl.zeros(c.shape, ACC)
    if UPDATE_RUNNING:
        if MOMENTUM_NONE:
            f = 1.0 / tl.load(nbt_ptr).to(ACC)
        rm = tl.load(rm_ptr + c, mask=cmask, other=0.0).to(ACC)
        rv = tl.load(rv_ptr + c, mask=cmask, other=0.0).to(ACC)
    return f, rm, rv


@triton.jit
def _running_store(rm_ptr, rv_ptr, c, cmask, running, mean, var, n):
    """running ← (1 - f)·running + f·batch for channels ``c`` (``running`` = (f, rm, rv) from ``_running_loads``),
    with the unbiased var·n/(n - 1); unchanged when n == 0."""
    f, rm, rv = running
    upd = cmask & ((tl.zeros(c.shape, rm.dtype) + n) > 0)
    unbiased = var * (n / (n - 1.0))
    tl.store(rm_ptr + c, ((1.0 - f) * rm + f * mean).to(rm_ptr.dtype.element_ty), mask=upd)
    tl.store(rv_ptr + c, ((1.0 - f) * rv + f * unbiased).to(rv_ptr.dtype.element_ty), mask=upd)


@triton.jit
def _save_batch_stats(shift_ptr, mrel_ptr, rstd_ptr, rm_ptr, rv_ptr, c, cmask, shift, mrel, rstd, var, n, running,
                      UPDATE_RUNNING: tl.constexpr):
    """A training forward's final statistics of channels ``c`` out: the saved (shift, mean_rel, invstd) for the
    backward and, with UPDATE_RUNNING, the running statistics (mean shift + mean_rel, biased ``var`` of ``n``;
    ``running``: what ``_running_loads`` read)."""
    tl.store(shift_ptr + c, shift, mask=cmask)
    tl.store(mrel_ptr + c, mrel, mask=cmask)
    tl.store(rstd_ptr + c, rstd, mask=cmask)
    if UPDATE_RUNNING:
        _running_store(rm_ptr, rv_ptr, c, cmask, running, shift + mrel, var, n)


@triton.jit
def _bn_merge_stats_kernel(counts_ptr, means_ptr, m2s_ptr, count_out_ptr, mean_out_ptr, var_out_ptr, invstd_ptr,
                           rm_ptr, rv_ptr, nbt_ptr,
                           R, C, stride_cnt, stride_mean, stride_m2, eps_hi, eps_lo, mom_hi, mom_lo,
                           CB: tl.constexpr, ACC: tl.constexpr, INVSTD: tl.constexpr, UPDATE_RUNNING: tl.constexpr,
                           MOMENTUM_NONE: tl.constexpr):
    """Fold R shards' (count, mean, M2) left to right with Chan's formula (empty shards skipped; the first
    non-empty shard taken as it is), then var = M2 / count (0 for an empty total) and, with INVSTD,
    invstd = 1/sqrt(var + eps); with UPDATE_RUNNING also the running statistics (``_running_store``).
    Shard r's values are read at r·stride (unit column stride), so the rows of one gathered buffer are
    read in place."""
    c = tl.program_id(0) * CB + tl.arange(0, CB)
    cmask = c < C
    running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cmask, mom_hi, mom_lo, ACC, UPDATE_RUNNING, MOMENTUM_NONE)
    n = tl.zeros([CB], ACC)
    mean = tl.zeros([CB], ACC)
    m2 = tl.zeros([CB], ACC)
    for r in range(0, R):
        nb = tl.load(counts_ptr + r * stride_cnt).to(ACC)
        mb = tl.load(means_ptr + r * stride_mean + c, mask=cmask, other=0.0).to(ACC)
        qb = tl.load(m2s_ptr + r * stride_m2 + c, mask=cmask, other=0.0).to(ACC)
        n, mean, m2 = _fold_shard(n, mean, m2, nb, mb, qb)
    _merged_outputs(count_out_ptr, mean_out_ptr, var_out_ptr, invstd_ptr, rm_ptr, rv_ptr, c, cmask,
                    n, mean, m2, eps_hi, eps_lo, running, tl.program_id(0) == 0, ACC, INVSTD, UPDATE_RUNNING)


@triton.jit
def _fold_shard(n, mean, m2, nb, mb, qb):
    """Chan's merge of the running (n, mean, M2) with one more shard's (nb, mb, qb): an empty shard is
    skipped, the first non-empty one taken as it is."""
    tot = n + nb
    w = nb / tl.where(tot > 0, tot, 1.0)
    delta = mb - mean
    take = nb > 0
    first = n == 0
    mean = tl.where(take, tl.where(first, mb, mean + delta * w), mean)
    m2 = tl.where(take, tl.where(first, qb, m2 + qb + delta * delta * (n * w)), m2)
    return tot, mean, m2


@triton.jit
def _merged_outputs(count_out_ptr, mean_out_ptr, var_out_ptr, invstd_ptr, rm_ptr, rv_ptr, c, cmask,
                    n, mean, m2, eps_hi, eps_lo, running, write_count, ACC: tl.constexpr, INVSTD: tl.constexpr,
                    UPDATE_RUNNING: tl.constexpr):
    """Store a merge's mean, biased var = M2 / n (0 for n == 0), invstd and (when ``write_count``) the total
    count, and update the running statistics (``_running_store``; ``running``: what ``_running_loads`` read) when
    asked."""
    var = tl.where(n > 0, m2 / tl.where(n > 0, n, 1.0), 0.0)
    tl.store(mean_out_ptr + c, mean.to(mean_out_ptr.dtype.element_ty), mask=cmask)
    tl.store(var_out_ptr + c, var.to(var_out_ptr.dtype.element_ty), mask=cmask)
    if INVSTD:
        tl.store(invstd_ptr + c, _invstd(var, _hl(eps_hi, eps_lo, ACC), ACC).to(invstd_ptr.dtype.element_ty),
                 mask=cmask)
    if UPDATE_RUNNING:
        _running_store(rm_ptr, rv_ptr, c, cmask, running, mean, var, n)
    if write_count:
        tl.store(count_out_ptr, tl.max(n, 0).to(count_out_ptr.dtype.element_ty))


# Peer exchange through symmetric memory (SyncBatchNorm on one host; ``fastnorm._symm_exchange`` allocates the
# buffers). Every rank's buffer holds its packed statistics at 0, its backward sums at SUMS_AT in two halves
# (even and odd epochs), and int32 flags at FLAGS: ready[2][R], done[2][R] (written by the peers), then
# epoch[2], start[2], arrive[2], collected[2] (local), one of each per exchange KIND (0: forward statistics,
# 1: backward sums; the backward uses neither done nor start). ``peers_ptr`` holds the R buffers' addresses as
# this device sees them (its own included). A launch's epoch e is one more than the last completed one (kept in
# device memory, so a replayed CUDA graph counts on); a wait for a peer lasts at most config.BN_PEER_TIMEOUT_S,
# then the launch aborts.
# Forward (the apply launch): its first program to start tells every peer "my statistics of epoch e are in
# place" (written by the statistics launch before it), waits for all peers' word, merges the R ranks' data for
# the launch's other programs, which wait for it on this device (so no spin waits on a program of this device
# that may not be resident), and the launch ends only after every peer has said "I have read yours", so the
# next statistics launch on the stream may overwrite this rank's row. Backward (``_bn_bwd_fused_kernel``
# PEERS): one launch writes this rank's sums, exchanges them (``_add_peer_sums``) and computes dx; the halves
# make the "read" handshake unnecessary (see that kernel).


@triton.jit
def _peer(peers_ptr, r, TY: tl.constexpr):
    return tl.load(peers_ptr + r).to(tl.pointer_type(TY))


@triton.jit
def _exchange_begin(peers_ptr, flags_ptr, rank, R, FLAGS, KIND: tl.constexpr, TIMEOUT_NS: tl.constexpr):
    """Count this program in -> (whether it is the launch's first, the launch's epoch e). The first program
    tells every peer that this rank's data of epoch e is in place (ready[KIND]) and waits for theirs; it then
    combines the R ranks' data, and the caller announces that with ``_exchange_combined``."""
    first = tl.atomic_add(flags_ptr + 4 * R + 2 + KIND, 1, sem="acq_rel", scope="gpu") == 0
    e = _epoch(flags_ptr, R, KIND)
    if first:
        _tell_peers(peers_ptr, rank, R, FLAGS + KIND * R, e)
        _wait_peers(flags_ptr, rank, R, KIND * R, e, TIMEOUT_NS)
    return first, e


@triton.jit
def _exchange_combined(peers_ptr, flags_ptr, rank, R, FLAGS, first, e, KIND: tl.constexpr,
                       TIMEOUT_NS: tl.constexpr):
    """After the first program's combining: it releases the launch's other programs (collected[KIND]), tells
    every peer it has read their data (done[KIND]) and waits until they have read this rank's; the others
    wait (acquire, this device) until the combined data is there."""
    if first:
        _release_collected(flags_ptr, R, e, KIND)
        _tell_peers(peers_ptr, rank, R, FLAGS + 2 * R + KIND * R, e)
        _wait_peers(flags_ptr, rank, R, 2 * R + KIND * R, e, TIMEOUT_NS)
    else:
        _wait_collected(flags_ptr, R, e, KIND)


@triton.jit
def _epoch(flags_ptr, R, KIND: tl.constexpr):
    """This launch's epoch of exchange KIND: one more than the last completed one."""
    return tl.load(flags_ptr + 4 * R + KIND, volatile=True) + 1


@triton.jit
def _release_collected(flags_ptr, R, e, KIND: tl.constexpr):
    """Publish (release, this device) that the R ranks' data of epoch e is combined: collected[KIND] = e."""
    tl.debug_barrier()
    tl.atomic_xchg(flags_ptr + 4 * R + 6 + KIND, e, sem="release", scope="gpu")


@triton.jit
def _wait_collected(flags_ptr, R, e, KIND: tl.constexpr):
    """Spin (acquire, this device) until collected[KIND] has reached epoch e (compared wrap-safely)."""
    while tl.atomic_add(flags_ptr + 4 * R + 6 + KIND, 0, sem="acquire", scope="gpu") - e < 0:
        pass
    tl.debug_barrier()


@triton.jit
def _tell_peers(peers_ptr, rank, R, word, e):
    """Write e into every peer's flag ``word + rank`` (release, system scope)."""
    for p in range(0, R):
        if p != rank:
            tl.atomic_xchg(_peer(peers_ptr, p, tl.int32) + word + rank, e, sem="release", scope="sys")


@triton.jit
def _now_ns():
    """The GPU's global nanosecond timer."""
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _abort():
    """End the whole launch with an error (the CUDA error then surfaces on the host)."""
    tl.inline_asm_elementwise("trap;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _wait_peers(flags_ptr, rank, R, word, e, TIMEOUT_NS: tl.constexpr):
    """Spin until every peer p has written epoch e (or a later one) into this rank's flag ``word + p``
    (acquire, system scope; compared as ``flag - e`` so that the int32 epochs may wrap around). A peer that
    has not arrived after TIMEOUT_NS aborts the launch: ranks out of step (a rank that skipped a call, or
    died) end in a CUDA error, as NCCL's watchdog would end them, not in a silent hang."""
    for p in range(0, R):
        if p != rank:
            flag = flags_ptr + word + p
            if tl.atomic_add(flag, 0, sem="acquire", scope="sys") - e < 0:
                t0 = _now_ns()
                while tl.atomic_add(flag, 0, sem="acquire", scope="sys") - e < 0:
                    if _now_ns() - t0 > TIMEOUT_NS:
                        _abort()
    tl.debug_barrier()


@triton.jit
def _exchange_finish(flags_ptr, R, e, NPROG, KIND: tl.constexpr):
    """The last of the launch's NPROG programs to get here (all have read the epoch and the combined data)
    resets the launch counters (``_arrive`` its own; the forward's start counter) and marks epoch e complete."""
    if _arrive(flags_ptr + 4 * R + 4 + KIND, NPROG):
        if KIND == 0:  # the backward exchange never counts starts
            tl.store(flags_ptr + 4 * R + 2 + KIND, 0)
        tl.atomic_xchg(flags_ptr + 4 * R + KIND, e, sem="release", scope="gpu")


@triton.jit
def _bn_update_running_kernel(rm_ptr, rv_ptr, mean_ptr, var_ptr, count_ptr, nbt_ptr, C,
                              cnt_hi, cnt_lo, mom_hi, mom_lo,
                              CB: tl.constexpr, ACC: tl.constexpr, COUNT_PTR: tl.constexpr,
                              MOMENTUM_NONE: tl.constexpr):
    """running ← (1 - f)·running + f·batch, with the unbiased var·n/(n - 1); unchanged when n == 0."""
    c = tl.program_id(0) * CB + tl.arange(0, CB)
    cmask = c < C
    if COUNT_PTR:
        n = tl.load(count_ptr).to(ACC)
    else:
        n = _hl(cnt_hi, cnt_lo, ACC)
    running = _running_loads(rm_ptr, rv_ptr, nbt_ptr, c, cmask, mom_hi, mom_lo, ACC, True, MOMENTUM_NONE)
    mean = tl.load(mean_ptr + c, mask=cmask, other=0.0).to(ACC)
    var = tl.load(var_ptr + c, mask=cmask, other=0.0).to(ACC)
    _running_store(rm_ptr, rv_ptr, c, cmask, running, mean, var, n)


# ---------------------------------------------------------------------------------------------- launchers


class View(NamedTuple):
    """How the kernels address a (N, C, *) tensor (see the module docstring)."""

    x: torch.Tensor  # the tensor the kernels read: the input itself, or its one documented copy
    flat: bool  # rows of C (channels-last, or no spatial extent) vs NCHW-contiguous
    c: int
    v: int  # inner indices per channel: N·S, or N·L in the row layout
    s: int  # spatial size S (1 when flat)
    l: int  # NCHW row layout: lanes per image (a power of two >= S), 0 otherwise
    count: int  # values per channel, N·S


class Peers(NamedTuple):
    """One symmetric-memory exchange's buffers as the kernels address them (see "Peer exchange" above)."""

    ptrs: torch.Tensor  # int64 [R]: each rank's buffer as this device addresses it
    flags: torch.Tensor  # int32: this rank's flags (ready, done, epoch, start, arrive, collected)
    rank: int
    world: int
    flags_at: int  # the flags' offset in every buffer, in 4-byte words
    sums_at: int  # the backward sums' two halves, in 4-byte words (the packed statistics are at 0)


# One launcher per kernel: repeat launches skip Triton's per-call argument binding (see ``_launch``).
_fwd_fused = _Launcher(_bn_fwd_fused_kernel)
_fwd_resident = _Launcher(_bn_fwd_resident_kernel)
_bwd_resident = _Launcher(_bn_bwd_resident_kernel)
_apply = _Launcher(_bn_apply_kernel)
_apply_flat = _Launcher(_bn_apply_flat_kernel)
_bwd_fused = _Launcher(_bn_bwd_fused_kernel)
_bwd_dx = _Launcher(_bn_bwd_dx_kernel)
_bwd_dx_flat = _Launcher(_bn_bwd_dx_flat_kernel)
_bwd_frozen_flat = _Launcher(_bn_bwd_frozen_flat_kernel)
_bwd_frozen_rows = _Launcher(_bn_bwd_frozen_rows_kernel)
_rows_sums = _Launcher(_bn_rows_sums_kernel)
_stats_rows = _Launcher(_bn_stats_rows_kernel)
_rows_stats = _Launcher(_bn_rows_stats_kernel)
_frozen_sums = _Launcher(_bn_frozen_sums_kernel)
_merge = _Launcher(_bn_merge_stats_kernel)
_update_running = _Launcher(_bn_update_running_kernel)
_BWD_MODE = {"train": 0, "sums": 1, "frozen": 2}


def _same_layout(t: torch.Tensor, ref: torch.Tensor) -> bool:
    if t.shape != ref.shape:
        return False
    return all(a == b for a, b, n in zip(t.stride(), ref.stride(), ref.shape, strict=True) if n > 1)


def in_layout(t: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """``t`` (shape of ``ref``) with ``ref``'s memory layout: itself when it has it, else one copy."""
    if _same_layout(t, ref):
        return t
    return torch.empty_like(ref, dtype=t.dtype).copy_(t)


_CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}


def _channels_last(x: torch.Tensor) -> bool:
    """Whether x is dense with the channel dimension innermost (rows of C); the memory-format test where there is
    one (a permuted view costs ~2.5 us of host time)."""
    fmt = _CHANNELS_LAST.get(x.dim())
    if fmt is not None:
        return x.is_contiguous(memory_format=fmt)
    return x.permute(0, *range(2, x.dim()), 1).is_contiguous()


def view(x: torch.Tensor) -> View:
    """The kernels' view of ``x``: NCHW-contiguous and channels-last (any rank, incl. (N, C) and (N, C, L)
    with strides (L·C, 1, C)) are read in place; any other strides take one ``.contiguous()`` copy."""
    n, c = x.shape[0], x.shape[1]
    s = math.prod(x.shape[2:])
    if not (s > 1 and x.is_contiguous()) and not _channels_last(x):
        x = x.contiguous()
    if s > 1 and x.is_contiguous():
        lanes = _pow2(s)
        if lanes <= config.BN_ROW_LANES_MAX:  # row layout: no per-element division
            return View(x, False, c, n * lanes, s, lanes, n * s)
        return View(x, False, c, n * s, s, 0, n * s)
    return View(x, True, c, n * s, 1, 0, n * s)


def _acc(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


_TL = {torch.float32: tl.float32, torch.float64: tl.float64}


def _pow2(n: int) -> int:
    """The smallest power of two >= max(n, 1) (``triton.next_power_of_2`` costs ~3 us per host call)."""
    return 1 << (max(n, 1) - 1).bit_length()


def _hilo(v: float) -> tuple[float, float]:
    """A host float as an fp32 (hi, lo) pair."""
    hi = struct.unpack("f", struct.pack("f", v))[0]
    return hi, float(v) - hi


def _idx(xv: View, bs: int, cb: int, item: int) -> tl.dtype:
    """The kernels' index dtype: int64 where an index they form can reach 2³¹ — an element offset (numel, a tile of
    bs·cb elements of up to S beyond) or an inner index (up to V per channel, more than N·S in the row layout and
    aligned rows, and an item's end v0 + ``item`` past it)."""
    reach = max(xv.x.numel() + 2 * bs * cb * xv.s, xv.v + item + bs)
    return tl.int64 if reach >= 2**31 else tl.int32


def _peer_timeout_ns() -> int:
    return int(config.BN_PEER_TIMEOUT_S * 1e9)


def _peer_block(c: int) -> int:
    """Channels per step when one program combines the ranks' data (``config.BN_PEER_SUM_BLOCK``)."""
    return min(config.BN_PEER_SUM_BLOCK, _pow2(c))


def _sms(xv: View) -> int:
    return config.multiprocessor_count(config.device_index(xv.x))


def _kept(plan: config.BatchNormPlan, reread_bytes: int) -> int:
    """KEEPV of a reduction pass whose inputs (``reread_bytes`` in all) the next launch reads again: the indices at
    each item's end that load ``evict_last`` (``_kept_from``), so that about ``config.BN_KEEP_BYTES`` of them, the
    last read, stay in L2 for it; 0: none."""
    keep = config.BN_KEEP_BYTES
    if keep <= 0 or reread_bytes <= 0:
        return 0
    return plan.vpi if reread_bytes <= keep else -(-plan.vpi * keep // reread_bytes)


def _sync(plan: config.BatchNormPlan, device: torch.device) -> torch.Tensor:
    """The zeroed int32 counters of a fused kernel's launch (``_sync_counters``)."""
    return _zeroed_counters(2 + plan.groups * plan.ncb_g * (plan.nsub + 1) + 3 * plan.groups, device)


def _scratch(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """An uninitialized buffer of ``n`` values for the current call's launches, scratch to a recording (see
    ``_replay.scratch``: an op whose program is recorded must not return it)."""
    return scratch(torch.empty(n, dtype=dtype, device=device))


class _SpatialSizes:
    """The NCHW spatial sizes this process compiles into the tile kernels (see ``_spatial``)."""

    sizes: set[int] = set()
    generation = -1


def _spatial(xv: View) -> tuple[int, int, int]:
    """The tile kernels' (S, S_RT, S_MG) over ``xv``: ``(S, 0, 0)``, S compiled in (a division by a constant), or
    ``(−p, S/p, _divisor_magic(S/p))``, S as an argument with its power-of-two factor p (up to 16) compiled in
    (``_tile_offsets``). Compiled in except in the NCHW layout past the first ``config.BN_SPATIAL_COMPILED`` distinct
    sizes a process meets: a model fed ever new image sizes (detection, segmentation) would compile every tile kernel
    again for each (seconds a compile); as an argument, one compile serves the sizes of each p. A size keeps its
    decision (the results are bitwise the same either way); a change to ``config`` starts the count again."""
    if xv.flat or xv.l:
        return xv.s, 0, 0
    known = _SpatialSizes
    if known.generation != config.generation:
        known.sizes, known.generation = set(), config.generation
    if xv.s in known.sizes:
        return xv.s, 0, 0
    if len(known.sizes) < config.BN_SPATIAL_COMPILED:
        known.sizes.add(xv.s)
        return xv.s, 0, 0
    p = min(xv.s & -xv.s, 16)
    return -p, xv.s // p, _divisor_magic(xv.s // p)


def _divisor_magic(d: int) -> int:
    """``M·32 + SH`` such that ``q // d == umulhi(2q, M) >> SH`` for every 0 <= q < 2**31 (``_quotient``; Granlund and
    Montgomery's division by an invariant integer): with SH = ceil(log2 d) and M = ceil(2**(31 + SH) / d),
    2**31 <= M < 2**32 and M·q / 2**(31 + SH) exceeds q / d by less than 1/d, so its floor is the quotient. For
    1 <= d < 2**31; 0 for larger d, whose tensors index in 64 bits, where the kernels divide."""
    if d >= 2**31:
        return 0
    bits = (d - 1).bit_length()
    return -(-(1 << (31 + bits)) // d) * 32 + bits


def _launch(launcher: _Launcher, loop: str, grid: int, args: tuple, meta: dict, xv: View,
            plan: config.BatchNormPlan, spatial: tuple[int, int, int] | None = None) -> None:
    """Launch a tile kernel over ``xv`` with ``plan``: the view's and tile's constexprs, the accumulation dtype,
    and the prefetch depth and register cap of the kernel's ``loop`` ("stats", "apply", "bwd" or "dx"; its key in
    the tables by ``config.batch_norm_loop``; the cap is measured for fp32 accumulation only: fp64 states need more
    registers). The spatial size goes in as ``_spatial`` says: S compiled in, or the kernel's last run-time
    argument (``spatial``: given by the caller)."""
    acc = _acc(xv.x.dtype)
    loop = config.batch_norm_loop(loop, xv.l, xv.x.element_size())
    s, s_rt, s_mg = _spatial(xv) if spatial is None else spatial
    launcher((grid,), (*args, s_rt, s_mg), {
        **meta, "S": s, "FLAT": xv.flat, "L": xv.l, "IDX": _idx(xv, plan.bs, plan.cb, plan.vpi), "ACC": _TL[acc],
        "CB": plan.cb, "BS": plan.bs, "STAGES": config.BN_LOOP_STAGES[loop],
    }, plan.num_warps, None, maxnreg=config.BN_MAXNREG[loop] if acc == torch.float32 else None)


def _plan(xv: View, reread_bytes: int, kind: str, direction: str) -> config.BatchNormPlan:
    device = config.device_index(xv.x)
    stats = kind == "fused" and direction == "fwd"  # the statistics pass: its items per SM by device
    return config.batch_norm_plan(xv.flat, xv.c, xv.v, reread_bytes, kind, direction,
                                  config.multiprocessor_count(device), xv.l,
                                  config.batch_norm_stats_wave(device, xv.flat, xv.l) if stats else None,
                                  xv.x.element_size())


def _reduction_view(xv: View, streams: int, kind: str, direction: str, aligned: bool
                    ) -> tuple[View, int, tuple[int, int, int] | None, config.BatchNormPlan]:
    """How a launch of ``_plan``'s ``kind`` and ``direction`` reads ``xv`` (``streams`` bytes an element re-read),
    with ``aligned`` rows allowed — for the reductions alone, the training forward's statistics and the backward's
    sums, and not where the launch's items are shared with a pass that writes (the one-launch forward) ->
    (the view its plan is made for, the aligned-row vector AL or 0, its (S, S_RT, S_MG) or None for ``_spatial``'s,
    the plan). Aligned rows (``_aligned_rows``, ``config.BN_ALIGNED_ROWS``) of AL·M lanes per image: v = N·AL·M; S an
    argument (S = −1, S_RT = S) and S_MG the magic number of M — one compile serves every size; not where N·C·S is
    no multiple of AL (the last vector would overhang the tensor) nor where a tile would be narrower than one vector
    (tiny tiles a test may set)."""
    al = config.batch_norm_aligned_rows(xv.x.element_size(), xv.s) if aligned and not xv.flat else 0
    if al and xv.x.numel() % al == 0:  # (then every vector overlapping a run lies inside the tensor)
        m = -(-(xv.s + al - 1) // al)
        rv = xv._replace(v=xv.count // xv.s * al * m, l=0)
        plan = _plan(rv, streams, kind, direction)
        if plan.bs >= al:
            return rv, al, (-1, xv.s, _divisor_magic(m)), plan
    return xv, 0, None, _plan(xv, streams, kind, direction)


def forward_train(xv: View, y: torch.Tensor, z, weight, bias, running_mean, running_var, nbt,
                  momentum: float | None, eps: float, fix_gamma: bool, relu: bool):
    """Training forward into ``y``: the single-read kernel when the tensor fits (and the device takes its
    cooperative launch), else the statistics + apply launches (or the one-launch schedule). Returns the saved
    (shift, mean_rel, invstd) and updates the running statistics in place when given (momentum None: factor
    1/nbt read on device)."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    dev = xv.x.device
    shift = torch.empty(c, dtype=acc, device=dev)
    mrel = torch.empty(c, dtype=acc, device=dev)
    rstd = torch.empty(c, dtype=acc, device=dev)
    scalars = (*_hilo(0.0 if momentum is None else momentum), *_hilo(eps), *_hilo(float(xv.count)))
    resident = _resident_plan(xv, 1)
    if resident and _forward_resident(xv, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt,
                                      resident, scalars, momentum is None, fix_gamma, relu):
        return shift, mrel, rstd
    fused = config.BN_TRAIN_FUSED
    if not fused and config.batch_norm_stats_rows(xv.x.numel(), xv.x.element_size(), xv.flat, c):
        _stats_rows_pass(xv, shift, mrel, rstd, running_mean, running_var, nbt, scalars, momentum is None)
    else:
        _stats_tiles_pass(xv, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt, scalars,
                          momentum is None, fix_gamma, relu, fused)
    if not fused:
        apply(xv, y, z, weight, bias, shift, mrel, rstd, is_var=False, eps=0.0, fix_gamma=fix_gamma, relu=relu,
              save=False, reverse=config.BN_APPLY_REVERSE)
    return shift, mrel, rstd


def _stats_tiles_pass(xv: View, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt, scalars: tuple,
                      momentum_none: bool, fix_gamma: bool, relu: bool, fused: bool) -> None:
    """The training forward's statistics through the tile kernel (``_bn_fwd_fused_kernel``, MODE 2: the saved
    (shift, mean_rel, invstd) and the running statistics' update), or with ``fused`` the whole forward in its
    one-launch schedule (MODE 0). ``scalars``: (momentum, eps, count) as ``_hilo`` pairs."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    sv, al, spatial, plan = _reduction_view(xv, xv.x.element_size(), "fused", "fwd", not fused)
    part = _scratch(3 * c * (plan.split + plan.nsub), acc, xv.x.device)
    sync = _sync(plan, xv.x.device)
    k = plan.ncb_g * plan.split
    keepv = 0 if fused or al else _kept(plan, xv.x.numel() * xv.x.element_size())
    _launch(_fwd_fused, "stats", (2 if fused else 1) * plan.groups * k, (
        xv.x, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt, part, sync,
        c, sv.v, plan.vpi, plan.split, plan.nsub, plan.groups, plan.ncb_g, plan.lag, keepv, *scalars,
    ), dict(
        MSUB=plan.msub, MS=plan.ms, MODE=0 if fused else 2,
        HAS_W=weight is not None, HAS_B=bias is not None, HAS_Z=z is not None, RELU=relu,
        FIX_GAMMA=fix_gamma, UPDATE_RUNNING=running_mean is not None, MOMENTUM_NONE=momentum_none, AL=al,
        KEEP=keepv > 0,
    ), sv, plan, spatial)


def _stats_rows_pass(xv: View, shift, mrel, rstd, running_mean, running_var, nbt, scalars: tuple,
                     momentum_none: bool) -> None:
    """The training forward's statistics over channels-last rows through the row-strided kernel and its merge
    launch (``_bn_stats_rows_kernel``, ``_bn_rows_stats_kernel``; config.BN_STATS_ROWS): the saved (shift, mean_rel,
    invstd) and the running statistics' update. ``scalars``: (momentum, eps, count) as ``_hilo`` pairs."""
    c = xv.c
    cut = config.batch_norm_row_shares(xv.v, c, _sms(xv), "stats")
    acc = _acc(xv.x.dtype)
    part = _scratch(3 * cut.shares * cut.blocks * cut.width, acc, xv.x.device)
    _stats_rows((cut.shares * cut.blocks,), (xv.x, part, xv.v, c, cut.blocks), dict(
        IDX=_flat_idx(xv.x.numel(), cut.shares * cut.rows * c), ACC=_TL[acc], W=cut.width, K=cut.rows,
        STAGES=config.BN_STATS_ROWS["stages"],
    ), config.BN_STATS_ROWS["warps"], 1)
    cb, jb = config.batch_norm_rows_sums_tile(c, cut.shares)
    _rows_stats((-(-c // cb),), (
        xv.x, part, shift, mrel, rstd, running_mean, running_var, nbt, c, cut.shares, cut.blocks * cut.width,
        *scalars,
    ), dict(CB=cb, JB=jb, ACC=_TL[acc], UPDATE_RUNNING=running_mean is not None, MOMENTUM_NONE=momentum_none),
        8, None)  # 8 warps: at 4 the [512, 8] tiles of three partials (and the next step's) spilled (sm_90 offline)


#: Devices that refused a cooperative launch of a single-read kernel (e.g. a process limited to part of the SMs):
#: their training forwards and backwards take the two-launch paths from then on.
_RESIDENT_REFUSED: set = set()


def _forward_resident(xv: View, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt,
                      plan: config.ResidentPlan, scalars: tuple, momentum_none: bool, fix_gamma: bool,
                      relu: bool) -> bool:
    """The single-read training forward (``_bn_fwd_resident_kernel``): one cooperative launch of
    plan.ncb·plan.split programs, at most one per multiprocessor. False, with nothing written, when
    the device cannot hold the whole grid at once (CUDA refuses the cooperative launch, before anything runs)."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    dev = xv.x.device
    part = _scratch(3 * c * plan.split, acc, dev)
    sync = _zeroed_counters(2 * plan.ncb, dev)
    return _launch_resident(_fwd_resident, xv, plan, (
        xv.x, y, z, weight, bias, shift, mrel, rstd, running_mean, running_var, nbt, part, sync,
        c, xv.v, plan.split, *scalars,
    ), dict(
        HAS_W=weight is not None, HAS_B=bias is not None, HAS_Z=z is not None, RELU=relu, FIX_GAMMA=fix_gamma,
        UPDATE_RUNNING=running_mean is not None, MOMENTUM_NONE=momentum_none,
    ))


def _resident_plan(xv: View, tensors: int) -> config.ResidentPlan | None:
    """The single-read plan for ``tensors`` tensors of x's shape held at once (the forward: x; the backward: dy and
    x, and y under a fused ReLU), each element counted as ``config.batch_norm_resident_held_bytes`` says; None when
    BN_RESIDENT is off, the device refused a cooperative launch before, or they do not fit."""
    if not config.BN_RESIDENT or xv.x.device in _RESIDENT_REFUSED:
        return None
    x_size = xv.x.element_size()
    elem = config.batch_norm_resident_held_bytes(xv.flat, _acc(xv.x.dtype).itemsize, x_size)
    return config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, elem * tensors, _sms(xv), xv.l, x_size)


def _launch_resident(launcher: _Launcher, xv: View, plan: config.ResidentPlan, args: tuple, meta: dict) -> bool:
    """One cooperative launch of a single-read kernel over ``plan``'s grid: ``args`` then the spatial arguments,
    ``meta`` with the view's and the plan's constexprs. False, with nothing run, when the device refuses it (it is
    remembered: that device's training passes take their launches of tiles from then on)."""
    s, s_rt, s_mg = _spatial(xv)
    try:
        launcher((plan.ncb * plan.split,), (*args, s_rt, s_mg), dict(
            meta, S=s, FLAT=xv.flat, L=xv.l, IDX=_idx(xv, plan.vp, plan.cb, plan.vp), ACC=_TL[_acc(xv.x.dtype)],
            CB=plan.cb, VP=plan.vp, MS=plan.ms, SERIAL=INTERPRETER,
        ), plan.num_warps, 1, cooperative=True)
    except RuntimeError as e:
        if "cooperative" not in str(e):
            raise
        _RESIDENT_REFUSED.add(xv.x.device)
        return False
    return True


def stats(xv: View, out: torch.Tensor | None = None) -> torch.Tensor:
    """Per-channel statistics of x packed as one [2C + 1] tensor in the accumulation dtype:
    ``[mean (C) | M2 (C) | count]`` (one launch, merged on device) — SyncBatchNorm's all-gather buffer;
    written into ``out`` (dense, [2C + 1]) when given."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    sv, al, spatial, plan = _reduction_view(xv, xv.x.element_size(), "fused", "fwd", True)  # the statistics pass
    dev = xv.x.device
    packed = torch.empty(2 * c + 1, dtype=acc, device=dev) if out is None else out
    part = _scratch(3 * c * (plan.split + plan.nsub), acc, dev)
    sync = _sync(plan, dev)
    ch, cl = _hilo(float(xv.count))
    _launch(_fwd_fused, "stats", plan.groups * plan.ncb_g * plan.split, (
        xv.x, xv.x, None, None, None, packed, packed, packed, None, None, None, part, sync,
        c, sv.v, plan.vpi, plan.split, plan.nsub, plan.groups, plan.ncb_g, plan.lag, 0,
        0.0, 0.0, 0.0, 0.0, ch, cl,
    ), dict(
        MSUB=plan.msub, MS=plan.ms, MODE=1,
        HAS_W=False, HAS_B=False, HAS_Z=False, RELU=False, FIX_GAMMA=False, UPDATE_RUNNING=False,
        MOMENTUM_NONE=False, AL=al, KEEP=False,
    ), sv, plan, spatial)
    return packed


def apply(xv: View, y: torch.Tensor, z, weight, bias, mean, mrel, sd, *, is_var: bool, eps: float,
          fix_gamma: bool, relu: bool, save: bool, reverse: bool = False):
    """One pass y = act(w·((x - mean) - mrel)·invstd + b + z) (invstd = 1/sqrt(sd + eps) when ``is_var``).
    With ``save`` returns (mean, invstd) copies in the accumulation dtype for the backward; ``reverse``: x walked
    from its end (``config.BN_APPLY_REVERSE``)."""
    acc = _acc(xv.x.dtype)
    c, v = xv.c, xv.v
    save_mean = torch.empty(c, dtype=acc, device=y.device) if save else None
    save_rstd = torch.empty(c, dtype=acc, device=y.device) if save else None
    eh, el = _hilo(eps)
    if config.batch_norm_apply_flat(xv.x.numel(), xv.x.element_size(), xv.flat, xv.c, xv.s):
        _apply_flat_pass(xv, y, z, weight, bias, mean, mrel, sd, save_mean, save_rstd, (eh, el), is_var=is_var,
                         fix_gamma=fix_gamma, relu=relu, reverse=reverse)
        return save_mean, save_rstd
    plan = _plan(xv, xv.x.element_size(), "stream", "fwd")
    ncb = -(-c // plan.cb)
    _launch(_apply, "apply", ncb * plan.split, (
        xv.x, y, z, weight, bias, mean, mrel, sd, save_mean, save_rstd, None, None, None, None, None, None, None,
        c, v, plan.vpi, plan.split, eh, el, 0, 0, 0, 0.0, 0.0,
    ), dict(
        HAS_MREL=mrel is not None, IS_VAR=is_var, SAVE=save,
        HAS_W=weight is not None, HAS_B=bias is not None, HAS_Z=z is not None, RELU=relu, FIX_GAMMA=fix_gamma,
        PEERS=False, XB=1, TIMEOUT_NS=0, UPDATE_RUNNING=False, MOMENTUM_NONE=False, REV=reverse,
    ), xv, plan)
    return save_mean, save_rstd


def _flat_shape(xv: View, block: int) -> tuple[tuple[int], tuple, dict]:
    """A flat pointwise kernel's launch over ``xv`` in blocks of ``block`` -> (grid, its (S_RT, C_RT, S_MG, C_MG)
    arguments, its shape constexprs): S and C compiled in or, where ``_spatial`` takes S as an argument, both as
    arguments."""
    c, numel = xv.c, xv.x.numel()
    s, s_rt, s_mg = _spatial(xv)
    compiled = s > 0
    sizes = (0, 0, 0, 0) if compiled else (s_rt, c, s_mg, _divisor_magic(c))
    return (-(-numel // block),), sizes, dict(
        S=s, C=c if compiled else -1, FLAT=xv.flat, IDX=_flat_idx(numel, block),
        ACC=_TL[_acc(xv.x.dtype)], BLOCK=block, WIN=config.batch_norm_flat_window(c, xv.s, xv.flat, block))


def _flat_idx(numel: int, block: int) -> tl.dtype:
    """The index type of a flat kernel's blocks of ``block`` elements over ``numel``."""
    return tl.int64 if numel + block >= 2**31 else tl.int32


def _apply_flat_pass(xv: View, y: torch.Tensor, z, weight, bias, mean, mrel, sd, save_mean, save_rstd, eps_hilo,
                     *, is_var: bool, fix_gamma: bool, relu: bool, reverse: bool) -> None:
    """``apply`` through the flat pointwise kernel (``_bn_apply_flat_kernel``; config.BN_APPLY_FLAT)."""
    _, block, warps, _ = config.BN_APPLY_FLAT
    grid, sizes, shape = _flat_shape(xv, block)
    _apply_flat(grid, (
        xv.x, y, z, weight, bias, mean, mrel, sd, save_mean, save_rstd, xv.x.numel(), *eps_hilo, *sizes,
    ), dict(
        **shape, HAS_MREL=mrel is not None, IS_VAR=is_var,
        SAVE=save_mean is not None, HAS_W=weight is not None, HAS_B=bias is not None, FIX_GAMMA=fix_gamma,
        HAS_Z=z is not None, RELU=relu, REV=reverse,
    ), warps, 1)


def apply_peers(xv: View, y: torch.Tensor, z, weight, bias, peers: Peers, *, eps: float, relu: bool,
                running_mean=None, running_var=None, momentum: float | None = None, nbt=None):
    """SyncBatchNorm's forward after the statistics launch: the R ranks' packed statistics are merged from
    their symmetric buffers by the launch's first program (this rank's part of the exchange; the launch runs
    for an empty x too), the running statistics updated, and y = act(w·(x - mean)·invstd + b + z) written.
    Returns (count (0-dim), mean, var, invstd) of the whole group."""
    c, v = xv.c, xv.v
    plan = _plan(xv, xv.x.element_size(), "stream", "fwd")
    ncb = -(-c // plan.cb)
    out = torch.empty(3 * c + 1, dtype=torch.float32, device=y.device)  # one allocation for all
    # var is scratch to a recording: the replayed SyncBatchNorm forward (ops._forward_peers) does not return it
    mean, var, invstd, count = out[:c], scratch(out[c:2 * c]), out[2 * c:3 * c], out[-1]
    eh, el = _hilo(eps)
    mh, ml = _hilo(0.0 if momentum is None else momentum)
    update = running_mean is not None
    _launch(_apply, "apply", ncb * plan.split, (
        xv.x, y, z, weight, bias, None, None, None, mean, invstd, peers.ptrs, peers.flags, count, var,
        running_mean, running_var, nbt if momentum is None else None,
        c, v, plan.vpi, plan.split, eh, el, peers.rank, peers.world, peers.flags_at, mh, ml,
    ), dict(
        HAS_MREL=False, IS_VAR=False, SAVE=True,
        HAS_W=weight is not None, HAS_B=bias is not None, HAS_Z=z is not None, RELU=relu, FIX_GAMMA=False,
        PEERS=True, XB=_peer_block(c), TIMEOUT_NS=_peer_timeout_ns(), UPDATE_RUNNING=update,
        MOMENTUM_NONE=update and momentum is None, REV=False,
    ), xv, plan)
    return count, mean, var, invstd


def backward(mode: str, xv: View, dy, y, dx, dz, weight, shift, mrel, sd, *, is_var: bool, eps: float,
             fix_gamma: bool, relu: bool, dw, db, keep: bool = False):
    """Backward passes with per-channel sums. ``mode``: "train" (sums, then dx: two launches, or one,
    ``config.BN_TRAIN_FUSED``), "sums" (sums only) or "frozen" (dx = w·invstd·g and the sums in one pass).
    Writes dx/dz/dw/db when given; returns the fp32 (fp64) sums [2, C] = (Σg, Σg·x̂). ``keep`` ("sums"): a dx pass
    follows, so the tile sums pass leaves the end of what it read in L2 for it (``_kept``; the row-strided sums pass
    instead walks x so that its end stays in L2, for a dx pass that reads the end first: config.BN_SUMS_ROWS)."""
    if mode == "train" and not is_var and config.BN_RESIDENT_BACKWARD and \
            (plan := _resident_plan(xv, 3 if relu else 2)) is not None:  # dy and x, and y
        sums = _backward_resident(xv, plan, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, fix_gamma=fix_gamma,
                                  relu=relu)
        if sums is not None:
            return sums
    if mode == "train" and not config.BN_TRAIN_FUSED:
        sums = backward("sums", xv, dy, y, None, None, weight, shift, mrel, sd, is_var=is_var, eps=eps,
                        fix_gamma=fix_gamma, relu=relu, dw=dw, db=db, keep=True)
        backward_dx(xv, dy, y, dx, dz, weight, shift, mrel, sd, sums, float(xv.count), train=True, is_var=is_var,
                    eps=eps, fix_gamma=fix_gamma, relu=relu)
        return sums
    if mode in ("frozen", "sums") and config.batch_norm_frozen_flat(
            xv.x.numel(), xv.x.element_size(), xv.flat, xv.c, xv.s, _sms(xv), sums_only=mode == "sums"):
        return _frozen_flat_pass(xv, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, is_var=is_var, eps=eps,
                                 fix_gamma=fix_gamma, relu=relu)
    if mode == "frozen" and config.batch_norm_frozen_rows(xv.x.numel(), xv.x.element_size(), xv.flat) or \
            mode == "sums" and config.batch_norm_sums_rows(xv.x.numel(), xv.x.element_size(), xv.flat):
        return _frozen_rows_pass(xv, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, is_var=is_var, eps=eps,
                                 fix_gamma=fix_gamma, relu=relu, sums_only=mode == "sums")
    return _backward_launch(_BWD_MODE[mode], xv, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, is_var=is_var,
                            eps=eps, fix_gamma=fix_gamma, relu=relu, keep=keep and mode == "sums")


def _backward_resident(xv: View, plan: config.ResidentPlan, dy, y, dx, dz, weight, shift, mrel, rstd, dw, db, *,
                       fix_gamma: bool, relu: bool) -> torch.Tensor | None:
    """The single-read training backward (``_bn_bwd_resident_kernel``) over ``plan`` (``_resident_plan``, the
    budget shared by the held tensors): one cooperative launch -> the sums [2, C]; None, with nothing written, when
    the device cannot hold the grid at once (as ``_forward_resident``)."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    dev = xv.x.device
    sums = _scratch(2 * c, acc, dev)
    part = _scratch(2 * c * plan.split, acc, dev)
    sync = _zeroed_counters(2 * plan.ncb, dev)
    launched = _launch_resident(_bwd_resident, xv, plan, (
        dy, xv.x, y, dx, dz, weight, shift, mrel, rstd, dw, db, sums, part, sync,
        c, xv.v, plan.split, *_hilo(float(xv.count)),
    ), dict(
        HAS_MREL=mrel is not None, HAS_W=weight is not None, FIX_GAMMA=fix_gamma, RELU=relu, DZ=dz is not None,
        WRITE_DW=dw is not None, WRITE_DB=db is not None,
    ))
    return sums if launched else None


def _frozen_flat_pass(xv: View, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, *, is_var: bool, eps: float,
                      fix_gamma: bool, relu: bool) -> torch.Tensor:
    """``backward("frozen", ...)`` (or "sums": ``dx`` None) over NCHW x through the image-strided flat kernel and its
    sums launch (``_bn_bwd_frozen_flat_kernel``, ``_bn_frozen_sums_kernel``; config.BN_FROZEN_FLAT) -> the sums
    [2, C]."""
    f = config.BN_FROZEN_FLAT
    c, s = xv.c, xv.s
    n = xv.count // s
    block, nb, nps, split, win = config.batch_norm_image_shares(n, c, s, _sms(xv))
    acc = _acc(xv.x.dtype)
    half = split * nb * win
    part = _scratch(2 * half, acc, xv.x.device)
    sums = _scratch(2 * c, acc, xv.x.device)
    s_, s_rt, s_mg = _spatial(xv)
    _bwd_frozen_flat((split * nb,), (
        dy, xv.x, y, dx, dz, weight, shift, mrel, sd, part, n, c, c * s, nb, nps, half, *_hilo(eps), s_rt, s_mg,
    ), dict(
        S=s_, IDX=_flat_idx(xv.x.numel(), block), ACC=_TL[acc], BLOCK=block, WIN=win, IS_VAR=is_var,
        HAS_MREL=mrel is not None, HAS_W=weight is not None, FIX_GAMMA=fix_gamma, RELU=relu, DX=dx is not None,
        DZ=dz is not None, STAGES=f["stages"],
    ), f["warps"], 1)
    cb = min(256, _pow2(c))
    _frozen_sums((-(-c // cb),), (part, sums, dw, db, c, s, split, nb, half, (s - 1) // block + 2), dict(
        CB=cb, BLOCK=block, WIN=win, ACC=_TL[acc], FIX_GAMMA=fix_gamma,
        WRITE_DW=dw is not None, WRITE_DB=db is not None,
    ), 4, None)
    return sums


def _frozen_rows_pass(xv: View, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, *, is_var: bool, eps: float,
                      fix_gamma: bool, relu: bool, sums_only: bool = False) -> torch.Tensor:
    """``backward("frozen", ...)`` (or, ``sums_only``, "sums": no dx, cut by config.BN_SUMS_ROWS and walking the rows
    grid-strided) over channels-last rows through the row-strided kernel and its sums launch
    (``_bn_bwd_frozen_rows_kernel``, ``_bn_rows_sums_kernel``; config.BN_FROZEN_ROWS) -> the sums [2, C]."""
    rows_pass = "sums" if sums_only else "frozen"
    f = config.batch_norm_rows_settings(rows_pass)
    c = xv.c
    cut = config.batch_norm_row_shares(xv.v, c, _sms(xv), rows_pass)
    rstep = cut.shares * cut.rows if sums_only else cut.rows  # rows a program's loop steps by
    acc = _acc(xv.x.dtype)
    part = _scratch(2 * cut.shares * cut.blocks * cut.width, acc, xv.x.device)
    sums = _scratch(2 * c, acc, xv.x.device)
    _bwd_frozen_rows((cut.shares * cut.blocks,), (
        dy, xv.x, y, dx, dz, weight, shift, mrel, sd, part, xv.v, c, cut.blocks, cut.per_program, *_hilo(eps),
    ), dict(
        IDX=_flat_idx(xv.x.numel(), (max(cut.per_program, rstep) + cut.rows) * c), ACC=_TL[acc], W=cut.width,
        K=cut.rows, IS_VAR=is_var, HAS_MREL=mrel is not None, HAS_W=weight is not None and not sums_only,
        FIX_GAMMA=fix_gamma and not sums_only, RELU=relu, DX=not sums_only, DZ=dz is not None, STAGES=f["stages"],
        STRIDED=sums_only,
    ), f["warps"], 1)
    cb, jb = config.batch_norm_rows_sums_tile(c, cut.shares)
    _rows_sums((-(-c // cb),), (part, sums, dw, db, c, cut.shares, cut.blocks * cut.width), dict(
        CB=cb, JB=jb, ACC=_TL[acc], FIX_GAMMA=fix_gamma, WRITE_DW=dw is not None, WRITE_DB=db is not None,
    ), 4, None)
    return sums


def backward_peers(xv: View, dy, y, dx, dz, weight, mean, invstd, dw, db, count: torch.Tensor, peers: Peers, *,
                   relu: bool) -> torch.Tensor:
    """SyncBatchNorm's training backward in one launch: this rank's sums (Σg, Σg·x̂) into its symmetric buffer
    (and dw, db: the local sums), the R ranks' sums added in rank order, then dx (and dz) with the group's
    ``count`` (a device scalar). The launch runs for an empty x too: it is this rank's part of the exchange.
    Returns the group's sums [2C]."""
    return _backward_launch(_BWD_MODE["train"], xv, dy, y, dx, dz, weight, mean, None, invstd, dw, db,
                            is_var=False, eps=0.0, fix_gamma=False, relu=relu, count=count, peers=peers)


def _backward_launch(mode: int, xv: View, dy, y, dx, dz, weight, shift, mrel, sd, dw, db, *, is_var: bool,
                     eps: float, fix_gamma: bool, relu: bool, count: torch.Tensor | None = None,
                     peers: Peers | None = None, keep: bool = False) -> torch.Tensor:
    """One launch of the fused backward kernel (``mode`` as its MODE); with ``peers``, its exchange (then every
    sums item is scheduled before any dx item: LAG = the number of groups); ``keep`` as in ``backward``."""
    acc = _acc(xv.x.dtype)
    c = xv.c
    streams = xv.x.element_size() + dy.element_size() + (y.element_size() if relu else 0)
    train = mode == _BWD_MODE["train"]
    kind = "fused" if train else "sums" if mode == _BWD_MODE["sums"] else "frozen"
    sv, al, spatial, plan = _reduction_view(xv, streams, kind, "bwd", kind == "sums")
    dev = xv.x.device
    sums = _scratch(2 * c, acc, dev)
    part = _scratch(2 * c * (plan.split + plan.nsub), acc, dev)
    sync = _sync(plan, dev)
    grid = (2 if train else 1) * plan.groups * plan.ncb_g * plan.split
    keepv = _kept(plan, streams * xv.x.numel()) if keep else 0
    ch, cl = _hilo(float(xv.count))
    eh, el = _hilo(eps)
    pa = (None, None, 0, 0, 0, 0) if peers is None else (
        peers.ptrs, peers.flags, peers.rank, peers.world, peers.flags_at, peers.sums_at)
    _launch(_bwd_fused, "frozen" if kind == "frozen" else "bwd", grid, (
        dy, xv.x, y, dx, dz, weight, shift, mrel, sd, dw, db, sums, part, sync, count, *pa,
        c, sv.v, plan.vpi, plan.split, plan.nsub, plan.groups, plan.ncb_g,
        plan.lag if peers is None else plan.groups, keepv, ch, cl, eh, el,
    ), dict(
        MSUB=plan.msub, MS=plan.ms, MODE=mode,
        IS_VAR=is_var, HAS_MREL=mrel is not None, HAS_W=weight is not None, FIX_GAMMA=fix_gamma, RELU=relu,
        DZ=dz is not None, WRITE_DW=dw is not None, WRITE_DB=db is not None,
        PEERS=peers is not None, XB=1 if peers is None else _peer_block(c),
        TIMEOUT_NS=0 if peers is None else _peer_timeout_ns(), AL=al, KEEP=keepv > 0,
    ), sv, plan, spatial)
    return sums


def backward_dx(xv: View, dy, y, dx, dz, weight, mean, mrel, sd, sums, count, *, train: bool, is_var: bool,
                eps: float, fix_gamma: bool, relu: bool) -> None:
    """One pass of dx (and dz = g): training from the given sums [2, C] and ``count`` (a number or a device
    scalar tensor), or frozen dx = w·invstd·g; through the tile kernel, or the flat one (config.BN_DX_FLAT). Where
    the training sums pass runs row-strided (config.BN_SUMS_ROWS) the tile kernel takes x from its end down, where
    that pass's last reads are still in L2."""
    c, v = xv.c, xv.v
    count_ptr = isinstance(count, torch.Tensor)
    ch, cl = _hilo(0.0 if count_ptr else float(count))
    eh, el = _hilo(eps)
    if config.batch_norm_dx_flat(xv.x.numel(), xv.x.element_size(), xv.flat, c, xv.s, train):
        _dx_flat_pass(xv, dy, y, dx, dz, weight, mean, mrel, sd, sums, count if count_ptr else None, (ch, cl),
                      (eh, el), train=train, is_var=is_var, fix_gamma=fix_gamma, relu=relu)
        return
    plan = _plan(xv, 1, "dx" if train else "stream", "bwd")
    ncb = -(-c // plan.cb)
    _launch(_bwd_dx, "dx", ncb * plan.split, (
        dy, xv.x, y, dx, dz, weight, mean, mrel, sd, sums, count if count_ptr else None,
        c, v, plan.vpi, plan.split, ch, cl, eh, el,
    ), dict(
        TRAIN=train, COUNT_PTR=count_ptr, IS_VAR=is_var, HAS_MREL=mrel is not None,
        HAS_W=weight is not None, FIX_GAMMA=fix_gamma, RELU=relu, DZ=dz is not None,
        REV=train and config.batch_norm_sums_rows(xv.x.numel(), xv.x.element_size(), xv.flat),
    ), xv, plan)


def _dx_flat_pass(xv: View, dy, y, dx, dz, weight, mean, mrel, sd, sums, count_t, cnt_hilo, eps_hilo, *,
                  train: bool, is_var: bool, fix_gamma: bool, relu: bool) -> None:
    """``backward_dx`` through the flat pointwise kernel (``_bn_bwd_dx_flat_kernel``; config.BN_DX_FLAT)."""
    _, block, warps, _ = config.BN_DX_FLAT
    grid, sizes, shape = _flat_shape(xv, block)
    _bwd_dx_flat(grid, (
        dy, xv.x, y, dx, dz, weight, mean, mrel, sd, sums, count_t, xv.x.numel(), *cnt_hilo, *eps_hilo, *sizes,
    ), dict(
        **shape, TRAIN=train, COUNT_PTR=count_t is not None,
        IS_VAR=is_var, HAS_MREL=mrel is not None, HAS_W=weight is not None, FIX_GAMMA=fix_gamma, RELU=relu,
        DZ=dz is not None,
    ), warps, 1)


def merge_stats(counts: torch.Tensor, means: torch.Tensor, m2s: torch.Tensor, eps: float | None = None,
                running_mean=None, running_var=None, momentum: float | None = None, nbt=None):
    """Fixed-order Chan merge of R shards on device -> (count (0-dim), mean [C], biased var [C], invstd [C]
    = 1/sqrt(var + eps), None when ``eps`` is None). ``counts`` [R] and the rows of ``means``/``m2s`` [R, C]
    may be strided (unit column stride): a gathered [R, 2C + 1] buffer's views are read in place. With
    ``running_mean``/``running_var`` (dense) the same launch updates them as ``update_running`` does."""
    r, c = means.shape
    acc = means.dtype
    dev = means.device
    out = torch.empty(c * (2 if eps is None else 3) + 1, dtype=acc, device=dev)  # one allocation for all
    mean, var = out[:c], out[c:2 * c]
    invstd = None if eps is None else out[2 * c:3 * c]
    count = out[-1]
    cb = min(256, _pow2(c))
    eh, el = _hilo(0.0 if eps is None else eps)
    mh, ml = _hilo(0.0 if momentum is None else momentum)
    update = running_mean is not None
    _merge((-(-c // cb),), (
        counts, means, m2s, count, mean, var, invstd, running_mean, running_var, nbt if momentum is None else None,
        r, c, counts.stride(0), means.stride(0), m2s.stride(0), eh, el, mh, ml,
    ), dict(CB=cb, ACC=_TL[acc], INVSTD=eps is not None, UPDATE_RUNNING=update,
            MOMENTUM_NONE=update and momentum is None), 4, None)
    return count, mean, var, invstd


def update_running(running_mean, running_var, mean, var, count, momentum: float | None, nbt) -> None:
    """In place: running ← (1 - f)·running + f·(mean, var·n/(n - 1)); f = momentum or 1/nbt (on device)."""
    c = running_mean.numel()
    acc = _acc(mean.dtype)
    cb = min(256, _pow2(c))
    count_ptr = isinstance(count, torch.Tensor)
    ch, cl = _hilo(0.0 if count_ptr else float(count))
    mh, ml = _hilo(0.0 if momentum is None else momentum)
    _update_running((-(-c // cb),), (
        running_mean, running_var, mean, var, count if count_ptr else None, nbt, c, ch, cl, mh, ml,
    ), dict(CB=cb, ACC=_TL[acc], COUNT_PTR=count_ptr, MOMENTUM_NONE=momentum is None), 4, None)
