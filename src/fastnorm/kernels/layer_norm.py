"""Triton kernels for LayerNorm and RMSNorm, forward and backward, and their launchers.

One kernel family serves both norms (``IS_RMS``) and every option (weight, bias, fused residual add,
weight offset) through constexpr flags. The input is viewed as ``M`` rows of ``N`` elements with unit
column stride and an arbitrary row stride; offsets are 64-bit.

Forward, per row (accumulating in float32, float64 for float64 input)::

    s    = round_res(x + r)                           (with a residual; stored as residual_out)
    LN:  k = s[0];  μ = Σ(s - k)/N;  var = Σ((s - k) - μ)²/N        (two passes on shifted data)
         one_round entries: var = Σ(s - k)²/N - μ² from one reduction, the two passes again for a tile
         with a row where μ² > 4·var
    RMS: var = Σ s²/N   (no centring)
    rstd = 1 / sqrt(var + eps);  y = ((s - k) - μ) · rstd · (w + offset) + b

The shift by the row's first element makes a constant row centre to exact zeros (so its output is
exactly ``b``) and keeps rows with a large offset (1e4 + noise) accurate. The saved "mean" is the
shifted one, μ (the row mean is k + μ): backward re-reads k and centres exactly as the forward did,
where an fp32 k + μ would be off by half an ulp of the row mean. Rows that do not fit in
registers are walked in chunks; the per-chunk (count, mean, M2) are merged with Chan's formula, and a
second pass (re-reading the row, from L2) writes ``y``.

Backward, with ``g = dy · (w + offset)`` and ``x̂ = ((s - k) - μ) · rstd``::

    dx = rstd · (g − x̂ · mean(g · x̂) − mean(g))      (RMS: no mean(g) term)   [+ d residual_out]
    dw = Σ_rows dy · x̂,   db = Σ_rows dy

over a persistent grid of ``G`` programs: program ``p`` walks row blocks ``p, p + G, …``, keeps its
dw/db partial in registers (or, for chunked rows, in its own row of the partial buffer) and writes one
``[G, N]`` partial row; a second kernel sums the ``G`` partials in a fixed order. Rows too long for one
program's registers (16-bit input past 16384, float32 past 12288) are read twice that way (chunked), or, where
measured faster, split across the programs of one cooperative launch (the "split rows" section below); their
partial rows are the launch's slots. No float
atomics, so the result is bitwise identical run to run (for a given device and launch path).

Launchers take ``traceable``: inside a ``torch.library.triton_op`` body the kernels must be called
through ``wrap_triton`` (so torch.compile can trace them); the eager path calls them directly. Traced
launches cannot be cooperative: their split-size rows take the chunked kernel, whose dw/db and dx can differ
from the eager ones in the last bits.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
from torch._subclasses.fake_tensor import is_fake

from .._runtime import INTERPRETER
from ._exchange import arrive, tag_words, zeroed_counters
from ._launch import _launch_args, _Launcher
from ._reduce import rounded_prod
from ._replay import scratch
from .config import (
    NormConfig,
    device_index,
    norm_bwd_config,
    norm_bwd_pair_sums,
    norm_bwd_sums_via_scratch,
    norm_fit_prefetch,
    norm_fwd_config,
    norm_fwd_holds_params,
    norm_joint_pieces,
    norm_partial_sum_config,
    norm_split_fits,
    norm_widens,
)

# ----------------------------------------------------------------------------- kernels

#: The one-round statistics (``NormConfig.one_round``) take a second round for a tile with a row whose shifted mean
#: μ = E[d] has μ² > this · var, its shift more than 2 standard deviations from the mean: E[d²] = var + μ², so the
#: one-round form's rounding error, a few ulp of E[d²], stays within 5 times a two-round variance's.
_ONE_ROUND_CANCEL = tl.constexpr(4.0)

#: Kernels compiled for a GPU (not run by the interpreter, which has no inline assembly).
_COMPILED = tl.constexpr(not INTERPRETER)


@triton.jit
def _widen(v, ACC: tl.constexpr, ON: tl.constexpr):
    """``v.to(ACC)``. With ON (the launch's WIDEN, ``config.norm_widens``: every thread holds an even number of the
    tile's columns), bfloat16 to float32 compiles to one integer instruction an element, two to a register (a shift
    for the low half, a mask for the high one), where the compiler's conversion spends a PRMT and a shift on the high
    half: 1.5 an element. Exact either way (the interpreter: the plain conversion). H200, kernels only (NOTES.md,
    session 37): LN backward 16384 +1.1 points, 32768 +2.0, 65536 +1.4, RMS backward 16384 +2.3, LN forward 16384
    +1.0, 32768 +2.1. Not taken: RMSNorm's chunked forward (the host's WIDEN; 8192 lost 4.3: 32 registers instead of
    39, as session 17 saw), the whole-row tiles' weight and bias but for the persistent several-row tiles' (LN forward
    65536 spilled 112 bytes with them instead of 24), and the held loads formed again after the reductions."""
    if ON and _COMPILED and v.dtype.is_bf16() and ACC == tl.float32:
        return tl.inline_asm_elementwise("{ shl.b32 $0, $2, 16; and.b32 $1, $2, 0xffff0000; }", "=r,=r,r", [v],
                                         dtype=tl.float32, is_pure=True, pack=2)
    return v.to(ACC)


@triton.jit
def _load_sum(X, RES, RES_OUT, offs_x, offs_r, offs_ro, mask, HAS_RES: tl.constexpr,
              STORE_RES_OUT: tl.constexpr, ACC: tl.constexpr, POLICY: tl.constexpr, WIDEN: tl.constexpr,
              X_CACHE: tl.constexpr):
    """The normalized input ``s``: ``x``, or ``x + r`` rounded to residual_out's dtype (then stored); ``POLICY``:
    the loads' L2 eviction policy ("" for the default); WIDEN: :func:`_widen`'s (tiles of columns only); X_CACHE:
    x's cache modifier (".cg": L2 only, with no POLICY)."""
    x = _widen(tl.load(X + offs_x, mask=mask, other=0.0, eviction_policy=POLICY, cache_modifier=X_CACHE), ACC, WIDEN)
    if HAS_RES:
        r = _widen(tl.load(RES + offs_r, mask=mask, other=0.0, eviction_policy=POLICY), ACC, WIDEN)
        s = (x + r).to(RES_OUT.dtype.element_ty)
        if STORE_RES_OUT:
            tl.store(RES_OUT + offs_ro, s, mask=mask)
        x = s.to(ACC)
    return x


@triton.jit
def _cols_in_row(cols, n, ALL: tl.constexpr):
    """``cols < n``: which columns lie in the row; with ALL (known on the host: all of them) a constant, which the
    compiler drops from the accesses (no compare per element, no predicates)."""
    if ALL:
        return tl.full(cols.shape, True, tl.int1)
    else:
        return cols < n


@triton.jit
def _plus_offset(w, weight_offset, HAS_OFFSET: tl.constexpr):
    """The weight as the backward and the forward's chunked rows use it: w + weight_offset (zero-centred weights,
    γ + 1), or w itself without HAS_OFFSET (offset 0: no add an element a row where the weight is re-read per row,
    and w as torch multiplies it). The forward's whole-row tiles keep their add (``_fwd_tile``)."""
    if HAS_OFFSET:
        w = w + weight_offset
    return w


@triton.jit
def _rsqrt(v, IS_F64: tl.constexpr):
    """1 / sqrt(v), correctly rounded square root (the approximate rsqrt is off by a few ulp)."""
    if IS_F64:
        return 1.0 / tl.sqrt(v)
    else:
        return 1.0 / tl.sqrt_rn(v)


@triton.jit
def _tile_piece(X, RES, RES_OUT, rx, rr, rro, cols, mask, HAS_RES: tl.constexpr, HOLD_LOADED: tl.constexpr,
                ACC: tl.constexpr, WIDEN: tl.constexpr):
    """Columns ``cols`` of a tile's rows (row offsets ``rx``, ``rr``, ``rro``) for :func:`_fwd_tile` -> (s in ACC,
    and with HOLD_LOADED x as loaded — no residual then, s is x — else s again)."""
    if HOLD_LOADED:
        x_l = tl.load(X + rx[:, None] + cols[None, :], mask=mask, other=0.0)
        s = x_l.to(ACC)
    else:
        s = _load_sum(X, RES, RES_OUT, rx[:, None] + cols[None, :], rr[:, None] + cols[None, :],
                      rro[:, None] + cols[None, :], mask, HAS_RES, HAS_RES, ACC, "", WIDEN, "")
        x_l = s
    return s, x_l


@triton.jit
def _add_pairs(a1, a2, b1, b2):
    """The combine of a pair reduction: (a1, a2) + (b1, b2) element by element."""
    return a1 + b1, a2 + b2


@triton.jit
def _row_total(a, a2, TWO: tl.constexpr, JOINT_PIECES: tl.constexpr):
    """Σ over the rows of a tile held as one piece ``a`` or two (``a``, ``a2``; None for one)."""
    if JOINT_PIECES:  # two pieces of one width (and layout) in one reduction: config.norm_joint_pieces
        t = tl.sum(a + a2, axis=1)
    else:
        t = tl.sum(a, axis=1)
        if TWO:
            t += tl.sum(a2, axis=1)
    return t


@triton.jit
def _row_pair_total(a, b, a2, b2, TWO: tl.constexpr, JOINT_PIECES: tl.constexpr):
    """(Σa, Σb) over the rows of a tile (:func:`_row_total`) in one pair reduction: one exchange across warps."""
    if JOINT_PIECES:
        ta, tb = tl.reduce((a + a2, b + b2), 1, _add_pairs)
    else:
        ta, tb = tl.reduce((a, b), 1, _add_pairs)
        if TWO:
            ua, ub = tl.reduce((a2, b2), 1, _add_pairs)
            ta += ua
            tb += ub
    return ta, tb


@triton.jit
def _row_sq(xc, xc2, TWO: tl.constexpr, JOINT_PIECES: tl.constexpr):
    """Σ xc² (each square rounded on its own) over the rows of a tile of one piece or two (:func:`_row_total`); a
    second piece's squares formed after the first piece's sum, as the kernels were measured."""
    if JOINT_PIECES:
        sq = tl.sum(rounded_prod(xc, xc) + rounded_prod(xc2, xc2), axis=1)
    else:
        sq = tl.sum(rounded_prod(xc, xc), axis=1)
        if TWO:
            sq += tl.sum(rounded_prod(xc2, xc2), axis=1)
    return sq


@triton.jit
def _centered(d, mean, mask, MASKED: tl.constexpr):
    """d - μ per row; 0 where ``mask`` is off when MASKED (padding kept out of the sums)."""
    xc = d - mean[:, None]
    if MASKED:
        xc = tl.where(mask, xc, 0.0)
    return xc


@triton.jit
def _centered_sq(d, d2, mean, mask, mask2, PAD: tl.constexpr, EVEN_N: tl.constexpr, TWO: tl.constexpr,
                 JOINT_PIECES: tl.constexpr):
    """Σ(d - μ)² over the rows of a tile of one piece or two (``d2``; None for one), padding left out."""
    xc2 = None
    if TWO:
        xc2 = _centered(d2, mean, mask2, not EVEN_N)
    xc = _centered(d, mean, mask, PAD)
    return _row_sq(xc, xc2, TWO, JOINT_PIECES)


@triton.jit
def _fwd_tile(
    blk, X, RES, W, B, Y, RES_OUT, MEAN, RSTD, M, N, stride_x, stride_res, stride_y, stride_ro, eps, weight_offset,
    w, b, IS_RMS: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_RES: tl.constexpr,
    STORE_STATS: tl.constexpr, IS_F64: tl.constexpr, HOIST: tl.constexpr, EVEN_N: tl.constexpr,
    ACC: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_N2: tl.constexpr,
    HOLD_LOADED: tl.constexpr, zero, WIDEN: tl.constexpr, ONE_ROUND: tl.constexpr, JOINT_PIECES: tl.constexpr,
):
    """One tile of BLOCK_M whole rows in registers: statistics, y, and the saved mean/rstd. With BLOCK_N2 > 0 a
    row is held as two pieces, columns [0, BLOCK_N) (all < N) and BLOCK_N + [0, BLOCK_N2), instead of one tile
    padded to a power of two (N = 5120 as 4096 + 1024: no registers spent on padding). HOLD_LOADED (no residual):
    x held as loaded across the reductions and formed again after each (:func:`_unmerged`), not in fp32. ONE_ROUND
    (LayerNorm): the row statistics in one reduction where that loses nothing (``NormConfig.one_round``)."""
    TWO: tl.constexpr = BLOCK_N2 > 0
    cols = tl.arange(0, BLOCK_N)
    col_mask = cols < (BLOCK_N if TWO else N)
    rows = blk * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    row_ix = rows.to(tl.int64)
    rx = row_ix * stride_x
    rr = row_ix * stride_res
    rro = row_ix * stride_ro
    mask = row_mask[:, None] & col_mask[None, :]
    s, x_l = _tile_piece(X, RES, RES_OUT, rx, rr, rro, cols, mask, HAS_RES, HOLD_LOADED, ACC, WIDEN)
    mask2 = None
    s2 = None
    if TWO:
        cols2 = BLOCK_N + tl.arange(0, BLOCK_N2)
        col_mask2 = cols2 < N
        mask2 = row_mask[:, None] & col_mask2[None, :]
        s2, x_l2 = _tile_piece(X, RES, RES_OUT, rx, rr, rro, cols2, mask2, HAS_RES, HOLD_LOADED, ACC, WIDEN)
    PAD: tl.constexpr = not EVEN_N and not TWO  # the one tile has padding columns (kept out of the sums)
    if IS_RMS:
        xc = s
        xc2 = s2
        var = _row_sq(s, s2, TWO, JOINT_PIECES) / N
    else:
        # Shift: the row's first element (of s = x + r when fused), computed exactly as s.
        k = _load_sum(X, RES, RES_OUT, rx, rr, rro, row_mask, HAS_RES, False, ACC, "", False, "")
        d = s - k[:, None]
        if PAD:
            d = tl.where(mask, d, 0.0)
        d2 = None
        if TWO:
            d2 = s2 - k[:, None]
            if not EVEN_N:
                d2 = tl.where(mask2, d2, 0.0)
        if ONE_ROUND:
            # Σd and Σd² in one pair reduction: var = E[d²] - E[d]².
            dsq2 = None
            if TWO:
                dsq2 = rounded_prod(d2, d2)
            total, sq = _row_pair_total(d, rounded_prod(d, d), d2, dsq2, TWO, JOINT_PIECES)
            mean = total / N
            var = tl.maximum(sq / N - mean * mean, 0.0, propagate_nan=tl.PropagateNan.ALL)  # a NaN row stays NaN
            # A second round, Σ(d - μ)², for the tile's rows where one's shift lies far from its mean
            # (μ² > CANCEL · var): there E[d²] - E[d]² cancels past the rounding a two-round variance keeps.
            if tl.max((mean * mean > _ONE_ROUND_CANCEL * var).to(tl.int32), axis=0) > 0:
                if HOLD_LOADED:
                    dd = _unmerged(x_l, zero).to(ACC) - k[:, None]
                    dd2 = None
                    if TWO:
                        dd2 = _unmerged(x_l2, zero).to(ACC) - k[:, None]
                else:
                    dd = d
                    dd2 = d2
                var = _centered_sq(dd, dd2, mean, mask, mask2, PAD, EVEN_N, TWO, JOINT_PIECES) / N
            if not HOLD_LOADED:
                xc = d - mean[:, None]
                if TWO:
                    xc2 = d2 - mean[:, None]
        else:
            mean = _row_total(d, d2, TWO, JOINT_PIECES) / N
            if HOLD_LOADED:
                d = _unmerged(x_l, zero).to(ACC) - k[:, None]
                if TWO:
                    d2 = _unmerged(x_l2, zero).to(ACC) - k[:, None]
            xc = _centered(d, mean, mask, PAD)
            xc2 = None
            if TWO:
                xc2 = _centered(d2, mean, mask2, not EVEN_N)
            var = _row_sq(xc, xc2, TWO, JOINT_PIECES) / N
    rstd = _rsqrt(var + eps, IS_F64)
    if HOLD_LOADED:
        xc = _unmerged(x_l, zero, 1).to(ACC)
        if TWO:
            xc2 = _unmerged(x_l2, zero, 1).to(ACC)
        if not IS_RMS:
            xc = (xc - k[:, None]) - mean[:, None]
            if TWO:
                xc2 = (xc2 - k[:, None]) - mean[:, None]
    y = xc * rstd[:, None]
    if not HOIST:  # one-row tiles load weight and bias here, after the statistics (fewer live registers)
        if HAS_W:  # the offset added even when 0: without the add LN 16384 lost 91.7 -> 87.6% (H200, session 25)
            w = tl.load(W + cols, mask=col_mask, other=0.0).to(ACC) + weight_offset
        if HAS_B:
            b = tl.load(B + cols, mask=col_mask, other=0.0).to(ACC)
    if HAS_W:
        y = y * w[None, :]
    if HAS_B:
        y = y + b[None, :]
    tl.store(Y + row_ix[:, None] * stride_y + cols[None, :], y, mask=mask)
    if TWO:
        y2 = xc2 * rstd[:, None]
        if HAS_W:
            y2 = y2 * (tl.load(W + cols2, mask=col_mask2, other=0.0).to(ACC) + weight_offset)[None, :]
        if HAS_B:
            y2 = y2 + tl.load(B + cols2, mask=col_mask2, other=0.0).to(ACC)[None, :]
        tl.store(Y + row_ix[:, None] * stride_y + cols2[None, :], y2, mask=mask2)
    if STORE_STATS:
        if not IS_RMS:
            tl.store(MEAN + rows, mean, mask=row_mask)
        tl.store(RSTD + rows, rstd, mask=row_mask)


@triton.jit
def _norm_fwd_kernel(
    X, RES, W, B, Y, RES_OUT, MEAN, RSTD,
    M, N, num_chunks,
    stride_x, stride_res, stride_y, stride_ro,
    eps: tl.float64, weight_offset: tl.float64, zero,
    IS_RMS: tl.constexpr, HAS_W: tl.constexpr, HAS_OFFSET: tl.constexpr, HAS_B: tl.constexpr,
    HAS_RES: tl.constexpr, STORE_STATS: tl.constexpr, IS_F64: tl.constexpr, CHUNKED: tl.constexpr,
    PERSISTENT: tl.constexpr, HOIST: tl.constexpr, EVEN_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_N2: tl.constexpr, NUM_STAGES: tl.constexpr, UNROLL: tl.constexpr, KEEP_POLICY: tl.constexpr,
    RELEASE_POLICY: tl.constexpr, HOLD_LOADED: tl.constexpr, ROW_ALIGN: tl.constexpr, WIDEN: tl.constexpr,
    X_CACHE: tl.constexpr, X_KEEP_POLICY: tl.constexpr, P_CACHE: tl.constexpr, ONE_ROUND: tl.constexpr,
    JOINT_PIECES: tl.constexpr,
):
    """The forward of BLOCK_M-row tiles (:func:`_fwd_tile`) or of chunked rows. N and the row strides arrive divided
    by ROW_ALIGN (:func:`_row_align`)."""
    N = N * ROW_ALIGN
    stride_x = stride_x * ROW_ALIGN
    stride_res = stride_res * ROW_ALIGN
    stride_y = stride_y * ROW_ALIGN
    stride_ro = stride_ro * ROW_ALIGN
    ACC: tl.constexpr = tl.float64 if IS_F64 else tl.float32
    eps = tl.cast(eps, ACC)
    weight_offset = tl.cast(weight_offset, ACC)
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    num_blocks = tl.cdiv(M, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)

    if not CHUNKED:
        # HOIST (``config.norm_fwd_holds_params``): weight and bias in registers across the persistent loop.
        w = 0.0
        b = 0.0
        if HOIST:
            if HAS_W:
                w = _widen(tl.load(W + cols, mask=cols < N, other=0.0), ACC, WIDEN) + weight_offset
            if HAS_B:
                b = _widen(tl.load(B + cols, mask=cols < N, other=0.0), ACC, WIDEN)
        if PERSISTENT:
            # Row tiles pid, pid + G, ...; NUM_STAGES > 1 prefetches the next tiles (cp.async) meanwhile.
            for blk in tl.range(pid, num_blocks, num_programs, num_stages=NUM_STAGES):
                _fwd_tile(blk, X, RES, W, B, Y, RES_OUT, MEAN, RSTD, M, N, stride_x, stride_res, stride_y, stride_ro,
                          eps, weight_offset, w, b, IS_RMS, HAS_W, HAS_B, HAS_RES, STORE_STATS, IS_F64, HOIST,
                          EVEN_N, ACC, BLOCK_M, BLOCK_N, BLOCK_N2, HOLD_LOADED, zero, WIDEN, ONE_ROUND, JOINT_PIECES)
        else:
            _fwd_tile(pid, X, RES, W, B, Y, RES_OUT, MEAN, RSTD, M, N, stride_x, stride_res, stride_y, stride_ro,
                      eps, weight_offset, w, b, IS_RMS, HAS_W, HAS_B, HAS_RES, STORE_STATS, IS_F64, HOIST,
                      EVEN_N, ACC, BLOCK_M, BLOCK_N, BLOCK_N2, HOLD_LOADED, zero, WIDEN, ONE_ROUND, JOINT_PIECES)
    else:
        # Where the chunks tile N exactly, LayerNorm's loops drop the column compare (H200, session 17: bf16 LN 32768
        # 77.7 -> 82.1% of copy, 65536 63.4 -> 66.9). RMSNorm's keep it: its measured entries lost 4-9 points without
        # it (their kernels then took 32 registers instead of 40; the cause is not established).
        FOLD: tl.constexpr = EVEN_N and not IS_RMS
        for blk in range(pid, num_blocks, num_programs):
            rows = blk * BLOCK_M + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            row_ix = rows.to(tl.int64)
            rx = row_ix * stride_x
            rr = row_ix * stride_res
            ry = row_ix * stride_y
            rro = row_ix * stride_ro
            # Pass 1, element-wise across chunks (no cross-thread traffic inside the loop): RMS sums
            # squares; LN runs Welford per element position on the shifted row (every position present
            # in chunk c has seen c + 1 samples: one scalar reciprocal per chunk). One reduction after
            # the loop: Chan's merge of the per-position (count, mean, M2) for LN.
            if IS_RMS:
                sq = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            else:
                k = _load_sum(X, RES, RES_OUT, rx, rr, rro, row_mask, HAS_RES, False, ACC, "", False, "")
                mean_e = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
                m2_e = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            for c in tl.range(0, num_chunks, num_stages=NUM_STAGES, loop_unroll_factor=UNROLL):
                ccols = c * BLOCK_N + cols
                mask = row_mask[:, None] & _cols_in_row(ccols, N, FOLD)[None, :]
                s = _load_sum(X, RES, RES_OUT, rx[:, None] + ccols[None, :], rr[:, None] + ccols[None, :],
                              rro[:, None] + ccols[None, :], mask, HAS_RES, HAS_RES, ACC, X_KEEP_POLICY,
                              WIDEN, X_CACHE)
                if IS_RMS:
                    sq += s * s
                else:
                    d = s - k[:, None]
                    delta = d - mean_e
                    if not EVEN_N:
                        delta = tl.where(mask, delta, 0.0)
                    mean_e += delta * (1.0 / tl.cast(c + 1, ACC))
                    m2_e += delta * (d - mean_e)
            if IS_RMS:
                var = tl.sum(sq, axis=1) / N
            else:
                # Merge the per-position summaries (Chan, in sum form): positions of the last, partial
                # chunk past N saw one sample fewer.
                tail = N - (num_chunks - 1) * BLOCK_N
                cnt_e = tl.where(cols[None, :] < tail, num_chunks, num_chunks - 1).to(ACC)
                mean = tl.sum(rounded_prod(cnt_e, mean_e), axis=1) / N
                dev = mean_e - mean[:, None]
                var = (tl.sum(m2_e, axis=1) + tl.sum(rounded_prod(cnt_e * dev, dev), axis=1)) / N
            rstd = _rsqrt(var + eps, IS_F64)
            # Pass 2: re-read the row (from L2; residual_out when fused: one tensor instead of two).
            # The barrier makes every thread's residual_out stores visible to the threads re-reading them.
            if HAS_RES:
                tl.debug_barrier()
            for c in tl.range(0, num_chunks, num_stages=NUM_STAGES, loop_unroll_factor=UNROLL):
                ccols = c * BLOCK_N + cols
                col_mask = _cols_in_row(ccols, N, FOLD)
                mask = row_mask[:, None] & col_mask[None, :]
                if HAS_RES:
                    s = _widen(tl.load(RES_OUT + rro[:, None] + ccols[None, :], mask=mask, other=0.0,
                                       eviction_policy=RELEASE_POLICY), ACC, WIDEN)
                else:
                    s = _widen(tl.load(X + rx[:, None] + ccols[None, :], mask=mask, other=0.0,
                                       eviction_policy=RELEASE_POLICY, cache_modifier=X_CACHE),
                               ACC, WIDEN)
                if IS_RMS:
                    y = s * rstd[:, None]
                else:
                    y = ((s - k[:, None]) - mean[:, None]) * rstd[:, None]
                if HAS_W:
                    w = _widen(tl.load(W + ccols[None, :], mask=col_mask[None, :], other=0.0,
                                       eviction_policy=KEEP_POLICY, cache_modifier=P_CACHE), ACC, WIDEN)
                    y = y * _plus_offset(w, weight_offset, HAS_OFFSET)
                if HAS_B:
                    y = y + _widen(tl.load(B + ccols[None, :], mask=col_mask[None, :], other=0.0,
                                           eviction_policy=KEEP_POLICY, cache_modifier=P_CACHE), ACC, WIDEN)
                tl.store(Y + ry[:, None] + ccols[None, :], y, mask=mask)
            if STORE_STATS:  # as [BLOCK_M, 1] tiles: the tile's own layout, no shuffle through shared memory
                if not IS_RMS:
                    tl.store(MEAN + rows[:, None], mean[:, None], mask=row_mask[:, None])
                tl.store(RSTD + rows[:, None], rstd[:, None], mask=row_mask[:, None])


@triton.jit
def _xhat(x, k, mean_r, rstd, IS_RMS: tl.constexpr):
    """x̂ of a tile of rows: x·rstd (RMS) or (x - k)·rstd - mean·rstd (LN; ``k`` the row's shift, ``mean_r`` =
    mean·rstd as [rows, 1])."""
    if IS_RMS:
        return x * rstd[:, None]
    return (x - k[:, None]) * rstd[:, None] - mean_r


@triton.jit
def _stats_loads(X, MEAN, RSTD, rows, row_ix, row_mask, stride_x, IS_RMS: tl.constexpr, K_PAIR: tl.constexpr):
    """The loads behind :func:`_saved_stats`, as loaded: (rstd, the row's first x, the saved mean); RMS: rstd
    thrice. K_PAIR (rows of N >= 2, 16-element aligned): the first x read as the pair x[row, 0:2], one aligned
    access of 4 bytes or more, which the persistent loop's cp.async prefetch stages like the row itself; a lone
    2-byte load it cannot, and each row then waited for it (H200, session 17)."""
    rstd = tl.load(RSTD + rows, mask=row_mask, other=0.0)
    x0 = rstd
    mean = rstd
    if not IS_RMS:
        if K_PAIR:
            pair = tl.load(X + row_ix[:, None] * stride_x + tl.arange(0, 2)[None, :], mask=row_mask[:, None],
                           other=0.0)
            x0, _ = tl.split(pair)
        else:
            x0 = tl.load(X + row_ix * stride_x, mask=row_mask, other=0.0)
        mean = tl.load(MEAN + rows, mask=row_mask, other=0.0)
    return rstd, x0, mean


@triton.jit
def _stats_values(rstd, x0, mean, IS_RMS: tl.constexpr, ACC: tl.constexpr):
    """(the row shift k = x[row, 0], mean·rstd as [rows, 1]) from :func:`_stats_loads`; RMS: unused values."""
    k = rstd
    mean_r = rstd[:, None]
    if not IS_RMS:
        k = x0.to(ACC)
        mean_r = (mean * rstd)[:, None]
    return k, mean_r


@triton.jit
def _saved_stats(X, MEAN, RSTD, rows, row_ix, row_mask, stride_x, IS_RMS: tl.constexpr, ACC: tl.constexpr,
                 K_PAIR: tl.constexpr):
    """What the backward needs of the forward's statistics for ``rows``: (rstd, the row shift k = x[row, 0],
    mean·rstd as [rows, 1]); RMS: (rstd, unused, unused)."""
    rstd, x0, mean = _stats_loads(X, MEAN, RSTD, rows, row_ix, row_mask, stride_x, IS_RMS, K_PAIR)
    k, mean_r = _stats_values(rstd, x0, mean, IS_RMS, ACC)
    return rstd, k, mean_r


@triton.jit
def _bwd_chunk(X, DY, W, rx, rdy, ccols, row_mask, zrow, k, mean_r, rstd, weight_offset, HAS_OFFSET: tl.constexpr, N,
               IS_RMS: tl.constexpr, HAS_W: tl.constexpr, ACC: tl.constexpr, WIDEN: tl.constexpr):
    """One chunk ``ccols`` of long rows in the backward -> (column mask, tile mask, dy, x̂, g = dy·(w + offset))."""
    col_mask = ccols < N
    mask = row_mask[:, None] & col_mask
    x = _widen(tl.load(X + rx[:, None] + ccols, mask=mask, other=0.0), ACC, WIDEN)
    dy = _widen(tl.load(DY + rdy[:, None] + ccols, mask=mask, other=0.0), ACC, WIDEN)
    xhat = _xhat(x, k, mean_r, rstd, IS_RMS)
    if HAS_W:  # tile-shaped (row-broadcast) addresses: the tile's layout, cached re-reads
        w = _widen(tl.load(W + ccols + zrow, mask=mask, other=0.0), ACC, WIDEN)
        g = dy * _plus_offset(w, weight_offset, HAS_OFFSET)
    else:
        g = dy
    return col_mask, mask, dy, xhat, g


@triton.jit
def _row_sums(g, xhat, IS_RMS: tl.constexpr, PAIR_SUMS: tl.constexpr):
    """The backward's row sums of a tile, (Σg·x̂, Σg) per row (RMS: Σg·x̂ twice); PAIR_SUMS forms both in one
    reduction (one exchange across warps instead of two)."""
    return _sums_of(rounded_prod(g, xhat), g, IS_RMS, PAIR_SUMS)


@triton.jit
def _joint_pieces_row_sums(g, xhat, g2, xhat2, IS_RMS: tl.constexpr, PAIR_SUMS: tl.constexpr):
    """:func:`_row_sums` of rows held as two pieces of one width (and layout) in one reduction of the pieces'
    element-wise sums (``config.norm_joint_pieces``)."""
    return _sums_of(rounded_prod(g, xhat) + rounded_prod(g2, xhat2), g + g2, IS_RMS, PAIR_SUMS)


@triton.jit
def _sums_of(gx, g, IS_RMS: tl.constexpr, PAIR_SUMS: tl.constexpr):
    """(Σ gx, Σ g) over each row of the summands given (RMS: Σ gx twice)."""
    if IS_RMS or not PAIR_SUMS:
        p1 = tl.sum(gx, axis=1)
        p2 = p1
        if not IS_RMS:
            p2 = tl.sum(g, axis=1)
    else:
        p1, p2 = tl.reduce((gx, g), 1, _add_pairs)
    return p1, p2


@triton.jit
def _piece_loads(X, DY, W, row_ix, mask, cols, col_mask, stride_x, stride_dy, HAS_W: tl.constexpr,
                 W_IN_LOOP: tl.constexpr):
    """x, dy and, with W_IN_LOOP, the weight of columns ``cols`` ([1, width]) of rows ``row_ix``, as loaded."""
    x = tl.load(X + row_ix[:, None] * stride_x + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row_ix[:, None] * stride_dy + cols, mask=mask, other=0.0)
    w = x
    if HAS_W and W_IN_LOOP:
        w = tl.load(W + cols, mask=col_mask, other=0.0, eviction_policy="evict_last")
    return x, dy, w


@triton.jit
def _piece_values(x, dy, w_loaded, w, k, mean_r, rstd, weight_offset, HAS_OFFSET: tl.constexpr, IS_RMS: tl.constexpr,
                  HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr, ACC: tl.constexpr, WIDEN: tl.constexpr):
    """(dy, x̂, g = dy·(w + offset)) from :func:`_piece_loads`; the weight ``w`` is given (held), or, with
    W_IN_LOOP, the loaded ``w_loaded``."""
    dy = _widen(dy, ACC, WIDEN)
    xhat = _xhat(_widen(x, ACC, WIDEN), k, mean_r, rstd, IS_RMS)
    g = dy
    if HAS_W:
        if W_IN_LOOP:
            w = _plus_offset(_widen(w_loaded, ACC, WIDEN), weight_offset, HAS_OFFSET)
        g = dy * w
    return dy, xhat, g


@triton.jit
def _bwd_piece(X, DY, W, row_ix, row_mask, cols, col_mask, stride_x, stride_dy, k, mean_r, rstd, w, weight_offset,
               HAS_OFFSET: tl.constexpr, IS_RMS: tl.constexpr, HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr,
               ACC: tl.constexpr, WIDEN: tl.constexpr):
    """Columns ``cols`` ([1, width]) of whole rows in the backward -> (tile mask, dy, x̂, g = dy·(w + offset), and the
    loads x, dy, weight as loaded, for :func:`_dx_from_loads`); the weight ``w`` is given, or re-read here with
    W_IN_LOOP."""
    mask = row_mask[:, None] & col_mask
    x_l, dy_l, w_l = _piece_loads(X, DY, W, row_ix, mask, cols, col_mask, stride_x, stride_dy, HAS_W, W_IN_LOOP)
    dy, xhat, g = _piece_values(x_l, dy_l, w_l, w, k, mean_r, rstd, weight_offset, HAS_OFFSET, IS_RMS, HAS_W,
                                W_IN_LOOP, ACC, WIDEN)
    return mask, dy, xhat, g, x_l, dy_l, w_l


@triton.jit
def _unmerged(v, zero, SITE: tl.constexpr = 0):
    """``v`` itself, through an integer add of ``zero`` (a run-time 0) to its bits that the compiler cannot fold, so
    that what is formed from the result is not merged with what was formed from ``v`` before (the interpreter: ``v``
    as it is; it merges nothing). The assembly is pure, so that torch.compile's analysis of which tensors a kernel
    writes can read the kernel (it gives up on impure assembly and takes every input as written: session 41); SITE
    (0, 1) orders its operands, so that two calls on the same ``v`` (a row's two passes) are not merged as one."""
    if _COMPILED:  # 16- or 32-bit values (16-bit ones two to a register)
        z = (tl.zeros(v.shape, tl.float32) + zero).to(v.dtype)  # all bits 0
        asm: tl.constexpr = "add.u32 $0, $1, $2;" if SITE == 0 else "add.u32 $0, $2, $1;"
        return tl.inline_asm_elementwise(asm, "=r,r,r", [v, z], dtype=v.dtype, is_pure=True,
                                         pack=32 // v.dtype.primitive_bitwidth)
    return v


@triton.jit
def _formed_again(x_l, dy_l, w_l, w, k, mean_r, rstd, weight_offset, HAS_OFFSET: tl.constexpr, zero,
                  IS_RMS: tl.constexpr, HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr, ACC: tl.constexpr):
    """(x̂, g) of a piece formed again from its loads (:func:`_bwd_piece`) after the row reductions, by the same
    arithmetic (compiled, dx may contract another product into an FMA: the last bit may differ): the loads, not x̂
    and g in fp32, are then what the registers hold across the reductions — half as many for 16-bit rows
    (HOLD_LOADED; rows of N <= 2 here, the others form dx from the loads: :func:`_dx_from_loads`)."""
    x_l, dy_l, w_l = _unmerged_loads(x_l, dy_l, w_l, zero, HAS_W, W_IN_LOOP)
    _, xhat, g = _piece_values(x_l, dy_l, w_l, w, k, mean_r, rstd, weight_offset, HAS_OFFSET, IS_RMS, HAS_W,
                               W_IN_LOOP, ACC, False)
    return xhat, g


@triton.jit
def _unmerged_loads(x_l, dy_l, w_l, zero, HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr):
    """A held piece's loads (x, dy and, re-read with W_IN_LOOP, the weight) through :func:`_unmerged`, for what is
    formed from them after the row reductions."""
    if HAS_W and W_IN_LOOP:
        w_l = _unmerged(w_l, zero)
    return _unmerged(x_l, zero), _unmerged(dy_l, zero), w_l


@triton.jit
def _dres_out_load(DRES_OUT, row_ix, cols, mask, stride_dro, HAS_DRES_OUT: tl.constexpr):
    """The gradient of residual_out for :func:`_bwd_store` (0 without one), as loaded."""
    dro = 0.0
    if HAS_DRES_OUT:
        dro = tl.load(DRES_OUT + row_ix[:, None] * stride_dro + cols, mask=mask, other=0.0)
    return dro


@triton.jit
def _bwd_store(DX, DRES, row_ix, cols, mask, g, xhat, c1, c2, rstd, dro, eps, N, stride_dx, stride_dres,
               IS_RMS: tl.constexpr, HAS_DRES_OUT: tl.constexpr, HAS_DRES: tl.constexpr, DEGENERATE: tl.constexpr,
               ACC: tl.constexpr):
    """dx of whole rows from the row sums ``c1`` = mean(g·x̂), ``c2`` = mean(g) (LN), for columns ``cols``, plus
    residual_out's gradient ``dro`` (:func:`_dres_out_load`)."""
    if IS_RMS:
        dx = g * rstd[:, None] - xhat * (c1 * rstd)[:, None]
    else:
        dx = g * rstd[:, None] - (xhat * (c1 * rstd)[:, None] + (c2 * rstd)[:, None])
    # With N = 1 (RMS) or N <= 2 (LN) the projection above cancels to rounding noise; the exact
    # gradient is eps · rstd³ · (g - mean(g)) (from 1 - x̂² = eps · rstd²), and 0 for LN with N = 1.
    # A constexpr, not a run-time branch: the branch kept g and dx live together (spills at N >= 16384).
    if DEGENERATE:
        scale = (eps * rstd * rstd * rstd)[:, None]
        if IS_RMS:
            dx = g * scale
        else:
            dx = tl.where(N == 2, (g - c2[:, None]) * scale, 0.0)
    _store_dx(DX, DRES, row_ix, cols, mask, dx, dro, stride_dx, stride_dres, HAS_DRES_OUT, HAS_DRES, ACC)


@triton.jit
def _dx_from_loads(x_l, dy_l, w_l, w, k, mean_r, rstd, c1, c2, weight_offset, HAS_OFFSET: tl.constexpr, zero,
                   IS_RMS: tl.constexpr, HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr, ACC: tl.constexpr):
    """dx of a piece held as loaded (HOLD_LOADED: :func:`_bwd_piece`'s loads, after the row reductions; rows of
    N > 2), :func:`_bwd_store`'s projection multiplied out around the loads: with x̂ = (x - k)·rstd - mean·rstd
    and g = dy·w, dx = g·rstd - x̂·c1·rstd - c2·rstd = dy·(w·rstd) - ((x - k)·(rstd²·c1) - (mean·rstd²·c1 -
    c2·rstd)) (RMS: dy·(w·rstd) - x·(rstd²·c1)); ``c1``, ``c2`` the row means of g·x̂ and g. Equal to it up to
    rounding, in fewer instructions than x̂ and g formed again (bf16 LayerNorm at 16384: a loop of 1035 -> 936
    sm_90 instructions with the weight offset's add gone too; H200 kernel 69.6 -> 75.4% of copy, session 25)."""
    x_l, dy_l, w_l = _unmerged_loads(x_l, dy_l, w_l, zero, HAS_W, W_IN_LOOP)
    x = x_l.to(ACC)
    dy = dy_l.to(ACC)
    r = rstd[:, None]
    wr = r
    if HAS_W:
        if W_IN_LOOP:
            w = _plus_offset(w_l.to(ACC), weight_offset, HAS_OFFSET)
        wr = w * r
    c1r = (c1 * rstd)[:, None]
    if IS_RMS:
        return dy * wr - x * (r * c1r)
    return dy * wr - ((x - k[:, None]) * (r * c1r) - (mean_r * c1r - (c2 * rstd)[:, None]))


@triton.jit
def _piece_dx(DX, DRES, DRES_OUT, row_ix, cols, mask, g, xhat, x_l, dy_l, w_l, w, k, mean_r, rstd, c1, c2,
              weight_offset, HAS_OFFSET: tl.constexpr, zero, eps, N, stride_dro, stride_dx, stride_dres,
              IS_RMS: tl.constexpr, HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr, HOLD_LOADED: tl.constexpr,
              HAS_DRES_OUT: tl.constexpr, HAS_DRES: tl.constexpr, DEGENERATE: tl.constexpr, ACC: tl.constexpr,
              WIDEN: tl.constexpr):
    """Write dx of one piece of whole rows (:func:`_bwd_piece`) after the row sums ``c1``, ``c2``: held as loaded
    (HOLD_LOADED) straight from its loads (:func:`_dx_from_loads`: fewer instructions than x̂ and g formed again),
    or, in the degenerate rows, from x̂ and g formed again (:func:`_formed_again`); otherwise from the x̂ and g it
    kept (:func:`_bwd_store`)."""
    dro = _dres_out_load(DRES_OUT, row_ix, cols, mask, stride_dro, HAS_DRES_OUT)
    if HOLD_LOADED and not DEGENERATE:
        _store_dx(DX, DRES, row_ix, cols, mask, _dx_from_loads(
            x_l, dy_l, w_l, w, k, mean_r, rstd, c1, c2, weight_offset, HAS_OFFSET, zero, IS_RMS, HAS_W, W_IN_LOOP,
            ACC), dro, stride_dx, stride_dres, HAS_DRES_OUT, HAS_DRES, ACC)
    else:
        if HOLD_LOADED:
            xhat, g = _formed_again(x_l, dy_l, w_l, w, k, mean_r, rstd, weight_offset, HAS_OFFSET, zero, IS_RMS,
                                    HAS_W, W_IN_LOOP, ACC)
        _bwd_store(DX, DRES, row_ix, cols, mask, g, xhat, c1, c2, rstd, dro, eps, N, stride_dx, stride_dres, IS_RMS,
                   HAS_DRES_OUT, HAS_DRES, DEGENERATE, ACC)


@triton.jit
def _store_dx(DX, DRES, row_ix, cols, mask, dx, dro, stride_dx, stride_dres, HAS_DRES_OUT: tl.constexpr,
              HAS_DRES: tl.constexpr, ACC: tl.constexpr):
    """Store dx (plus residual_out's gradient ``dro``) at columns ``cols`` of rows ``row_ix``, and as the
    residual's gradient with HAS_DRES."""
    if HAS_DRES_OUT:
        dx += dro.to(ACC)
    tl.store(DX + row_ix[:, None] * stride_dx + cols, dx, mask=mask)
    if HAS_DRES:
        tl.store(DRES + row_ix[:, None] * stride_dres + cols, dx, mask=mask)


@triton.jit
def _bwd_sizes(N, stride_dy, stride_x, stride_dro, stride_dx, stride_dres, ROW_ALIGN: tl.constexpr):
    """The backward kernels' row length and strides from the quotients they arrive as (:func:`_row_align`): each
    times ROW_ALIGN, which the compiler then knows divides them."""
    return (N * ROW_ALIGN, stride_dy * ROW_ALIGN, stride_x * ROW_ALIGN, stride_dro * ROW_ALIGN,
            stride_dx * ROW_ALIGN, stride_dres * ROW_ALIGN)


@triton.jit
def _tile_to_scratch(SCR, acc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Store the [BLOCK_M, BLOCK_N] tile ``acc`` row-major at SCR (each thread its own elements: no exchange)."""
    tl.store(SCR + tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :], acc)


@triton.jit
def _scratch_col_sums(PART, SCR, first_col, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """PART[first_col + c] = Σ_r SCR[r, c] for first_col + c < N: the column sums of a tile that
    :func:`_tile_to_scratch` stored (before a barrier), rows added in order (deterministic), a column a thread."""
    cols = tl.arange(0, BLOCK_N)
    total = tl.load(SCR + cols)
    for r in tl.static_range(1, BLOCK_M):
        total += tl.load(SCR + r * BLOCK_N + cols)
    tl.store(PART + first_col + cols, total, mask=first_col + cols < N)


@triton.jit
def _norm_bwd_kernel(
    DY, X, W, MEAN, RSTD, DRES_OUT, DX, DRES, DW_PART, DB_PART,
    M, N, num_chunks,
    stride_dy, stride_x, stride_dro, stride_dx, stride_dres,
    eps: tl.float64, weight_offset: tl.float64, zero,
    IS_RMS: tl.constexpr, HAS_W: tl.constexpr, HAS_OFFSET: tl.constexpr, HAS_B: tl.constexpr,
    HAS_DRES_OUT: tl.constexpr,
    HAS_DRES: tl.constexpr, IS_F64: tl.constexpr, CHUNKED: tl.constexpr, W_IN_LOOP: tl.constexpr,
    DEGENERATE: tl.constexpr, PAIR_SUMS: tl.constexpr, EVEN_N: tl.constexpr, K_PAIR: tl.constexpr,
    HOLD_LOADED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_N2: tl.constexpr,
    NUM_STAGES: tl.constexpr, ROW_ALIGN: tl.constexpr, WIDEN: tl.constexpr, WIDE_ROWS: tl.constexpr,
    SUMS_VIA_SCRATCH: tl.constexpr, JOINT_PIECES: tl.constexpr,
):
    """The backward of whole rows (a persistent loop over row tiles) or of chunked rows. N and the row strides arrive
    divided by ROW_ALIGN (:func:`_row_align`). Whole rows form their element offsets in 32 bits unless WIDE_ROWS
    (:func:`_wide_rows`): a 64-bit offset costs each row pointer a 64-bit multiply and add in the loop."""
    N, stride_dy, stride_x, stride_dro, stride_dx, stride_dres = _bwd_sizes(
        N, stride_dy, stride_x, stride_dro, stride_dx, stride_dres, ROW_ALIGN)
    ACC: tl.constexpr = tl.float64 if IS_F64 else tl.float32
    TWO: tl.constexpr = BLOCK_N2 > 0  # whole rows as two pieces, as in the forward (_fwd_tile)
    eps = tl.cast(eps, ACC)
    weight_offset = tl.cast(weight_offset, ACC)
    pid = tl.program_id(0)
    num_programs = tl.num_programs(0)
    num_blocks = tl.cdiv(M, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)[None, :]
    part = pid.to(tl.int64) * N

    if not CHUNKED:
        # Masks the compiler can drop as constants: all columns where N fills the one tile (EVEN_N, taken where the
        # loop prefetches: see norm_bwd), all rows of one-row tiles (below).
        col_mask = _cols_in_row(cols, BLOCK_N if TWO else N, EVEN_N)
        w = 0.0
        w2 = 0.0
        if TWO:
            cols2 = BLOCK_N + tl.arange(0, BLOCK_N2)[None, :]
            col_mask2 = cols2 < N
        if HAS_W:
            if not W_IN_LOOP:  # held in registers across the loop (W_IN_LOOP: re-read per row block, from L1/L2)
                w = _plus_offset(_widen(tl.load(W + cols, mask=col_mask, other=0.0), ACC, WIDEN), weight_offset,
                                 HAS_OFFSET)
                if TWO:
                    w2 = _plus_offset(_widen(tl.load(W + cols2, mask=col_mask2, other=0.0), ACC, WIDEN), weight_offset,
                                      HAS_OFFSET)
            dw_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            if TWO:
                dw_acc2 = tl.zeros([BLOCK_M, BLOCK_N2], dtype=ACC)
        if HAS_B:
            db_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            if TWO:
                db_acc2 = tl.zeros([BLOCK_M, BLOCK_N2], dtype=ACC)
        for blk in tl.range(pid, num_blocks, num_programs, num_stages=NUM_STAGES):
            rows = blk * BLOCK_M + tl.arange(0, BLOCK_M)
            if BLOCK_M == 1:  # blk < num_blocks = M: the row is there
                row_mask = tl.full([1], True, tl.int1)
            else:
                row_mask = rows < M
            row_ix = rows
            if WIDE_ROWS:
                row_ix = rows.to(tl.int64)
            rstd, k, mean_r = _saved_stats(X, MEAN, RSTD, rows, row_ix, row_mask, stride_x, IS_RMS, ACC, K_PAIR)
            mask, dy, xhat, g, x_l, dy_l, w_l = _bwd_piece(X, DY, W, row_ix, row_mask, cols, col_mask, stride_x,
                                                           stride_dy, k, mean_r, rstd, w, weight_offset, HAS_OFFSET,
                                                           IS_RMS, HAS_W, W_IN_LOOP, ACC, WIDEN)
            # The parameter sums first: dy is dead before the row reductions, which g and x̂ alone cross (with
            # HOLD_LOADED, the loads they are formed from).
            if HAS_W:
                dw_acc += dy * xhat
            if HAS_B:
                db_acc += dy
            if not JOINT_PIECES:  # else reduced with the second piece
                c1, c2 = _row_sums(g, xhat, IS_RMS, PAIR_SUMS)
            if TWO:
                mask2, dy2, xhat2, g2, x_l2, dy_l2, w_l2 = _bwd_piece(
                    X, DY, W, row_ix, row_mask, cols2, col_mask2, stride_x, stride_dy, k, mean_r, rstd, w2,
                    weight_offset, HAS_OFFSET, IS_RMS, HAS_W, W_IN_LOOP, ACC, WIDEN)
                if HAS_W:
                    dw_acc2 += dy2 * xhat2
                if HAS_B:
                    db_acc2 += dy2
                if JOINT_PIECES:
                    c1, c2 = _joint_pieces_row_sums(g, xhat, g2, xhat2, IS_RMS, PAIR_SUMS)
                else:
                    p1, p2 = _row_sums(g2, xhat2, IS_RMS, PAIR_SUMS)
                    c1 += p1
                    c2 += p2
            n_row = N
            if EVEN_N:  # N = BLOCK_N, a power of two: the divisions are exact multiplies, no reciprocal's range checks
                n_row = BLOCK_N
            c1 = c1 / n_row
            c2 = c2 / n_row
            _piece_dx(DX, DRES, DRES_OUT, row_ix, cols, mask, g, xhat, x_l, dy_l, w_l, w, k, mean_r, rstd, c1, c2,
                      weight_offset, HAS_OFFSET, zero, eps, N, stride_dro, stride_dx, stride_dres, IS_RMS, HAS_W,
                      W_IN_LOOP, HOLD_LOADED, HAS_DRES_OUT, HAS_DRES, DEGENERATE, ACC, WIDEN)
            if TWO:
                _piece_dx(DX, DRES, DRES_OUT, row_ix, cols2, mask2, g2, xhat2, x_l2, dy_l2, w_l2, w2, k, mean_r, rstd,
                          c1, c2, weight_offset, HAS_OFFSET, zero, eps, N, stride_dro, stride_dx, stride_dres, IS_RMS,
                          HAS_W, W_IN_LOOP, HOLD_LOADED, HAS_DRES_OUT, HAS_DRES, DEGENERATE, ACC, WIDEN)
        if SUMS_VIA_SCRATCH:  # the tile's rows summed through the program's scratch (norm_bwd_sums_via_scratch)
            scr = num_programs.to(tl.int64) * N + pid.to(tl.int64) * (BLOCK_M * (BLOCK_N + BLOCK_N2))
            if HAS_W:
                _tile_to_scratch(DW_PART + scr, dw_acc, BLOCK_M, BLOCK_N)
                if TWO:
                    _tile_to_scratch(DW_PART + scr + BLOCK_M * BLOCK_N, dw_acc2, BLOCK_M, BLOCK_N2)
            if HAS_B:
                _tile_to_scratch(DB_PART + scr, db_acc, BLOCK_M, BLOCK_N)
                if TWO:
                    _tile_to_scratch(DB_PART + scr + BLOCK_M * BLOCK_N, db_acc2, BLOCK_M, BLOCK_N2)
            tl.debug_barrier()  # every thread's tile stores are visible to the threads that sum its columns
            if HAS_W:
                _scratch_col_sums(DW_PART + part, DW_PART + scr, 0, N, BLOCK_M, BLOCK_N)
                if TWO:
                    _scratch_col_sums(DW_PART + part, DW_PART + scr + BLOCK_M * BLOCK_N, BLOCK_N, N, BLOCK_M,
                                      BLOCK_N2)
            if HAS_B:
                _scratch_col_sums(DB_PART + part, DB_PART + scr, 0, N, BLOCK_M, BLOCK_N)
                if TWO:
                    _scratch_col_sums(DB_PART + part, DB_PART + scr + BLOCK_M * BLOCK_N, BLOCK_N, N, BLOCK_M,
                                      BLOCK_N2)
        else:
            if HAS_W:
                tl.store(DW_PART + part + cols, tl.sum(dw_acc, axis=0, keep_dims=True), mask=col_mask)
                if TWO:
                    tl.store(DW_PART + part + cols2, tl.sum(dw_acc2, axis=0, keep_dims=True), mask=col_mask2)
            if HAS_B:
                tl.store(DB_PART + part + cols, tl.sum(db_acc, axis=0, keep_dims=True), mask=col_mask)
                if TWO:
                    tl.store(DB_PART + part + cols2, tl.sum(db_acc2, axis=0, keep_dims=True), mask=col_mask2)
    else:
        # Rows too long for registers: pass 1 forms the row sums (element-wise across chunks, one
        # reduction after), pass 2 re-reads the row (from L2), writes dx and adds this block's dw/db
        # into the program's own partial row (read and written by the same threads: [1, BLOCK_N] tiles).
        zrow = tl.zeros([BLOCK_M, 1], dtype=tl.int32)
        for blk in range(pid, num_blocks, num_programs):
            rows = blk * BLOCK_M + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            row_ix = rows.to(tl.int64)
            rx = row_ix * stride_x
            rdy = row_ix * stride_dy
            rstd = tl.load(RSTD + rows, mask=row_mask, other=0.0)
            k = tl.zeros([BLOCK_M], dtype=ACC)  # LayerNorm's row shift and mean·rstd (unused by RMS)
            mean_r = tl.zeros([BLOCK_M, 1], dtype=ACC)
            if not IS_RMS:
                k = tl.load(X + rx, mask=row_mask, other=0.0).to(ACC)
                mean_r = (tl.load(MEAN + rows, mask=row_mask, other=0.0) * rstd)[:, None]
            c1_e = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            c2_e = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC)
            for c in tl.range(0, num_chunks, num_stages=NUM_STAGES):
                _, _, _, xhat, g = _bwd_chunk(X, DY, W, rx, rdy, c * BLOCK_N + cols, row_mask, zrow, k, mean_r, rstd,
                                              weight_offset, HAS_OFFSET, N, IS_RMS, HAS_W, ACC, WIDEN)
                c1_e += g * xhat
                if not IS_RMS:
                    c2_e += g
            c1r = (tl.sum(c1_e, axis=1) / N * rstd)[:, None]
            if not IS_RMS:
                c2r = (tl.sum(c2_e, axis=1) / N * rstd)[:, None]
            first = blk == pid
            # The previous block's partial-row stores (by other threads) are visible before re-reading them.
            tl.debug_barrier()
            for c in tl.range(0, num_chunks, num_stages=NUM_STAGES):
                ccols = c * BLOCK_N + cols
                col_mask, mask, dy, xhat, g = _bwd_chunk(X, DY, W, rx, rdy, ccols, row_mask, zrow, k, mean_r, rstd,
                                                         weight_offset, HAS_OFFSET, N, IS_RMS, HAS_W, ACC, WIDEN)
                if IS_RMS:
                    dx = g * rstd[:, None] - xhat * c1r
                else:
                    dx = g * rstd[:, None] - (xhat * c1r + c2r)
                if HAS_DRES_OUT:
                    dx += tl.load(DRES_OUT + row_ix[:, None] * stride_dro + ccols, mask=mask, other=0.0).to(ACC)
                tl.store(DX + row_ix[:, None] * stride_dx + ccols, dx, mask=mask)
                if HAS_DRES:
                    tl.store(DRES + row_ix[:, None] * stride_dres + ccols, dx, mask=mask)
                if HAS_W:
                    pw = tl.sum(rounded_prod(dy, xhat), axis=0, keep_dims=True)
                    if not first:
                        pw += tl.load(DW_PART + part + ccols, mask=col_mask, other=0.0)
                    tl.store(DW_PART + part + ccols, pw, mask=col_mask)
                if HAS_B:
                    pb = tl.sum(dy, axis=0, keep_dims=True)
                    if not first:
                        pb += tl.load(DB_PART + part + ccols, mask=col_mask, other=0.0)
                    tl.store(DB_PART + part + ccols, pb, mask=col_mask)


@triton.jit
def _sum_partials_kernel(
    DW_PART, DB_PART, DW, DB, G, N,
    HAS_W: tl.constexpr, HAS_B: tl.constexpr, IS_F64: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_C: tl.constexpr,
):
    """DW[c] = Σ_g DW_PART[g, c] (and DB), summed in a fixed order: deterministic."""
    ACC: tl.constexpr = tl.float64 if IS_F64 else tl.float32
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < N
    dw = tl.zeros([BLOCK_G, BLOCK_C], dtype=ACC)
    db = tl.zeros([BLOCK_G, BLOCK_C], dtype=ACC)
    for g0 in range(0, G, BLOCK_G):
        g = g0 + tl.arange(0, BLOCK_G)
        offs = g.to(tl.int64)[:, None] * N + cols[None, :]
        mask = (g < G)[:, None] & col_mask[None, :]
        if HAS_W:
            dw += tl.load(DW_PART + offs, mask=mask, other=0.0)
        if HAS_B:
            db += tl.load(DB_PART + offs, mask=mask, other=0.0)
    if HAS_W:
        tl.store(DW + cols, tl.sum(dw, axis=0), mask=col_mask)
    if HAS_B:
        tl.store(DB + cols, tl.sum(db, axis=0), mask=col_mask)


# ----------------------------------------------------------------------------- split rows (backward)
# A row too long for one program's registers is split into SPLIT = cdiv(N, BLOCK_N) pieces held by SPLIT programs:
# program p holds piece j = p % SPLIT of the rows of slot p // SPLIT (rows slot, slot + SLOTS, ...), so its dw/db
# accumulators (and weight piece) stay in registers across its rows. Per row, each program publishes its piece's
# (Σg·x̂, Σg) and waits until all SPLIT partials of the row are there, then sums them in piece order (every program
# of the row gets bitwise the same result) and writes its piece of dx from registers: x and dy read once. A
# program issues its next row's loads before it collects this row's partials. It then either publishes the next
# row's partial before the wait (waiting for those loads first; the others get a round of slack) or, with
# EARLY_LOADS (``NormConfig.early_loads``), after this row's dx is stored (the loads' latency runs during the wait,
# but every round waits for the slowest piece of the last); the tables choose per row length (NOTES.md, session
# 14). The grid is launched cooperatively (all programs resident at once).
#
# The exchange costs one store and one poll per row, no counters: a partial is published as 64-bit words
# (tag << 32 | fp32 bits), which are written and read whole, so a reader that sees a word's tag sees its value. The
# tag of round t (a slot's t-th row) is base + t + 1, where ``base`` is the epoch that the launch reads at TAGS[0]
# and its last program advances past every tag it wrote (starting again from 0, after zeroing the buffer, before it
# nears 2^30): words left by earlier launches carry older tags. Partials rotate through four buffers by round (see
# ``_round_buf``). SERIAL (the interpreter runs programs one after another, so no program may wait for a later
# one): each program forms every piece's partial itself and nothing waits.

#: The epoch at which a launch's last program zeroes the tag buffer and starts again from 0.
_EPOCH_LIMIT = tl.constexpr(1 << 30)


@triton.jit
def _tagged(v, tag):
    """fp32 ``v`` and int64 ``tag`` packed as one 64-bit word: tag << 32 | the bits of v."""
    return (tag << 32) | (v.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF)


@triton.jit
def _publish(buf, j, a, q, tag, live, SPLIT_P2: tl.constexpr):
    """Publish piece j's partial (a, q) ([1] each) for round ``tag`` in ``buf`` (a words, then q words), where
    ``live`` ([1]: the round has a row)."""
    one = tl.arange(0, 1)
    # Relaxed atomic stores: single-copy atomic 64-bit writes under the PTX memory model, which the readers' polls
    # (volatile loads) may race with.
    tl.atomic_xchg(buf + j + one, _tagged(a, tag), mask=live, sem="relaxed", scope="gpu")
    tl.atomic_xchg(buf + SPLIT_P2 + j + one, _tagged(q, tag), mask=live, sem="relaxed", scope="gpu")


@triton.jit
def _round_buf(TAGS, t, slot, SLOTS, SPLIT_P2: tl.constexpr):
    """Round t's partial words of a slot: four buffers in turn. A program publishes round t + 1 before it collects
    round t; when it does, every program of its slot has published round t - 1, so the slowest may still be
    collecting round t - 2: rounds t - 2 to t + 1 are in use (with EARLY_LOADS, where round t + 1 is published after
    round t is collected, only t and t + 1)."""
    return TAGS + 1 + ((t % 4) * SLOTS + slot).to(tl.int64) * (2 * SPLIT_P2)


@triton.jit
def _collect(buf, tag, SPLIT, SERIAL: tl.constexpr, SPLIT_P2: tl.constexpr):
    """The SPLIT partials (a, q) of ``buf`` as [SPLIT_P2] fp32 vectors (0 past SPLIT), once all carry ``tag``
    (polled with volatile loads). SERIAL: this program published them all just before; a word with another tag
    (a wrong tag or buffer) gives NaN, which the tests see."""
    pieces = tl.arange(0, SPLIT_P2)
    pmask = pieces < SPLIT
    wa = tl.load(buf + pieces, mask=pmask, other=0, volatile=True)
    wq = tl.load(buf + SPLIT_P2 + pieces, mask=pmask, other=0, volatile=True)
    ok = (((wa >> 32) == tag) & ((wq >> 32) == tag)) | ~pmask
    if not SERIAL:
        while tl.min(ok.to(tl.int32)) == 0:
            wa = tl.load(buf + pieces, mask=pmask, other=0, volatile=True)
            wq = tl.load(buf + SPLIT_P2 + pieces, mask=pmask, other=0, volatile=True)
            ok = (((wa >> 32) == tag) & ((wq >> 32) == tag)) | ~pmask
    a = tl.where(pmask, wa.to(tl.int32).to(tl.float32, bitcast=True), 0.0)
    q = tl.where(pmask, wq.to(tl.int32).to(tl.float32, bitcast=True), 0.0)
    if SERIAL:
        a = tl.where(ok, a, float("nan"))
        q = tl.where(ok, q, float("nan"))
    return a, q


@triton.jit
def _advance_epoch(TAGS, SYNC, base, M, SLOTS, TAG_WORDS):
    """After a program's last row: the launch's last program moves the epoch past every tag the launch wrote
    (zeroing the buffer and starting from 0 before it nears 2^30); SYNC is left at 0."""
    if arrive(SYNC, tl.num_programs(0)):
        nxt = base + tl.cdiv(M, SLOTS) + 1
        if nxt >= _EPOCH_LIMIT:
            for w0 in range(1, TAG_WORDS, 1024):
                w = w0 + tl.arange(0, 1024)
                tl.store(TAGS + w, tl.zeros([1024], dtype=tl.int64), mask=w < TAG_WORDS)
            nxt = nxt * 0
        tl.store(TAGS, nxt)


@triton.jit
def _split_loads(X, DY, W, MEAN, RSTD, row, M, cols, col_mask, stride_x, stride_dy, IS_RMS: tl.constexpr,
                 HAS_W: tl.constexpr, W_IN_LOOP: tl.constexpr):
    """The loads of row ``row``'s piece, issued before the caller waits for the previous row's partials -> (x, dy,
    weight, rstd, x[row, 0], mean) as loaded. A row past M - 1 reads nothing."""
    rows = row + tl.arange(0, 1)
    live = rows < M
    row_ix = rows.to(tl.int64)
    mask = live[:, None] & col_mask
    x, dy, w_loaded = _piece_loads(X, DY, W, row_ix, mask, cols, col_mask, stride_x, stride_dy, HAS_W, W_IN_LOOP)
    rstd, x0, mean = _stats_loads(X, MEAN, RSTD, rows, row_ix, live, stride_x, IS_RMS, False)
    return x, dy, w_loaded, rstd, x0, mean


@triton.jit
def _split_sums(X, DY, W, TAGS, x, dy, w_loaded, rstd, x0, mean, row, t, base, slot, j, M, N, SPLIT, SLOTS, ar, w,
                weight_offset, HAS_OFFSET: tl.constexpr, dw_acc, db_acc, stride_x, stride_dy, IS_RMS: tl.constexpr,
                HAS_W: tl.constexpr, HAS_B: tl.constexpr, PAIR_SUMS: tl.constexpr, W_IN_LOOP: tl.constexpr,
                SERIAL: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_P2: tl.constexpr, ACC: tl.constexpr,
                WIDEN: tl.constexpr):
    """Round t of a program, from :func:`_split_loads` of row ``row``: dy and dy·x̂ added to the dw/db accumulators,
    the piece's (Σg·x̂, Σg) published (SERIAL: every piece's) -> (g, x̂, dw_acc, db_acc). A row past M - 1 adds
    nothing and publishes nothing."""
    rows = row + tl.arange(0, 1)
    live = rows < M
    k, mean_r = _stats_values(rstd, x0, mean, IS_RMS, ACC)
    dy, xhat, g = _piece_values(x, dy, w_loaded, w, k, mean_r, rstd, weight_offset, HAS_OFFSET, IS_RMS, HAS_W,
                                W_IN_LOOP, ACC, WIDEN)
    if HAS_W:
        dw_acc += dy * xhat
    if HAS_B:
        db_acc += dy
    buf = _round_buf(TAGS, t, slot, SLOTS, SPLIT_P2)
    tag = base + t + 1
    if SERIAL:
        for jj in range(0, SPLIT):
            cj = jj * BLOCK_N + ar
            _, _, xj, gj, _, _, _ = _bwd_piece(X, DY, W, rows.to(tl.int64), live, cj, cj < N, stride_x, stride_dy, k,
                                               mean_r, rstd, 0.0, weight_offset, HAS_OFFSET, IS_RMS, HAS_W, True, ACC,
                                               WIDEN)
            q1, q2 = _row_sums(gj, xj, IS_RMS, PAIR_SUMS)
            _publish(buf, jj, q1, q2, tag, live, SPLIT_P2)
    else:
        p1, p2 = _row_sums(g, xhat, IS_RMS, PAIR_SUMS)
        _publish(buf, j, p1, p2, tag, live, SPLIT_P2)
    return g, xhat, dw_acc, db_acc


@triton.jit
def _norm_bwd_split_kernel(
    DY, X, W, MEAN, RSTD, DRES_OUT, DX, DRES, DW_PART, DB_PART, TAGS, SYNC,
    M, N, SPLIT, SLOTS, TAG_WORDS,
    stride_dy, stride_x, stride_dro, stride_dx, stride_dres,
    eps: tl.float64, weight_offset: tl.float64,
    IS_RMS: tl.constexpr, HAS_W: tl.constexpr, HAS_OFFSET: tl.constexpr, HAS_B: tl.constexpr,
    HAS_DRES_OUT: tl.constexpr,
    HAS_DRES: tl.constexpr, PAIR_SUMS: tl.constexpr, W_IN_LOOP: tl.constexpr, EARLY_LOADS: tl.constexpr,
    SERIAL: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT_P2: tl.constexpr, ROW_ALIGN: tl.constexpr, WIDEN: tl.constexpr,
):
    """Backward of split rows (fp32 accumulation), two rows deep (across the wait for a row's partials, its x̂ and g
    are held with the next row's, or with EARLY_LOADS with the next row's loads): the pieces' (Σg·x̂, Σg) exchanged
    and summed in piece order; dw/db accumulated per program in registers and written to row ``slot`` of the
    [SLOTS, N] partials (summed by ``_sum_partials_kernel``). N > 2 (the N <= 2 exact gradient is not formed
    here). N and the row strides arrive divided by ROW_ALIGN (:func:`_row_align`)."""
    N, stride_dy, stride_x, stride_dro, stride_dx, stride_dres = _bwd_sizes(
        N, stride_dy, stride_x, stride_dro, stride_dx, stride_dres, ROW_ALIGN)
    ACC: tl.constexpr = tl.float32
    eps = tl.cast(eps, ACC)
    weight_offset = tl.cast(weight_offset, ACC)
    pid = tl.program_id(0)
    j = pid % SPLIT
    slot = pid // SPLIT
    one = tl.arange(0, 1)
    ar = tl.arange(0, BLOCK_N)[None, :]
    cols = j * BLOCK_N + ar
    col_mask = cols < N
    mask = (one == 0)[:, None] & col_mask
    base = tl.load(TAGS)
    w = 0.0
    if HAS_W and not W_IN_LOOP:
        w = _plus_offset(_widen(tl.load(W + cols, mask=col_mask, other=0.0), ACC, WIDEN), weight_offset, HAS_OFFSET)
    dw_acc = tl.zeros([1, BLOCK_N], dtype=ACC)
    db_acc = tl.zeros([1, BLOCK_N], dtype=ACC)
    x, dy, w_loaded, rstd, x0, mean = _split_loads(X, DY, W, MEAN, RSTD, slot, M, cols, col_mask, stride_x,
                                                    stride_dy, IS_RMS, HAS_W, W_IN_LOOP)
    g, xhat, dw_acc, db_acc = _split_sums(
        X, DY, W, TAGS, x, dy, w_loaded, rstd, x0, mean, slot, 0, base, slot, j, M, N, SPLIT, SLOTS, ar, w,
        weight_offset, HAS_OFFSET, dw_acc, db_acc, stride_x, stride_dy, IS_RMS, HAS_W, HAS_B, PAIR_SUMS, W_IN_LOOP,
        SERIAL, BLOCK_N, SPLIT_P2, ACC, WIDEN)
    for row in range(slot, M, SLOTS):
        t = (row - slot) // SLOTS
        x, dy, w_loaded, rstd_next, x0, mean = _split_loads(X, DY, W, MEAN, RSTD, row + SLOTS, M, cols, col_mask,
                                                             stride_x, stride_dy, IS_RMS, HAS_W, W_IN_LOOP)
        if not EARLY_LOADS:  # the next row's partial published before this row's wait: the others get a round of slack
            g_next, xhat_next, dw_acc, db_acc = _split_sums(
                X, DY, W, TAGS, x, dy, w_loaded, rstd_next, x0, mean, row + SLOTS, t + 1, base, slot, j, M, N, SPLIT,
                SLOTS, ar, w, weight_offset, HAS_OFFSET, dw_acc, db_acc, stride_x, stride_dy, IS_RMS, HAS_W, HAS_B,
                PAIR_SUMS, W_IN_LOOP, SERIAL, BLOCK_N, SPLIT_P2, ACC, WIDEN)
        s1, s2 = _collect(_round_buf(TAGS, t, slot, SLOTS, SPLIT_P2), base + t + 1, SPLIT, SERIAL, SPLIT_P2)
        c1 = tl.sum(s1) / N + tl.zeros([1], dtype=ACC)
        c2 = tl.sum(s2) / N + tl.zeros([1], dtype=ACC)
        row_ix = (row + one).to(tl.int64)
        dro = _dres_out_load(DRES_OUT, row_ix, cols, mask, stride_dro, HAS_DRES_OUT)  # not held across the wait
        _bwd_store(DX, DRES, row_ix, cols, mask, g, xhat, c1, c2, rstd, dro, eps, N, stride_dx, stride_dres, IS_RMS,
                   HAS_DRES_OUT, HAS_DRES, False, ACC)
        if EARLY_LOADS:  # published after this row's dx: the next row's loads were in flight during the wait
            g_next, xhat_next, dw_acc, db_acc = _split_sums(
                X, DY, W, TAGS, x, dy, w_loaded, rstd_next, x0, mean, row + SLOTS, t + 1, base, slot, j, M, N, SPLIT,
                SLOTS, ar, w, weight_offset, HAS_OFFSET, dw_acc, db_acc, stride_x, stride_dy, IS_RMS, HAS_W, HAS_B,
                PAIR_SUMS, W_IN_LOOP, SERIAL, BLOCK_N, SPLIT_P2, ACC, WIDEN)
        g = g_next
        xhat = xhat_next
        rstd = rstd_next
    part = slot.to(tl.int64) * N
    if HAS_W:
        tl.store(DW_PART + part + cols, dw_acc, mask=col_mask)
    if HAS_B:
        tl.store(DB_PART + part + cols, db_acc, mask=col_mask)
    _advance_epoch(TAGS, SYNC, base, M, SLOTS, TAG_WORDS)


# ----------------------------------------------------------------------------- launchers


def _row_align(*sizes) -> int:
    """The largest power of two up to 16 that divides every row length and stride in ``sizes`` (elements; 0, an
    absent tensor's stride, divides by all), 1 where one is symbolic. The kernels take them divided by it and
    multiply back by the constexpr, so the compiler knows which rows start 16-byte aligned: Triton itself only
    specializes an integer's divisibility by 16, and rows of N = 9000 (bf16: 16-byte aligned) were read 2 bytes
    at a time."""
    g = 16
    for v in sizes:
        if type(v) is not int:
            return 1
        g = math.gcd(g, v)
    return g


def _aligned(*tensors: torch.Tensor | None) -> bool:
    """Whether every given tensor starts 16-byte aligned (Triton then specializes its pointer so: vector loads)."""
    return all(t is None or t.data_ptr() % 16 == 0 for t in tensors)


def _min(a, b):
    """min of two sizes, symbolic ones too (``torch.sym_min`` costs ~6 us of host time per call on plain ints)."""
    return min(a, b) if type(a) is int and type(b) is int else torch.sym_min(a, b)


def _max(a, b):
    """max of two sizes, symbolic ones too (see :func:`_min`)."""
    return max(a, b) if type(a) is int and type(b) is int else torch.sym_max(a, b)


def as_rows(t: torch.Tensor, n: int) -> torch.Tensor:
    """``t`` as an ``(M, n)`` matrix with unit column stride: ``t`` itself when it already is one (no new
    view: the common 2-D case, on the eager hot path), a view when the strides allow, else one copy.

    Rows spaced by a stride other than ``n`` (a slice of wider rows, an expanded tensor) are read in place
    only when Triton compiles the kernels for them exactly as for the dense rows: it specializes on a
    stride being 1 or a multiple of 16 and on 16-byte alignment of the base, the kernels on the largest power
    of two up to 16 dividing N and the strides (``_row_align``, which also picks the launch configs of rows
    read one element a load), and a different specialization may vectorize the loads differently and change
    the order of a row's sum. Otherwise they are copied once, so a strided input gives bitwise the result of
    its contiguous copy."""
    t2 = t if t.dim() == 2 and t.shape[1] == n else t.reshape(-1, n)
    if n > 1 and t2.stride(1) != 1:
        return t2.contiguous()
    rs = t2.stride(0)
    if rs == n:
        return t2
    if t2.shape[0] == 1:  # one row: the stride is never used; give it the dense value
        return t2.as_strided((1, n), (n, 1))
    if (rs == 1) == (n == 1) and _row_align(rs) == _row_align(n) and not is_fake(t2) and _aligned(t2):
        return t2
    return t2.contiguous()  # also when traced (torch.compile): a fake tensor has no address to check


def _scalar_loads(sizes: tuple, align: int | None = None) -> bool:
    """Whether rows of ``sizes`` (N and the row strides, as for :func:`_row_align`; ``align`` its value where the
    caller has it) are read one element a load: an odd N or stride, not a symbolic one (whose alignment is unknown,
    not odd)."""
    return (_row_align(*sizes) if align is None else align) == 1 and all(type(v) is int for v in sizes)


def _check_pieces(cfg: NormConfig, n: int, fp64: bool, backward: bool) -> None:
    """A given config's tile must hold rows of ``n``: whole rows of block_n >= n columns, or two pieces exactly when
    block_n < n <= block_n + block_n2; split rows (the backward, fp32 accumulation): one row per program, one piece
    of a power-of-two block_n, in 2 to ``programs`` pieces, n > 2."""
    if cfg.block_n2 and not cfg.chunked and not cfg.block_n < n <= cfg.block_n + cfg.block_n2:
        raise ValueError(f"config {cfg} holds rows of {cfg.block_n} + {cfg.block_n2} columns, not {n}")
    if cfg.block_n2 and cfg.chunked:  # chunks are of block_n columns; EVEN_N would read block_n + block_n2
        raise ValueError(f"config {cfg}: chunked rows take no second piece (block_n2)")
    if (cfg.evict or cfg.unroll != 1 or cfg.x_l2_only or cfg.params_l2_only) and (
            backward or not cfg.chunked or cfg.unroll < 1):
        raise ValueError(f"config {cfg}: evict, x_l2_only, params_l2_only and unroll (>= 1) apply to the forward's "
                         "chunked rows only")
    if cfg.hold_loaded and (cfg.chunked or cfg.split or fp64):
        raise ValueError(f"config {cfg}: hold_loaded applies to whole rows only, not float64")
    if cfg.one_round and (cfg.chunked or backward):
        raise ValueError(f"config {cfg}: one_round applies to the forward's whole rows only")
    if cfg.maxnreg and (backward or cfg.maxnreg < 24):
        raise ValueError(f"config {cfg}: maxnreg caps the forward's registers, at 24 or more (0: no cap)")
    if not (cfg.chunked or cfg.split or cfg.block_n2) and cfg.block_n < n:  # the columns past block_n went unread
        raise ValueError(f"config {cfg} holds whole rows of at most {cfg.block_n} columns, not {n}: give it a second "
                         "piece (block_n2), chunks or split rows")
    if not cfg.split:
        return
    if not backward:
        raise ValueError(f"config {cfg} splits rows: only the backward has split rows")
    if cfg.block_m != 1 or cfg.chunked or cfg.block_n2 or cfg.num_stages != 1 or cfg.block_n & (cfg.block_n - 1):
        raise ValueError(f"config {cfg} splits rows: block_m 1, one power-of-two piece, not chunked, one stage")
    if fp64 or not (n > 2 and norm_split_fits(cfg, n)):
        raise ValueError(f"config {cfg} splits rows into 2 to {cfg.programs} pieces of {cfg.block_n}, fewer (to a "
                         f"power of two) than its {32 * cfg.num_warps} threads, not {n} "
                         f"{'float64 ' if fp64 else ''}values")


#: Programs of a split launch that CUDA held at once, where it refused ``config.programs``: by the launch's
#: specialization (launcher, device, config, constexprs, and what Triton specializes its tensors and sizes on:
#: registers differ between binaries); halved until a cooperative launch was accepted, 0 when none was (those rows
#: take the unsplit kernel). One specialization always runs on the same slots, so its dw/db are summed in the same
#: order call after call.
_SPLIT_FIT: dict = {}


def _split_key(launcher: _Launcher, cfg: NormConfig, tensors: tuple, sizes: tuple, meta: dict) -> tuple:
    """``_SPLIT_FIT``'s key of a split launch: its binary's (``tensors`` without the per-call partial buffers)."""
    return (launcher, tensors[0].device, cfg, tuple(meta.items()), *_launch_args((*tensors, *sizes))[0])


def _split_slots(cfg: NormConfig, programs: int, m: int, n: int) -> int:
    """Slots of a split launch on ``programs``: slot s takes rows s, s + slots, ... (0: the pieces do not fit)."""
    return min(m, programs // -(-n // cfg.block_n))


def _launch_split(launcher: _Launcher, cfg: NormConfig, key: tuple, programs: int, tensors: tuple, rest: tuple,
                  meta: dict, m: int, n: int) -> int:
    """One cooperative launch of a split-row kernel on at most ``programs`` (what ``_SPLIT_FIT`` holds for ``key``,
    the caller's one read of it; its tag buffer and counter added after ``tensors``) -> the slots it ran. Where CUDA
    refuses the grid (before anything runs), again on half the programs, as long as a row's pieces fit; 0, with
    nothing written, when none was accepted. What fitted is kept in ``_SPLIT_FIT`` under ``key``."""
    dev = tensors[0].device
    pieces = -(-n // cfg.block_n)
    p2 = triton.next_power_of_2(pieces)
    while (slots := _split_slots(cfg, programs, m, n)) > 0:
        tags = tag_words(1 + 4 * slots * 2 * p2, dev)
        try:
            launcher((slots * pieces,), (*tensors, tags, zeroed_counters(1, dev), m, n // meta["ROW_ALIGN"], pieces,
                                         slots, tags.numel(), *rest),
                     {**meta, "W_IN_LOOP": cfg.w_in_loop and meta["HAS_W"], "EARLY_LOADS": cfg.early_loads,
                      "SERIAL": INTERPRETER, "BLOCK_N": cfg.block_n, "SPLIT_P2": p2},
                     cfg.num_warps, 1, cooperative=True)
            return slots
        except RuntimeError as e:
            if "cooperative" not in str(e):
                raise
            programs = _SPLIT_FIT[key] = programs // 2
    _SPLIT_FIT[key] = 0
    return 0


_fwd = _Launcher(_norm_fwd_kernel)
_bwd = _Launcher(_norm_bwd_kernel)
_sum_partials = _Launcher(_sum_partials_kernel)
_bwd_split = _Launcher(_norm_bwd_split_kernel)


def _size(t: torch.Tensor | None) -> int:
    return 0 if t is None else t.element_size()


def _fwd_column_bytes(cfg: NormConfig, x: torch.Tensor, res: torch.Tensor | None, res_dtype: torch.dtype | None,
                      weight: torch.Tensor | None, bias: torch.Tensor | None) -> int:
    """Bytes per tile column the forward's loop loads per iteration (``norm_fit_prefetch``): rows of x and the
    residual, and the parameters unless held across the loop; chunked rows, the larger of the two passes' (the
    second reads residual_out, or x, and the parameters)."""
    params = _size(weight) + _size(bias)
    rows = cfg.block_m * (x.element_size() + _size(res))
    if cfg.chunked:
        out = (res_dtype or x.dtype).itemsize if res is not None else x.element_size()
        return max(rows, cfg.block_m * out + params)
    return rows + (0 if norm_fwd_holds_params(cfg) else params)


def _unlike_measured(elem_size: int, extra: torch.Tensor | None, *params: torch.Tensor | None) -> bool:
    """Whether a call streams more than the measured entries were timed with: an extra tensor (a residual, or
    residual_out's gradient) or parameters wider than the input's ``elem_size`` (then ``norm_fit_prefetch``)."""
    return extra is not None or any(_size(p) > elem_size for p in params)


def _bwd_column_bytes(cfg: NormConfig, dy: torch.Tensor, s: torch.Tensor, dres_out: torch.Tensor | None,
                      weight: torch.Tensor | None, has_bias: bool) -> int:
    """Bytes per tile column the backward's loop loads per iteration (``norm_fit_prefetch``): rows of dy, x and
    residual_out's gradient, the weight when re-read (whole rows: ``w_in_loop``; chunked rows: tile-shaped, and the
    fp32 partial rows read back)."""
    rows = dy.element_size() + s.element_size() + _size(dres_out)
    if cfg.chunked:
        return cfg.block_m * (rows + _size(weight)) + 4 * ((weight is not None) + has_bias)
    return cfg.block_m * rows + (_size(weight) if cfg.w_in_loop else 0)


def norm_fwd(
    x2d: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    res2d: torch.Tensor | None,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    residual_dtype: torch.dtype | None,
    store_stats: bool,
    traceable: bool = False,
    config: NormConfig | None = None,
    out_shape: tuple[int, ...] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """Normalize the rows of ``x2d`` (``(M, N)``, unit column stride, ``M * N > 0``).

    Returns ``(y, residual_out, mean, rstd)``: ``y`` contiguous ``(M, N)`` in x's dtype;
    ``residual_out`` (``x + res`` in ``residual_dtype``) when ``res2d`` is given, else None; ``mean``
    (LayerNorm only: the mean of ``s - s[:, 0]``, see the module docstring) and ``rstd`` as ``(M,)``
    float32 (float64 for float64 input) when ``store_stats``, else None.
    ``config`` overrides the launch heuristic (tests and tuning); ``out_shape`` (``M * N`` elements) is
    the shape ``y`` and ``residual_out`` are allocated with (contiguous, so no view is needed after).
    """
    m, n = x2d.shape
    dev = x2d.device
    is_f64 = x2d.dtype == torch.float64
    sizes = (n, x2d.stride(0), 0 if res2d is None else res2d.stride(0), n, n)
    align = _row_align(*sizes)
    # int(): under torch.compile with dynamic shapes N may be symbolic; the config is chosen for its value.
    cfg = config or norm_fwd_config(int(n), x2d.element_size(), device_index(x2d), is_rms, res2d is not None,
                                    _scalar_loads(sizes, align), capped=not traceable)
    if config is not None:
        _check_pieces(config, n, is_f64, backward=False)
    elif _unlike_measured(x2d.element_size(), res2d, weight, bias):
        cfg = norm_fit_prefetch(cfg, _fwd_column_bytes(cfg, x2d, res2d, residual_dtype, weight, bias))
    shape = out_shape or (m, n)
    y = torch.empty(shape, dtype=x2d.dtype, device=dev)
    res_out = None
    if res2d is not None:
        res_out = torch.empty(shape, dtype=residual_dtype or x2d.dtype, device=dev)
    mean = rstd = None
    if store_stats:
        stat_dtype = torch.float64 if is_f64 else torch.float32
        rstd = torch.empty((m,), dtype=stat_dtype, device=dev)
        if not is_rms:
            mean = torch.empty((m,), dtype=stat_dtype, device=dev)
    num_blocks = -(-m // cfg.block_m)
    grid = (_min(num_blocks, cfg.programs) if cfg.programs else num_blocks,)
    evict = cfg.evict and res2d is None  # the hints serve x's re-read; with a residual pass 2 re-reads residual_out
    n_a, *strides_a = (v // align for v in sizes)
    aligned = not traceable and _aligned(x2d, res2d, weight, bias)  # torch.compile: addresses unknown when traced
    # RMSNorm's chunked forward keeps the plain conversion: at 8192 it took 32 registers instead of 39 and lost 4.3
    # points (H200, session 37)
    widen = not (is_rms and cfg.chunked) and norm_widens(cfg, x2d.dtype, align, aligned)
    # x L2-only where it is 16-byte aligned (vector loads; at N = 32769 it cost 23.3 -> 19.0%, session 37) and without
    # a residual (measured without one); when traced, taken as the addresses will be
    l2_only = cfg.x_l2_only and res2d is None and align * x2d.element_size() >= 16 and (traceable or aligned)
    _fwd(grid, (
        x2d, x2d if res2d is None else res2d, x2d if weight is None else weight, x2d if bias is None else bias,
        y, y if res_out is None else res_out, y if mean is None else mean, y if rstd is None else rstd,
        m, n_a, -(-n // cfg.block_n), *strides_a,
        eps, weight_offset, 0.0,  # 0.0: the run-time zero of _unmerged
    ), {
        "IS_RMS": is_rms, "HAS_W": weight is not None, "HAS_OFFSET": weight is not None and weight_offset != 0.0,
        "HAS_B": bias is not None, "HAS_RES": res2d is not None,
        "STORE_STATS": store_stats, "IS_F64": is_f64, "CHUNKED": cfg.chunked, "PERSISTENT": cfg.programs > 0,
        "HOIST": norm_fwd_holds_params(cfg),
        "HOLD_LOADED": cfg.hold_loaded and res2d is None,  # with a residual s = x + r is held (in fp32)
        "ROW_ALIGN": align, "WIDEN": widen,
        "EVEN_N": int(n) == cfg.block_n + cfg.block_n2 if cfg.block_n2 else int(n) % cfg.block_n == 0,
        "BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_N2": cfg.block_n2, "NUM_STAGES": cfg.num_stages,
        "UNROLL": cfg.unroll,
        "KEEP_POLICY": "evict_last" if evict and not cfg.params_l2_only else "",  # w and b in pass 2
        "X_KEEP_POLICY": "evict_last" if evict and not l2_only else "",  # x in pass 1
        "RELEASE_POLICY": "evict_first" if evict and not l2_only else "",  # x in pass 2
        "X_CACHE": ".cg" if l2_only else "",  # x's loads in both passes (ptxas takes no L1 hint with it)
        "P_CACHE": ".cg" if cfg.params_l2_only else "",  # the weight's and bias's loads in pass 2
        "ONE_ROUND": cfg.one_round and not is_rms, "JOINT_PIECES": norm_joint_pieces(cfg),
    }, cfg.num_warps, cfg.num_stages, traceable, maxnreg=cfg.maxnreg or None)
    return y, res_out, mean, rstd


def _wide_rows(m, block_m: int, strides: tuple, width: int) -> bool:
    """Whether the whole-row backward must form its element offsets in 64 bits: the furthest one its tiles form
    (those of masked rows and columns too, up to the last tile's padding: ``m`` rows in tiles of ``block_m``, rows
    ``width`` columns wide, the largest of the row ``strides``) reaches 2**31. Sizes unknown at launch (symbolic,
    traced): yes. The offsets are formed in 32 bits otherwise (sm_90, bf16 whole-row loops: LN 256 410 -> 386
    instructions, RMS 256 304 -> 278, LN 1024 427 -> 392, RMS 1024 321 -> 284; session 48). With the constant row
    means and the multi-row widening, H200 bf16 GPU time (session 49): LN 512 64.8 -> 66.7% of copy, LN 256 46.3 ->
    46.8, 1024-4096 and RMS within ±0.4 — fewer instructions, but not what bounds these loops."""
    if not all(isinstance(v, int) for v in (m, *strides)):
        return True
    return (-(-m // block_m) * block_m - 1) * max(strides) + width - 1 >= 2**31


def norm_bwd(
    dy2d: torch.Tensor,
    s2d: torch.Tensor,
    weight: torch.Tensor | None,
    has_bias: bool,
    mean: torch.Tensor | None,
    rstd: torch.Tensor,
    dres_out2d: torch.Tensor | None,
    x_dtype: torch.dtype,
    dres_dtype: torch.dtype | None,
    eps: float,
    weight_offset: float,
    is_rms: bool,
    bias_dtype: torch.dtype | None = None,
    traceable: bool = False,
    config: NormConfig | None = None,
    out_shape: tuple[int, ...] | None = None,
    param_shape: tuple[int, ...] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """Gradients of the rows normalized by :func:`norm_fwd`.

    ``s2d`` is the normalized input (x, or residual_out with a fused residual), ``dres_out2d`` the
    gradient of residual_out (None when unused). Returns ``(dx, dres, dweight, dbias)``: ``dx`` in
    ``x_dtype``; ``dres`` (the same gradient in ``dres_dtype``) when ``dres_dtype`` is given; ``dweight``
    in weight's dtype and ``dbias`` in ``bias_dtype`` when present. ``M * N > 0``. ``out_shape`` and
    ``param_shape`` are the shapes the input and parameter gradients are allocated with.
    """
    m, n = s2d.shape
    is_f64 = s2d.dtype == torch.float64
    esize = max(s2d.element_size(), dy2d.element_size())
    sizes = (n, dy2d.stride(0), s2d.stride(0), 0 if dres_out2d is None else dres_out2d.stride(0), n, n)
    align = _row_align(*sizes)
    scalar_loads = _scalar_loads(sizes, align)

    def heuristic(split: bool) -> NormConfig:
        cfg = norm_bwd_config(int(n), esize, device_index(s2d), is_rms, split, scalar_loads, dres_out2d is not None)
        if not _unlike_measured(esize, dres_out2d, weight):
            return cfg
        return norm_fit_prefetch(cfg, _bwd_column_bytes(cfg, dy2d, s2d, dres_out2d, weight, has_bias))

    cfg = config or heuristic(not traceable)
    if config is not None:
        _check_pieces(config, n, is_f64, backward=True)
    dev = s2d.device
    acc_dtype = torch.float64 if is_f64 else torch.float32
    shape = out_shape or (m, n)
    dx = torch.empty(shape, dtype=x_dtype, device=dev)
    dres = torch.empty(shape, dtype=dres_dtype, device=dev) if dres_dtype is not None else None
    has_w = weight is not None
    n_a, *strides_a = (v // align for v in sizes)
    scalars = (*strides_a, eps, weight_offset)
    meta = {"IS_RMS": is_rms, "HAS_W": has_w, "HAS_OFFSET": has_w and weight_offset != 0.0, "HAS_B": has_bias,
            "HAS_DRES_OUT": dres_out2d is not None,
            "HAS_DRES": dres is not None, "PAIR_SUMS": norm_bwd_pair_sums(cfg), "ROW_ALIGN": align}

    aligned = not traceable and _aligned(dy2d, s2d, weight)  # torch.compile: addresses unknown when traced
    inputs = (dy2d, s2d, s2d if weight is None else weight, rstd if mean is None else mean, rstd,
              dy2d if dres_out2d is None else dres_out2d, dx, dx if dres is None else dres)

    def with_partials(g: int, tile: int = 0) -> tuple[torch.Tensor | None, torch.Tensor | None, tuple]:
        """The [g, N] dw/db partial rows (then ``tile`` elements of scratch a program) and the launch's tensors."""
        size = g * (n + tile)
        dw_part = scratch(torch.empty(size, dtype=acc_dtype, device=dev)) if has_w else None
        db_part = scratch(torch.empty(size, dtype=acc_dtype, device=dev)) if has_bias else None
        return dw_part, db_part, (*inputs, dx if dw_part is None else dw_part, dx if db_part is None else db_part)

    g = 0
    if cfg.split and not traceable:
        meta["WIDEN"] = norm_widens(cfg, s2d.dtype, align, aligned)
        key = _split_key(_bwd_split, cfg, inputs, (m, n_a, *scalars), meta)
        if programs := _SPLIT_FIT.get(key, cfg.programs):
            # The partials hold the slots of the programs tried first; a launch on fewer uses their first rows.
            dw_part, db_part, tensors = with_partials(_split_slots(cfg, programs, m, n))
            g = _launch_split(_bwd_split, cfg, key, programs, tensors, scalars, meta, m, n)
    if not g:
        if cfg.split:
            cfg = heuristic(False)
            meta["PAIR_SUMS"] = norm_bwd_pair_sums(cfg)
        g = _max(1, _min(-(-m // cfg.block_m), cfg.programs))
        via_scratch = norm_bwd_sums_via_scratch(cfg, esize)
        dw_part, db_part, tensors = with_partials(g, cfg.block_m * (cfg.block_n + cfg.block_n2) if via_scratch else 0)
        # Whole rows whose loop prefetches (cp.async): the column mask as a constant where N fills the tile, and
        # LayerNorm's row shift read as a pair where rows are 16-element aligned. Measured on the H200 (NOTES.md,
        # session 17): bf16 LN 2048 78.9 -> 91.8% of copy, 4096 78.5 -> 94.5, 8192 72.8 -> 95.2 (the pair load the
        # most of it); without prefetch the constant mask lost (LN 1024 72.8 -> 58.9, 16384 63.8 -> 58.2).
        prefetched = not cfg.chunked and cfg.num_stages > 1
        _bwd((g,), (*tensors, m, n_a, -(-n // cfg.block_n), *scalars, 0.0), {  # 0.0: the run-time zero of _unmerged
            **meta, "IS_F64": is_f64, "CHUNKED": cfg.chunked, "WIDEN": norm_widens(cfg, s2d.dtype, align, aligned),
            "W_IN_LOOP": cfg.w_in_loop and has_w and not cfg.chunked,  # else unused: one binary either way
            "DEGENERATE": int(n) <= (1 if is_rms else 2),
            "EVEN_N": prefetched and not cfg.block_n2 and int(n) == cfg.block_n,
            "K_PAIR": prefetched and not is_rms and int(n) >= 2 and s2d.stride(0) % 16 == 0,
            "HOLD_LOADED": cfg.hold_loaded,
            "BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_N2": cfg.block_n2, "NUM_STAGES": cfg.num_stages,
            "WIDE_ROWS": cfg.chunked or _wide_rows(m, cfg.block_m, sizes[1:], cfg.block_n + cfg.block_n2),
            "SUMS_VIA_SCRATCH": via_scratch, "JOINT_PIECES": norm_joint_pieces(cfg),
        }, cfg.num_warps, cfg.num_stages, traceable)
    dw = db = None
    if has_w or has_bias:
        pshape = param_shape or (n,)
        dw = torch.empty(pshape, dtype=weight.dtype, device=dev) if has_w else None
        db = torch.empty(pshape, dtype=bias_dtype or x_dtype, device=dev) if has_bias else None
        pcfg = norm_partial_sum_config(int(n), g if cfg.split else cfg.programs)
        _sum_partials((-(-n // pcfg.block_c),), (
            dx if dw_part is None else dw_part, dx if db_part is None else db_part,
            dx if dw is None else dw, dx if db is None else db, g, n,
        ), {
            "HAS_W": has_w, "HAS_B": has_bias, "IS_F64": is_f64, "BLOCK_G": pcfg.block_g, "BLOCK_C": pcfg.block_c,
        }, pcfg.num_warps, 1, traceable)
    return dx, dres, dw, db
