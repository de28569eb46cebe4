"""Launch heuristics for every kernel, in one place: plain functions of the shape and the device.

Each function returns the constexprs and grid a launcher needs; the measurements that chose the
numbers are in ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import NamedTuple

import torch


@functools.cache
def multiprocessor_count(device_index: int | None) -> int:
    """SMs on the CUDA device (a fixed small number under the interpreter, to keep grids short)."""
    if device_index is None or not torch.cuda.is_available():
        return 4
    return torch.cuda.get_device_properties(device_index).multi_processor_count


@functools.cache
def device_name(device_index: int | None) -> str:
    """The CUDA device's name ("" without one: the interpreter, CPU tensors)."""
    if device_index is None or not torch.cuda.is_available():
        return ""
    return torch.cuda.get_device_name(device_index)


def device_index(t: torch.Tensor) -> int | None:
    return t.device.index if t.device.type == "cuda" else None


# ----------------------------------------------------------------------------- LayerNorm / RMSNorm
# Rows of N elements. Three strategies by N (OneFlow's split, in Triton terms):
#   small N:  a tile of BLOCK_M rows per program, whole rows in registers;
#   medium N: one row (or a few) per program, whole row in registers, more warps as N grows;
#   large N:  rows walked in chunks of BLOCK_N (Chan-merged statistics, a second pass re-reads from L2; the measured
#             tables also walk some medium rows so, one program per row, the chunk loop unrolled); the
#             backward's rows split across programs of BLOCK_N columns that exchange their row sums (one read; a
#             cooperative launch) where measured faster, unless that cannot run (torch.compile's traced launches,
#             a device refusing every grid that holds a row's pieces).
# The backward runs a persistent grid of `programs` (a multiple of the SM count) walking row blocks.


class NormConfig(NamedTuple):
    block_m: int  # rows per tile
    block_n: int  # columns per tile: next_pow2(N), or the chunk length when chunked
    chunked: bool  # rows walked in chunks (N too large for registers)
    num_warps: int
    num_stages: int = 1  # > 1: the persistent / chunk loops prefetch that many tiles ahead (cp.async)
    programs: int = 0  # persistent grid size; 0: one program per row tile (forward only)
    w_in_loop: bool = False  # backward, whole rows: the weight re-read per row block instead of held in registers
    block_n2: int = 0  # whole rows: > 0 holds a row as block_n + block_n2 columns (N = 5120 as 4096 + 1024)
    split: bool = False  # backward: each row split across cdiv(N, block_n) programs (pieces of block_n columns)
    #                      that exchange partials; `programs` is then the most programs resident at once
    early_loads: bool = False  # split rows: a program issues the next row's loads before it waits for this row's
    #                            partials and publishes the next row's partial after (the loads' latency runs during
    #                            the wait); else it publishes it before the wait (the others get a round of slack)
    evict: bool = False  # forward, chunked rows: the first pass's loads of x ask L2 to keep it (evict_last), the
    #                      second pass's re-read releases it (evict_first), as torch.compile's reductions do; off
    #                      with a residual (the second pass then re-reads residual_out, not x)
    unroll: int = 1  # forward, chunked rows: both chunk loops unrolled by this factor, so that a thread has the loads
    #                  of that many chunks in flight at once (torch.compile's loops, of a constant trip count, unroll
    #                  fully)
    hold_loaded: bool = False  # whole rows: x (backward: x, dy and the re-read weight) held as loaded across the
    #                            row reductions and the fp32 values formed again after each (16-bit rows: half the
    #                            registers; bf16 LayerNorm's backward at 16384 spilled its fp32 x̂ and g); the forward
    #                            holds s = x + r in fp32 with a residual
    x_l2_only: bool = False  # forward, chunked rows: x loaded L2-only (``.cg``, without evict's hints, which act on
    #                          L1 too) in both passes, where x is 16-byte aligned and without a residual. LayerNorm's
    #                          49152 key only: bf16 on an H200, 33000-49152 +1.3..+8.4 points (why is not established;
    #                          a guess: L1 then keeps the weight and bias that the second pass re-reads each row; the
    #                          converse, the weight and bias L2-only, gained nothing at 32768: session 38); on an H100
    #                          -1.7..+2.1 (session 38); fp16 not measured. RMSNorm, whose second pass re-reads x from
    #                          L1, lost 9-21 (session 37)
    params_l2_only: bool = False  # forward, chunked rows: the weight and bias loaded L2-only (``.cg``, no L1 hint) in
    #                               the second pass, with or without a residual. Alone it gained nothing (LN 32768,
    #                               two programs an SM: 84.6 -> 83.6); with one program an SM holding a 128 KB row, LN
    #                               65536 77.2 -> 83.6 (H200, session 38)
    one_round: bool = False  # LayerNorm forward, whole rows: Σd and Σd² of the shifted row in one pair reduction, var
    #                          = E[d²] - E[d]², instead of Σd and then Σ(d - μ)² (two reductions in series); a tile
    #                          with a row whose shift lies far from its mean is centred again (_ONE_ROUND_CANCEL)
    maxnreg: int = 0  # forward: a cap on the registers a thread (ptxas spills past it), so that more programs share
    #                   an SM; 0: none. Traced launches (torch.compile) go without it


class NormPartialSumConfig(NamedTuple):
    block_g: int
    block_c: int
    num_warps: int


#: Largest row (elements) kept whole in registers, by accumulator width (4: fp32, 8: fp64), for the untuned
#: rules (float64, and rows the measured tables leave out); 16-bit inputs follow NORM_TUNED, float32 inputs
#: NORM_TUNED_FP32, whose backwards keep whole rows up to 16384 (weight re-read per row) and split longer ones.
NORM_FWD_FUSED_MAX = {4: 32768, 8: 16384}
NORM_BWD_FUSED_MAX = {4: 8192, 8: 4096}
#: Chunk length for rows past the fused limit.
NORM_FWD_CHUNK = {4: 8192, 8: 4096}
NORM_BWD_CHUNK = {4: 4096, 8: 2048}
#: Elements per tile (small N packs several rows into one tile) and elements per thread.
NORM_FWD_TILE = 4096
NORM_FWD_ELEMS_PER_THREAD = 32
NORM_BWD_TILE = 4096
NORM_BWD_ELEMS_PER_THREAD = 16
#: Backward persistent programs per SM (fused rows) and loop prefetch depth.
NORM_BWD_PROGRAMS_PER_SM = 2
NORM_STAGES = 2
#: Chunked rows are re-read from L2: the rows in flight (programs x rows per tile x row bytes) are kept
#: under this many bytes, a part of the 50 MB L2 of an H100/H200.
NORM_L2_BUDGET = 24 << 20


def _next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def _pow2_warps(elements: int, per_thread: int) -> int:
    return max(1, min(32, _next_pow2(max(1, elements // (32 * per_thread)))))


#: Measured winners for 16-bit inputs on an H200 (benchmarks/NOTES.md, LayerNorm/RMSNorm section), by
#: (direction, is_rms, ``norm_tuned_key(N)``): (block_m, block_n, chunked, num_warps, num_stages, programs per SM
#: (0 = one program per tile)[, w_in_loop][, {other NormConfig fields}]). A whole-row (not chunked) entry whose block_n
#: is below N holds rows as two pieces, block_n + next_pow2(N - block_n) columns, or block_n + the entry's own
#: block_n2 where it gives one; where it gives least_n2, a second piece at least that long: a short one is slow on
#: rows read in 16-byte vectors (H200, session 41: LN forward 8448 as 8192 + 256 50.9% of copy, + 2048 85.3; LN
#: backward 4352 as 4096 + 256 43.9, + 1024 71.6), but not on rows read one element a load (an odd N: 8193 as 8192 +
#: 1 64.6, + 2048 44.8), which keep next_pow2(N - block_n) (but for entries that hold their loads: see _tuned);
#: rows read 4 or 8 bytes a load take it too (unmeasured; so do sizes unknown at launch, traced with dynamic shapes).
#: float32 has its own table (NORM_TUNED_FP32); float64, and N without an entry, use the rules below.
NormEntry = tuple
#: The forward's chunked rows of one program per row (torch.compile's reduction kernels, session 16): the L2 eviction
#: hints on, the chunk loops unrolled 2, 4 or 8 times (rows of one chunk: not unrolled, LOOPED; measured with unroll 2
#: or 4, which compiles to the same code there).
LOOPED = {"evict": True}
LOOPED_U2 = {"evict": True, "unroll": 2}
LOOPED_U4 = {"evict": True, "unroll": 4}
LOOPED_U8 = {"evict": True, "unroll": 8}
NORM_TUNED: dict[tuple[str, bool, int], NormEntry] = {
    ("fwd", False, 128): (16, 128, False, 2, 1, 0),  # 47.4% of copy; session 50, 16 × (64 + 64): 45.4 / 45.1 -> 44.2
    #                    / 44.2 (GPU time)
    ("bwd", False, 128): (64, 64, False, 16, 1, 1, {"block_n2": 64}),  # H200 (session 50, rows as two equal pieces,
    #                    the suites' harness, GPU time, two rounds): 34.9 / 35.1 -> 37.0 / 36.8% of copy
    ("fwd", False, 256): (4, 128, False, 1, 1, 0, {"block_n2": 128}),  # H200 (session 51, Inductor's tile: 4 rows,
    #                    1 warp; the suites' harness, GPU time, two rounds): 8 × (128 + 128) w2 62.4 / 62.0 -> 63.5 /
    #                    62.7% of copy; 4 × 256 w1 62.3 / 62.5. Session 50, two equal pieces: 8 × 256 w2 61.7 / 61.9
    #                    -> 8 × (128 + 128) w2 62.7 / 62.3; 16 × (128 + 128) w4 61.5 / 61.0
    ("bwd", False, 256): (32, 256, False, 16, 3, 1),  # H200 (session 43, 16 × 256 w8, 2/SM, 1 stage -> this, the
    #                    next tiles prefetched): 43 -> 46% of copy in GPU time (two runs of the suites' harness);
    #                    session 7: 44.8 / 36.0% (timed; was 32×256 w16 1/SM, 1 stage: 39.7 / 29.3). Both this and
    #                    512's 3 stages serve the H100 too, unmeasured there. Session 50: as two equal pieces, 32 ×
    #                    (128 + 128) w16 46.9 / 46.9 -> 46.6 / 46.7, 16 × (128 + 128) w8 2/SM 47.0 / 46.7
    ("fwd", False, 512): (4, 512, False, 2, 1, 0),  # 75.9% of copy
    ("bwd", False, 512): (4, 512, False, 4, 3, 4),  # H200 (session 43, 1 stage -> 3): 60 -> 65% of copy in GPU time
    #                    (two runs of the suites' harness); session 7: 59.5 / 59.2% (timed; 16×512 w16 1/SM: 49.0)
    ("fwd", False, 768): (2, 512, False, 1, 1, 0, {"least_n2": 256}),  # 512 + 256: 81.0%, N = 700: 65.5 (session 9;
    #                    1024 tiles 77.6, 45.7); H200 (session 41, + 32 / 128 -> + 256): 544 58.8 -> 74.2, 640 77.3 ->
    #                    78.3
    ("fwd", False, 1024): (2, 1024, False, 2, 1, 0),  # H200 (session 51, the suites' harness, GPU time, four
    #                     rounds in two calls): 4 × 1024 w4 85.2 / 85.5 / 86.0 / 85.7 -> 86.1 / 86.1 / 86.2 / 86.1% of
    #                     copy; Inductor's 1 × 1024 w1 85.8 / 85.4, 1 × w4 76.6 / 76.8, 8 × w8 73.8 / 74.0, 4 × w4
    #                     persistent (2 stages, 4 an SM) 60.9 / 60.9
    ("bwd", False, 1024): (2, 1024, False, 4, 3, 4),  # 84.7% (session 17, the shift read as a pair; 1 stage: 73.1)
    ("fwd", False, 1536): (2, 1024, False, 2, 1, 0, {"least_n2": 512}),  # 1024 + 512: 90.3% (session 9; 2048 tiles:
    #                     83.9); the piece of 512 also below 1536 (H200, session 41, a piece of next_pow2(N - 1024) ->
    #                     512): 1088 64.0 -> 83.4 (one row a tile: 76.5), 1100 54.6 -> 71.2, 1280 58.6 -> 88.6
    ("fwd", False, 2048): (1, 2048, False, 2, 1, 0),  # 91.9% of copy
    ("bwd", False, 2048): (1, 2048, False, 4, 3, 4),  # 77.4 / 77.7% (session 7); 91.8 (session 17, shift as a pair)
    ("fwd", False, 3072): (1, 2048, False, 2, 1, 0, {"least_n2": 1024}),  # 2048 + 1024. H200 (session 41, 4 warps
    #                     and a second piece of next_pow2(N - 2048) -> this): 2304 63.6 -> 88.3, 2560 68.6 -> 93.0, 2816
    #                     93.6 -> 95.2, 3072 95.5 -> 94.6 (a piece of 512 with 2 warps: 2304 93.9, 2560 94.0; of 256:
    #                     68.1); session 9: 95.5 / 95.4% (4096 tiles: 85.2)
    ("fwd", False, 6144): (1, 4096, False, 4, 1, 0, {"least_n2": 1024}),  # 4096 + 1024 at 5120: 96.2% (session 9;
    #                     the 8192 tile: 72.5); H200 (session 41, + 256 / 512 -> + 1024): 4352 65.5 -> 94.7, 4608 67.4
    #                     -> 96.4
    ("fwd", False, 4096): (1, 4096, False, 4, 1, 0),  # 94.6% of copy
    ("bwd", False, 4096): (1, 4096, False, 8, 3, 2),  # 78.5% of copy; 94.5 (session 17, the shift read as a pair)
    ("bwd", False, 6144): (1, 4096, False, 4, 3, 2, True, {"least_n2": 1024}),  # 4096 + 1024 at 5120: 80.3% (session
    #                     17; 8192's: 69.4); H200 (session 41, 8 warps and + 256 / 512 / 1024 -> 4 warps, + 1024):
    #                     4352 43.9 -> 94.8, 4608 77.6 -> 93.8, 5120 81.4 -> 92.2
    ("fwd", False, 8192): (1, 8192, False, 8, 1, 0),  # 86.9% of copy
    ("fwd", False, 12288): (1, 8192, False, 8, 1, 0, {"least_n2": 2048}),  # 8192 + 4096: 97.1% (session 9; the
    #                     16384 tile: 78.5); H200 (session 41, + 256 / 512 / 1024 -> + 2048): 8448 50.9 -> 85.3, 8704
    #                     54.6 -> 87.0, 9216 56.2 -> 89.3
    ("bwd", False, 8192): (1, 8192, False, 16, 3, 1),  # 76.2% of copy; 95.2 (session 17, the shift read as a pair)
    ("bwd", False, 12288): (1, 8192, False, 8, 3, 1, True, {"least_n2": 2048}),  # 8192 + 4096: 95.4% H100 (session
    #                     18, 16 warps; 1 stage: 77.3); H200 (session 41, 16 warps and + 256 / 512 / 1024 / 2048 -> 8
    #                     warps, + 2048): 8448 64.5 -> 92.7, 8704 54.7 -> 93.9, 9216 75.0 -> 95.8, 10240 77.4 -> 97.0
    ("fwd", False, 16384): (1, 8192, False, 8, 1, 0),  # 8192 + 8192. H200 (session 41, the whole row -> this):
    #                     12544 72.4 -> 82.8, 14336 78.2 -> 89.1, 16128 83.8 -> 92.7, 16384 93.6 -> 93.6 (the whole
    #                     row, 16 warps, held or not: 66-82). Session 52 (the suites' harness, GPU time): the pieces'
    #                     row sums reduced jointly (601f881) 92.0 / 92.0, apart 94.4 / 94.3; one_round, joint 94.0 /
    #                     93.9, apart 77.5 / 77.5
    ("bwd", False, 16384): (1, 8192, False, 16, 3, 1, True),  # 8192 + 8192; 16384 itself: NORM_TUNED_EXACT. H200
    #                     (session 41, the held whole row -> this): 12544 40.3 -> 60.3, 14336 44.0 -> 63.0, 16128 47.2
    #                     -> 65.0 (holding the loads: 54.6-61.2; split rows of 512-4096 columns: 40-45). Session 52,
    #                     14336 with the pieces' row sums reduced jointly: 63.4 / 64.2 -> 59.9 / 59.9
    ("fwd", False, 24576): (1, 16384, False, 16, 1, 0, {"hold_loaded": True, "least_n2": 4096}),  # x held as
    #                      loaded. H200 (session 38): 17000 63.2, 20000 73.8, 22000 79.9, 24576 89.0% (before, by the
    #                      fallback, 32768's chunks: 53.5, 59.5, 59.5, 62.6; 2048 × w8 chunks, u8: 73.1, 74.1, 66.6,
    #                      74.8; second pieces of next_pow2(N - 16384), fp16: 17000 50.6, 20480 90.9, 24576 95.3).
    #                      H100 (session 38): 17000 68.0 -> 87.0, 20000 73.4 -> 95.7, 22000 69.2 -> 98.0, 24576 75.9 ->
    #                      99.0. H200 (session 42, a second piece of 8192 -> at least 4096): 17408 65.5 -> 74.7, 18432
    #                      68.9 -> 78.3, 20000 73.6 -> 82.1, 20480 75.5 -> 76.7 (at least 2048: 17408 50.8, 18432
    #                      53.0; the chunks, 2048 × w8, u8, won at 16896-18432 by 8-12 and at 20480 by 8, tied at
    #                      19000-19456 and 21504, lost at 20000 by 4, 22528 by 2, 24576 by 14: NORM_FWD_VECTOR_ROWS
    #                      takes them to 18432). Past 18432 next_pow2(N - 16384) is 4096 or 8192 anyway: the least
    #                      is the floor that keeps the held piece at 8 elements a thread on any row that reaches it.
    #                      Session 52, 24576: one_round (71 registers, one program an SM) 87.8 / 87.4 -> 56.7 / 56.6;
    #                      capped at 64 registers, 85.2 / 85.7 -> 80.3 / 80.3
    ("fwd", False, 32768): (1, 16384, False, 16, 1, 0, {"block_n2": 16384, "hold_loaded": True, "one_round": True,
                                                       "maxnreg": 64}),  # 16384 + 16384 held as loaded, the
    #                     statistics in one round, at most 64 registers: two programs an SM (82 registers without the
    #                     cap and one round, 89 with it: one). H200 (session 52, the suites' harness, GPU time, two
    #                     rounds a call): 32768 86.5 / 86.9 -> 93.8 / 93.8 (the chunks of 4096 × w16, u8,
    #                     NORM_TUNED_EXACT before), 28000 70.2 / 70.3 -> 80.5 / 81.5 (pieces reduced apart; the whole
    #                     row w32 before).
    #                     Call 1: held 70.0, held capped 90.3 / 90.8, held one round 78.1, both 93.5 / 93.6.
    #                     Session 38, the chunks -> the whole row: 26000 59.7 -> 66.7, 28000 61.9 -> 69.3, 30000 60.6
    #                     -> 71.8
    ("bwd", False, 32768): (4, 2048, True, 8, 3, 2),  # 41.1% of copy
    ("fwd", False, 49152): (1, 4096, True, 16, 1, 0, {**LOOPED_U8, "x_l2_only": True}),  # H200 (session 37): 36000
    #                      72.9 -> 75.2, 40000 64.3 -> 72.7, 45000 62.1 -> 69.0, 49152 63.3 -> 70.8 with x L2-only;
    #                      H100 (session 38, without -> with it): 33000 85.7 -> 84.0, 40000 75.9 -> 78.0, 49152 73.3 ->
    #                      71.9
    ("fwd", False, 65536): (1, 32768, False, 32, 1, 0, {"hold_loaded": True, "block_n2": 32768, "one_round": True}),
    #                     rows of 49153-65535 as 32768 + 32768 held as loaded, the statistics in one round (62
    #                     registers, no spills; one program an SM either way); 65536 itself: NORM_TUNED_EXACT. H200
    #                     (session 52, the suites' harness, GPU time, one round): 57344 67.4 -> 81.5 (the row held
    #                     whole, the entry before); at 65536, held 81.8, with one_round 85.8 / 85.7 (the exact entry
    #                     86.4 / 85.9). The whole row held: 89.8% H100 (session 18, its own entry now; not holding x:
    #                     47.3; 8192 chunks, 3 stages, 4/SM: 66.0); H200 (session 33, 49152 rows): 74.8; a persistent
    #                     8192 × w32, u8 grid reads 79.8 at 65536 but 60.3 / 57.2 at 57344 / 60000 (the whole row: 67.2
    #                     / 69.2)
    ("bwd", False, 65536): (4, 4096, True, 16, 3, 1),  # 39.3% of copy
    ("fwd", True, 128): (8, 128, False, 2, 1, 0),  # H200 (session 47, 32 rows × w4 -> this; the suites' harness, GPU
    #                   time, two rounds): 48 / 48 -> 50 / 50% of copy (Liger 52-54), the full suite 47.4 -> 48.0;
    #                   16 × w4 49-50, 8 × w4 47-48, 4 × w1 44, 2 × w4 27. Kernels-only figures here scatter (the
    #                   flush's write-back): 21.6 -> 24.6. Session 50, 8 × (64 + 64): 49.8 / 49.8 -> 49.4 / 49.4.
    #                   Session 51: Inductor's tile is this one; 2 stages 16 an SM 50.7 / 49.7 -> 49.4 / 49.0
    ("bwd", True, 128): (64, 128, False, 16, 3, 1),  # H200 (session 50, the suites' harness, GPU time, two rounds):
    #                   with the scratch column sums (norm_bwd_sums_via_scratch) 1 stage lost, 43.9 / 43.5 -> 40.2 /
    #                   40.2% of copy; 3 stages 43.8 / 44.2; 32 rows 41.5 / 41.7 (3 stages: 43.8 / 43.8). As 64 × (64
    #                   + 64), before: 43.4 / 43.3 -> 42.9 / 43.3
    ("fwd", True, 256): (16, 128, False, 4, 1, 0, {"block_n2": 128}),  # H200 (session 50, two equal pieces, the
    #                   suites' harness, GPU time): 8 × 256 w2 64.9 / 65.3 -> 66.3 / 66.8% of copy; 8 × (128 + 128) w2
    #                   65.4 / 65.7 (session 47: 8 × 256 w2 65, 8 × w4 65, 16 × w8 64; Liger 66-67). Session 51
    #                   (entry 66.6 / 65.5 and 66.4 / 66.3): Inductor's 4 × 256 w1 64.7 / 64.0, 4 × (128 + 128) w1
    #                   64.8 / 65.6, Liger's 16 × 256 w4 65.0 / 64.5, 2 stages 8 an SM 63.3 / 62.7
    ("bwd", True, 256): (32, 256, False, 16, 3, 1),  # 51.7 / 45.6% in two runs (session 7; was 1 stage: 46.1 / 44.9);
    #                   session 50, as two equal pieces: 55.0 / 55.1 -> 54.6 / 54.9 (32 rows), 54.7 / 54.5 (16, 2/SM)
    ("fwd", True, 512): (4, 512, False, 2, 1, 0),  # 77.9% of copy
    ("bwd", True, 512): (4, 512, False, 4, 3, 4),  # 70.4 / 70.2% (session 7; was 16×512 w32 1/SM: 61.3)
    ("fwd", True, 768): (2, 512, False, 1, 1, 0, {"least_n2": 256}),  # 512 + 256: 85.1%, N = 700: 72.1 (session 9;
    #                   1024 tiles: 84.5, 64.7); H200 (session 41, + 32 / 128 -> + 256): 544 75.1 -> 78.0, 640 79.5 ->
    #                   79.8
    ("fwd", True, 1024): (2, 1024, False, 2, 1, 0),  # 88.9% of copy; H200 (session 51, the suites' harness, GPU
    #                    time; entry 87.5 / 87.4 and 87.7 / 87.5): Inductor's 1 × 1024 w1 86.8 / 87.3, w2 86.8 / 86.7,
    #                    Liger's 1 × w4 85.7 / 85.6, 4 × w4 86.2 / 86.2, 2 stages 8 an SM 81.7 / 81.7
    ("bwd", True, 1024): (2, 1024, False, 4, 3, 4),  # 74.5% of copy
    ("fwd", True, 2048): (1, 2048, False, 4, 1, 0),  # 93.5% of copy
    ("bwd", True, 1536): (1, 1024, False, 2, 3, 4, {"least_n2": 256}),  # 1024 + 512: 87.5% (session 9; 2048 tiles:
    #                    84.6); H200 (session 41, + 64 -> + 256): 1088 56.6 -> 75.1
    ("bwd", True, 2048): (2, 2048, False, 8, 3, 2),  # 84.9% of copy
    ("bwd", True, 3072): (1, 2048, False, 4, 3, 4),  # 2048 + 1024: 90.5% (session 9; 4096 tiles: 83.0)
    ("fwd", True, 3072): (1, 4096, False, 8, 1, 0),  # the 4096 entry before session 13 (not 4096's 4-row tiles)
    ("fwd", True, 4096): (1, 4096, False, 8, 1, 0),  # rows of 3073-4095 (and 4096 with a fused residual, which the
    #                    exact entry does not serve: unmeasured); 4096 itself: NORM_TUNED_EXACT. H200 (session 41,
    #                    the chunked row -> this): 3584 91.5 -> 96.2 (Liger 94)
    ("bwd", True, 4096): (2, 4096, False, 16, 3, 1),  # 93.7% of copy
    ("bwd", True, 6144): (2, 4096, False, 16, 3, 1, True, {"least_n2": 1024}),  # 4096 + 1024 at 5120: 95.6% (session
    #                     9; 8192 tiles: 80.2); H200 (session 41, + 256 / 512 -> + 1024): 4352 59.1 -> 87.2, 4608 81.3
    #                     -> 91.2
    ("fwd", True, 8192): (1, 2048, True, 8, 1, 0, LOOPED_U4),  # 99.4% (session 16; whole row: 96.9)
    ("bwd", True, 8192): (1, 8192, False, 16, 3, 1),  # 96.8% of copy
    ("fwd", True, 6144): (1, 4096, False, 4, 1, 0, {"least_n2": 1024}),  # 4096 + 1024 at 5120: 96.3% (session 9;
    #                     the 8192 tile: 89.4); H200 (session 41, + 256 / 512 -> + 1024): 4352 95.3 -> 96.0, 4608 93.7
    #                     -> 95.9
    ("fwd", True, 12288): (1, 8192, False, 8, 1, 0, {"least_n2": 2048}),  # 8192 + 4096: 95.0% (session 9; 16384
    #                     tiles, 4/SM: 87.9); H200 (session 41, + 256 / 512 / 1024 -> + 2048): 8448 84.3 -> 97.2, 8704
    #                     81.9 -> 97.4, 9216 85.5 -> 97.0
    ("fwd", True, 16384): (1, 16384, False, 8, 1, 0),  # 98.5% (session 13, two passes; 32 warps: 93.0)
    ("bwd", True, 12288): (1, 8192, False, 16, 3, 1, True, {"least_n2": 2048}),  # 8192 + 4096. H200 (session 41,
    #                     16384's whole row -> 8192 + next_pow2(N - 8192)): 9216 74.3 -> 96.2, 10240 78.5 -> 97.4,
    #                     11264 82.0 -> 96.8, 12288 84.6 -> 95.9; + 256 / 512 -> + 2048: 8448 61.4 -> 91.9, 8704 61.7
    #                     -> 93.7
    ("bwd", True, 16384): (1, 16384, False, 16, 1, 1, True),  # 91.9% (chunked 4×4096: 57.9)
    ("fwd", True, 24576): (1, 16384, False, 16, 1, 0, {"hold_loaded": True, "block_n2": 8192}),  # H200 (session
    #                     38): 20000 98.4% (32768's chunks: 92.5; second pieces of next_pow2(N - 16384), fp16: 17000
    #                     78.9 against 91.9, 20480 97.5 against 97.1). H100: 17000-24576 97.6-98.9 -> 99.0-99.2
    ("fwd", True, 32768): (1, 4096, True, 16, 1, 0, LOOPED_U8),  # 95.8% (session 16; whole row, 2 stages: 89.5)
    ("bwd", True, 32768): (4, 8192, True, 32, 1, 2),  # 46.8% of copy
    ("fwd", True, 49152): (1, 4096, True, 16, 1, 0, LOOPED_U8),  # at 40000: 89.3 / 88.9% (session 33; before, by
    #                                                the fallback, 65536's held whole row: 79.9); 16-bit rows of
    #                                                40961-49152 read in vectors take NORM_FWD_VECTOR_ROWS (session 43)
    ("fwd", True, 65536): (1, 32768, False, 32, 1, 0, {"hold_loaded": True, "block_n2": 32768}),  # rows of
    #                      49153-65535, x held as loaded in two pieces of 32768 (4 bytes spilled); 65536 itself:
    #                      NORM_TUNED_EXACT. H200 (session 43, the whole row held -> this): 49160 81.8 -> 84.5, 53248
    #                      76.1 -> 93.0, 57344 78.4 -> 93.6, 61440 82.3 -> 91.8 (at 65536 89.5 against the exact
    #                      entry's 87.8). The whole row held: 97.0% H100 (session 18; not holding x: 72.6; 16384
    #                      chunks, 3 stages, 2/SM: 83.6; the H100 keeps it: NORM_TUNED_BY_DEVICE); H200 (session 33):
    #                      85.4, 80.0 / 81.6 at 57344 / 60000 (the persistent 8192 × w32, u8 grid: 69.5 / 78.1)
    ("bwd", True, 65536): (4, 4096, True, 16, 3, 1),  # 47.6% of copy
}


#: Measured winners for float32 inputs on an H200, as NORM_TUNED (NOTES.md, session 13: kernels only, one pass,
#: % of copy against the rules' config of the same run). Entries where the rules' config was within a point of the
#: best variant are left out (the rules serve there), except under a 3P/4 key whose P has an entry (which its rows
#: would take, unmeasured).
NORM_TUNED_FP32: dict[tuple[str, bool, int], NormEntry] = {
    ("fwd", False, 256): (8, 256, False, 1, 1, 0),  # 79.9% (rules: 75.9)
    ("bwd", False, 256): (16, 256, False, 8, 1, 2),  # 70.3% (35.0: the rules' prefetch)
    ("bwd", False, 512): (4, 512, False, 4, 3, 2),  # 84.3% (65.2)
    ("fwd", False, 768): (2, 512, False, 2, 1, 0, {"least_n2": 256}),  # 512 + 256: 91.4% (90.5; else 1024's
    #                   entry). Session 42 (second pieces of next_pow2(N - 512) -> at least 256): 544 83.2 -> 86.6, 640
    #                   87.3 -> 88.4
    ("bwd", False, 768): (1, 512, False, 1, 3, 4),  # 512 + 256: 90.1% (76.8)
    ("fwd", False, 1024): (1, 1024, False, 4, 1, 0),  # 92.8% (91.8; two passes)
    ("bwd", False, 1024): (1, 1024, False, 2, 3, 4),  # 92.5% (89.1)
    ("fwd", False, 1536): (2, 2048, False, 8, 1, 0),  # 95.5% (94.1)
    ("bwd", False, 1536): (4, 2048, False, 16, 3, 1),  # 94.3% (84.0)
    ("fwd", False, 2048): (1, 2048, True, 4, 1, 0, LOOPED),  # 97.9% (session 16; 2-row tiles: 95.0)
    ("bwd", False, 2048): (2, 2048, False, 8, 3, 1),  # 96.4% (94.6)
    ("fwd", False, 3072): (1, 4096, False, 8, 1, 0),  # 97.4% (96.5; without it, 4096's entry: 88.4 in the suite)
    ("bwd", False, 3072): (2, 4096, False, 32, 3, 1),  # 97.5% (89.9)
    ("fwd", False, 4096): (2, 4096, False, 16, 1, 0),  # 96.9% (95.7)
    ("bwd", False, 4096): (1, 4096, False, 8, 3, 1),  # 98.1% (96.9)
    ("fwd", False, 6144): (1, 4096, False, 8, 1, 0),  # 4096 + 1024 at 5120: 97.0% (96.5; else 8192's entry)
    ("bwd", False, 6144): (1, 8192, False, 16, 3, 1),  # at 5120: 98.9% (73.4)
    ("fwd", False, 8192): (1, 8192, False, 16, 1, 0),  # 97.9% (96.8; two passes)
    ("bwd", False, 8192): (1, 8192, False, 16, 3, 1, True),  # 97.6% (91.5)
    ("fwd", False, 12288): (1, 8192, False, 16, 1, 0, {"least_n2": 2048}),  # 8192 + 4096: 98.1% (74.8). Session
    #                    42 (at least 2048 in the second piece): 8448 94.4 -> 94.6, 8704 72.8 -> 95.8, 9216 73.3 -> 98.5
    ("bwd", False, 12288): (1, 8192, False, 16, 1, 1),  # 8192 + 4096: 83.5% (chunked: 35.6), 16 B spills
    ("fwd", False, 16384): (1, 2048, True, 16, 1, 0, LOOPED_U4),  # 92.4% (session 17; whole row, 4/SM: 89.1)
    ("fwd", False, 65536): (1, 8192, True, 8, 3, 4),  # 67.9% (44.0: the rules' L2 budget of rows in flight)
    ("fwd", True, 256): (8, 256, False, 2, 1, 0),  # 81.7% (80.0)
    ("bwd", True, 256): (16, 256, False, 8, 1, 2),  # 72.8% (61.4)
    ("bwd", True, 512): (4, 512, False, 4, 3, 2),  # 85.3% (78.3)
    ("fwd", True, 768): (2, 512, False, 2, 1, 0),  # 512 + 256: 92.3% (91.5; else 1024's entry)
    ("bwd", True, 768): (1, 1024, False, 4, 3, 4),  # 90.5% (81.7)
    ("fwd", True, 1024): (1, 1024, False, 1, 1, 0),  # 94.1% (92.3)
    ("bwd", True, 1024): (4, 1024, False, 8, 3, 1),  # 93.3% (91.7)
    ("fwd", True, 1536): (1, 1024, False, 2, 1, 0),  # 1024 + 512: 96.0% (94.8)
    ("bwd", True, 1536): (1, 2048, False, 8, 1, 4),  # 95.2% (88.8)
    ("fwd", True, 2048): (1, 2048, True, 8, 1, 0, LOOPED),  # 98.6% (session 16; 8-row tiles: 95.7)
    ("bwd", True, 2048): (2, 2048, False, 16, 3, 1),  # 97.0% (95.7)
    ("fwd", True, 3072): (2, 2048, False, 16, 1, 0),  # 2048 + 1024: 97.8% (96.6)
    ("bwd", True, 3072): (2, 4096, False, 32, 3, 1),  # 96.8% (92.2)
    ("bwd", True, 4096): (1, 4096, False, 16, 3, 1),  # 98.7% (97.3)
    ("fwd", True, 6144): (1, 8192, False, 16, 1, 0),  # at 5120: 98.8% (98.1; else 8192's entry)
    ("bwd", True, 6144): (1, 8192, False, 32, 3, 1, True),  # at 5120: 98.5% (79.0)
    ("fwd", True, 4096): (1, 2048, True, 16, 1, 0, LOOPED_U2),  # 100.3% (session 16; rules: 96.4)
    ("fwd", True, 8192): (1, 4096, True, 16, 1, 0, LOOPED_U2),  # 101.1% (session 16; whole row w32: 98.3)
    ("fwd", True, 16384): (1, 4096, True, 16, 1, 0, LOOPED_U8),  # 101.4% (session 16; rules: 97.7)
    ("bwd", True, 8192): (1, 8192, False, 16, 1, 1),  # 98.4% (95.4)
    ("fwd", True, 12288): (2, 8192, False, 32, 1, 0),  # 8192 + 4096: 99.0% (97.9). Session 42, against 1 × 8192,
    #                   w16, at least 2048 in the second piece: 8448 89.2 / 97.6, 9216 94.3 / 97.6, 10240 96.5 / 97.3,
    #                   10500 94.8 / 97.2, 11264 99.4 / 98.1, 12288 99.4 / 97.8 (NORM_FWD_VECTOR_ROWS: to 10752)
    ("bwd", True, 12288): (1, 8192, False, 16, 1, 1),  # 8192 + 4096: 91.5% (chunked: 53.4)
    ("bwd", True, 16384): (1, 16384, False, 16, 1, 1, True),  # 93.8% (chunked: 50.4), 8 B spills
    ("fwd", True, 65536): (1, 8192, True, 16, 3, 4),  # 69.8% (49.1); session 16's looped rows (8192 × w16, u8): 72.4
    #                                                   kernels only against 69.7, but 67.1 in the suite against 70.2
}


#: Rows of exactly a key's N (16-bit, measured on the H200 in bf16, without a residual), where another config than
#: the key's other rows wins. The forward's chunks: a row of whole chunks, as many as the loop's unroll, runs the
#: unrolled body once, every chunk's loads in one round; the key's shorter rows have fewer chunks than the unroll and
#: never enter that body (peeling a ragged last chunk off the loops did not help: NOTES.md, session 38). LN's held
#: backward row at 16384: a power-of-two row fills its tile, which the key's shorter rows leave part masked, where two
#: pieces win. RMS's forward at 4096: its one chunk, where the key's shorter rows take the whole row. Looked up
#: before NORM_TUNED, after a device's own entries and the forward's NORM_FWD_VECTOR_ROWS (no exact N lies in one of
#: its ranges: a test holds them apart); the forward's not with a fused residual (``norm_fwd_config``).
#: Sessions 38-41, kernels only (the key's entry -> this one).
NORM_TUNED_EXACT: dict[tuple[str, bool, int], NormEntry] = {
    ("fwd", True, 4096): (1, 4096, True, 8, 1, 0, LOOPED),  # 98.9% (session 16; 4-row tiles: 96.5)
    # The whole row held as loaded: 90.4% H100 (session 18; not holding the loads: 82.8, 64 B spilled); H200 75.9
    # (session 41; 8192 + 8192, the key's other rows' entry: 65.2)
    ("bwd", False, 16384): (1, 16384, False, 16, 3, 1, True, {"hold_loaded": True}),
    # One 32-warp program an SM over 8 chunks of 8192, the weight and bias L2-only: L1 keeps the 128 KB row of x
    # that the second pass re-reads (without: 77.2; two programs an SM, 4096 × w16: 67.3)
    ("fwd", False, 65536): (1, 8192, True, 32, 1, 1, {**LOOPED_U8, "params_l2_only": True}),  # 73.4 -> 83.6
    # The same grid over 6 chunks of 8192, the weight and bias cached as usual (session 39, H200: 70.8 -> 79.0;
    # L2-only 77.3; the key's shorter rows lost with the grid, 45000 69.2 -> 55.0, its unrolled body never entered)
    ("fwd", False, 49152): (1, 8192, True, 32, 1, 1, {"evict": True, "unroll": 6}),
    # 83.2 -> 88.2 against the whole row held; session 43's key entry (32768 + 32768 held) read 89.5 / 89.8 against
    # this one's 87.8 / 88.7 (kernels only, two calls): within two points, and this one read 92 in the suite; kept
    ("fwd", True, 65536): (1, 8192, True, 32, 1, 1, {**LOOPED_U8, "params_l2_only": True}),
}


class RowRange(NamedTuple):
    """Rows of ``low``..``high`` elements that take ``config`` (the scalar rows' tables: rows read one element a
    load; NORM_FWD_VECTOR_ROWS: rows read in vectors); the backward's ``programs`` are per SM. The scalar rows'
    forward only: with ``two_pieces_stay`` the tables' two-piece entries (a power-of-two piece and the rest,
    ``block_n2``) keep their rows, measured faster there."""
    low: int
    high: int
    config: NormConfig
    two_pieces_stay: bool = False

    def odd_ends(self) -> tuple[int, int]:
        """The shortest and the longest odd row of the range."""
        return self.low | 1, self.high - (self.high % 2 == 0)


#: The forward's such rows: short chunks unrolled 4, sixteen loads in flight a thread; the shorter the row, the
#: narrower the program. H200, bf16, kernels only, % of copy (session 40, calls 3-7; session 39 past 16384), the
#: tables' entry -> this: LN 3073 32.1 -> 40.7, 6145 20.6 -> 41.3, 12289 24.4 -> 43.2, 14337 25.5 -> 42.0, 16385
#: 28.0 -> 40.4, 24577 23.8 -> 40.3, 49151 23.6 -> 33.9; RMS 2305 42.4 -> 58.0, 3073 34.7 -> 60.9, 6145 39.1 -> 63.2,
#: 12289 31.2 -> 61.8, 16383 37.2 -> 64.0, 16385 39.1 -> 61.9, 49151 35.5 -> 45.1 (the best peer, session 40 call 2:
#: LN Liger 24-34, RMS Liger 38-53). Between 12289 and 16384 LN's rows read more in 512-column chunks (12289 43.2
#: against 39.5), RMS's in 1024 (16383 64.1 against 50.7). The two-piece entries stay below 16385 (LN 2305 58.7
#: against 38.4, 4099 72.2 against 41.9, 8193 64.7 against 44.2; RMS 4609 80.5 against 61.4, 8193 79.0 against
#: 64.3), not past it (LN 16385 28.0 -> 40.4), nor LayerNorm's two pieces of 12289-16384 (session 41; measured as
#: whole rows then, and the chunks served them). Below 2049 the whole rows stay (LN 1537 34.4 against 34.3, RMS 55.4
#: against 51.8); past 65536 unmeasured.
_SCALAR_CHUNKS_256 = NormConfig(1, 256, True, 2, evict=True, unroll=4)
_SCALAR_CHUNKS_512 = NormConfig(1, 512, True, 4, evict=True, unroll=4)
_SCALAR_CHUNKS_1024 = NormConfig(1, 1024, True, 8, evict=True, unroll=4)
NORM_FWD_SCALAR_ROWS: dict[bool, tuple[RowRange, ...]] = {
    False: (RowRange(2049, 4096, _SCALAR_CHUNKS_256, True), RowRange(4097, 12288, _SCALAR_CHUNKS_512, True),
            RowRange(12289, 16384, _SCALAR_CHUNKS_512), RowRange(16385, 65536, _SCALAR_CHUNKS_1024)),
    True: (RowRange(2049, 4096, _SCALAR_CHUNKS_256, True), RowRange(4097, 12288, _SCALAR_CHUNKS_512, True),
           RowRange(12289, 16384, _SCALAR_CHUNKS_1024, True), RowRange(16385, 65536, _SCALAR_CHUNKS_1024)),
}
#: Split rows of 512-column pieces and 2 warps compile up to 32 pieces (``norm_split_fits``): their ranges end at 16384.
_SCALAR_SPLIT_512 = NormConfig(1, 512, False, 2, 1, 8, split=True, early_loads=True)
_SCALAR_SPLIT_2048 = NormConfig(1, 2048, False, 8, 1, 2, split=True, early_loads=True)
#: The backward's such rows (x and dy read one element a load), by RMSNorm or not: split rows of short pieces, many
#: programs an SM. H200, bf16, kernels only, the tables' entry -> this (session 40 calls 1-6; session 39 past 16384):
#: LN 2305 26.7 -> 42.1, 3073 32.8 -> 40.2, 4609 28.3 -> 40.4, 5121 30.7 -> 41.1, 8705 31.8 -> 38.2, 12289 9.1 ->
#: 38.6 (the 16384 key's whole row held as loaded spilled 232 bytes), 16383 11.3 -> 39.1, 16385 23.6 -> 34.6, 32769
#: 26.4 -> 32.9; RMS 2305 35.3 -> 42.0, 5121 32.2 -> 41.3, 8193 29.6 -> 42.6, 12289 36.5 -> 42.5, 16385 27.6 -> 35.3
#: (torch eager: 30-41). The tables keep, measured faster: LN's two pieces one past a power of two (4097 54.9
#: against 40.4, 8193 43.5 against 38.4, with the warps of session 40: session 41's fewer read 58.2 and 47.5; four
#: past, 4099, lost: 34.0 against 40.3), RMS's whole rows of 4096 and 8192 (3073 46.3 against 39.9, 7169 48.3
#: against 41.5) and its power of two with a short rest (4097 44.2, 4099 44.5 against 40.3; 2049-2304 and 4100-4608
#: unmeasured, kept), and both past 40001 (LN 65535 31.4 -> 30.3).
NORM_BWD_SCALAR_ROWS: dict[bool, tuple[RowRange, ...]] = {
    False: (RowRange(2049, 4096, _SCALAR_SPLIT_512), RowRange(4098, 8192, _SCALAR_SPLIT_512),
            RowRange(8194, 16384, _SCALAR_SPLIT_512), RowRange(16385, 40001, _SCALAR_SPLIT_2048)),
    True: (RowRange(2305, 3072, _SCALAR_SPLIT_512), RowRange(4609, 6144, _SCALAR_SPLIT_512),
           RowRange(8193, 16384, _SCALAR_SPLIT_512), RowRange(16385, 40001, _SCALAR_SPLIT_2048)),
}
#: The backward's such rows where no split rows launch (traced by torch.compile; a cooperative grid the GPU refused;
#: split rows that do not fit the programs): LN's 16384 key's whole row held as loaded (its entry until session 41)
#: spilled there (12289 9.1%, 16383 11.3%, session 40 calls 1-6); a whole row of 32 warps, the weight re-read per row,
#: not held: 21.0, 24.1 (call 9; 16 warps, 3 stages 6.7, 8.7; chunks of 1024 x w4 or 2048 x w8 15); the two pieces
#: of 8192 that the key's aligned rows take since session 41 are unmeasured on odd rows. RMS keeps its tables' rows:
#: session 40 measured 16384's whole row (16 warps, the weight re-read: 8193 29.6, 12289 36.5) within 1.4 of each
#: unsplit config (32 warps 29.1, 37.4; 3 stages 28.7, 37.9; chunks 22-23); since session 41 its 8193-12288 rows
#: take the 12288 key's 8192 + next_pow2(N - 8192) (12287: 36.6 -> 43.7, session 41 call 8).
NORM_BWD_SCALAR_ROWS_UNSPLIT: dict[bool, tuple[RowRange, ...]] = {
    False: (RowRange(12289, 16384, NormConfig(1, 16384, False, 32, 1, 1, True)),),
    True: (),
}
#: All these serve every device and fp16 too (measured on the H200 in bf16; the H100's own entries were measured
#: on aligned rows).

#: The forward's rows read in vectors (no residual) in a part of a key's rows where another config than the key's
#: entry won, by (element size, is_rms). Measured on the H200 (session 42, calls 2-3, kernels only, % of copy, the
#: entry -> this); a device with an entry of its own for the key keeps it (the H100's LN 24576: not measured here).
#: - 16-bit LN 16385-18432 (measured in bf16), the held 16384 + at least 4096 -> chunks of 2048 × w8, u8: 16896
#:   72.8 -> 83.9, 17000 71.6 -> 80.5, 17408 74.7 -> 84.1, 17920 76.5 -> 84.3, 18432 78.2 -> 88.6 (past it: 19000 /
#:   19456 even, 20000 82.1 -> 77.9, 24576 88.8 -> 74.9);
#: - float32 RMS 8193-10752, the 12288 key's 2 × 8192, w32 -> 1 × 8192, w16 with a second piece of at least 2048:
#:   8448 89.2 -> 97.6, 9216 94.3 -> 97.6, 10240 96.5 -> 97.3, 10500 94.8 -> 97.2 (11264 99.4 -> 98.1, 12288 99.4 ->
#:   97.8: the key's entry stays there);
#: - 16-bit RMS 40961-49152 (bf16; fp16 at 41000-49152 alike), the 49152 key's chunks of 4096 × w16, u8 -> the row
#:   held as loaded, 32768 + 16384 at 32 warps (session 43, call 3): 45000 73.2 -> 89.5, 49152 75.1 -> 97.5 (with a
#:   second piece of 8192 the key's shorter rows lost: 33000 90.0 -> 79.1, 36000 88.2 -> 74.6, 40000 87.4 -> 74.3).
#: A two-piece config's block_n2 here is its least second piece, as an entry's ``least_n2``: rows take
#: max(block_n2, next_pow2(N - block_n)).
NORM_FWD_VECTOR_ROWS: dict[tuple[int, bool], tuple[RowRange, ...]] = {
    (2, False): (RowRange(16385, 18432, NormConfig(1, 2048, True, 8, **LOOPED_U8)),),
    (2, True): (RowRange(40961, 49152, NormConfig(1, 32768, False, 32, block_n2=16384, hold_loaded=True)),),
    (4, True): (RowRange(8193, 10752, NormConfig(1, 8192, False, 16, block_n2=2048)),),
}


def scalar_row_ranges() -> list[RowRange]:
    """Every range of the scalar rows' tables, forward and backward, both norms."""
    tables = (NORM_FWD_SCALAR_ROWS, NORM_BWD_SCALAR_ROWS, NORM_BWD_SCALAR_ROWS_UNSPLIT)
    return [rows for table in tables for is_rms in (False, True) for rows in table[is_rms]]


#: Forward entries measured better on another device than the H200 the tables above were tuned on (and, where the
#: note says so, a table's own entry repeated so that NORM_TUNED_EXACT, measured on the H200 only, does not serve
#: the device): by a part of the
#: device's name (the longest part found in it wins; "H100 80GB HBM3" is the SXM part measured, not the PCIe or NVL
#: ones), x's element size, then the tables' key. An entry serves only rows whose own key (``norm_tuned_key``) it is
#: — never a 3P/4 key's fallback to its power of two, where it was not measured (session 18's overrides took rows of
#: 16385-24576 to a 32768 tile and lost there). Measured on an H100 (NOTES.md, session 19; kernels only, two passes,
#: % of copy, the tables' entry -> this one), with weights in x's dtype (float32 weights on 16-bit x: unmeasured; the
#: whole 32768-element rows then spill 32-304 bytes, sm_90 offline); the H200 measured the other way at these keys
#: (sessions 13, 16: RMS 32768 whole row 89.5 against looped 95.8, fp32 LN 16384 89.1 against 92.4).
NORM_TUNED_BY_DEVICE: dict[str, dict[int, dict[tuple[str, bool, int], NormEntry]]] = {
    "H100 80GB HBM3": {
        2: {
            ("fwd", False, 32768): (1, 32768, False, 32, 1, 0),  # LN 25000 66.0 -> 83.4, 32768 93.9 -> 97.5
            ("fwd", True, 32768): (1, 32768, False, 32, 1, 0),  # RMS 25000 96.6 -> 95.3, 28000 95.6 -> 98.3,
            #                                                     32768 94.1 -> 99.7 (Liger's whole row: 101.2)
            ("fwd", True, 8192): (1, 8192, False, 8, 1, 0),  # RMS 6500 99.0 -> 98.8, 8192 93.4 -> 98.9
            # RMS at 40000 as measured on the H100 (session 18: 97.6, by the 65536 entry's fallback, which the
            # H200's own 49152 entry replaced in session 33): one 32-warp program a row holding x as loaded.
            ("fwd", True, 49152): (1, 65536, False, 32, 1, 0, {"hold_loaded": True}),
            # The tables' 49152 entry, so that the H200's NORM_TUNED_EXACT entry at 49152 (not measured here) does
            # not serve it (session 38: 49152 73.3 without x L2-only, 71.9 with)
            ("fwd", False, 49152): NORM_TUNED[("fwd", False, 49152)],
            # The 24576 key's held rows with the second piece of 8192 they were measured with here (session 38:
            # 17000-24576 87.0-99.0); the H200's least piece of 4096 (session 42) is not measured here
            ("fwd", False, 24576): (1, 16384, False, 16, 1, 0, {"hold_loaded": True, "block_n2": 8192}),
            # The 65536 key's held whole row as the tables had it for the H100 (session 18: LN 89.8, RMS 97.0), so
            # that the H200's NORM_TUNED_EXACT entries at 65536 (not measured here) do not serve it
            ("fwd", False, 65536): (1, 65536, False, 32, 1, 0, {"hold_loaded": True}),
            ("fwd", True, 65536): (1, 65536, False, 32, 1, 0, {"hold_loaded": True}),
        },
        4: {
            ("fwd", False, 16384): (1, 16384, False, 32, 1, 0),  # LN 13000 88.2 -> 93.4, 16384 92.5 -> 99.6
        },
    },
}


#: Backward rows split across programs (``NormConfig.split``), measured winners for 16-bit inputs on an H200 (NOTES.md,
#: sessions 10 and 14), by (is_rms, ``norm_tuned_key(N)``, falling back to next_pow2(N)'s; rows longer than the longest
#: key take its entry): (block_n, num_warps, programs per SM, w_in_loop, early_loads). Kernels only, % of copy against
#: the rows' config without splitting (chunked, or session 14's against session 10's split entry) in the same run.
#: The forward's split rows lost to its whole-row and chunked tiles (LN 66 vs 75%, RMS 78 vs 89% at 32768, session
#: 10) and are not built.
NORM_SPLIT_TUNED: dict[tuple[bool, int], tuple[int, int, int, bool, bool]] = {
    (False, 24576): (8192, 16, 1, False, True),  # 54.6% at 20480 (session 10's 2048 x w8 split: 45.1)
    (False, 32768): (8192, 16, 1, False, True),  # 62.7% (chunked: 40.9)
    (False, 65536): (8192, 16, 1, False, True),  # 57.8% (2048 x w8: 44.6)
    (False, 131072): (2048, 4, 4, True, True),  # 54.1% (session 10's 8192 x w16 entry: 34.7)
    (False, 262144): (8192, 16, 1, True, False),  # 50.2% (session 14; early loads at best 45.2)
    (True, 24576): (2048, 4, 4, False, True),  # 71.7% at 20480 (32768's entry of session 10: 55.5)
    (True, 32768): (8192, 16, 1, False, True),  # 70.7% (64.3)
    (True, 65536): (8192, 16, 1, False, True),  # 63.9% (62.6)
    (True, 131072): (8192, 16, 1, True, False),  # 62.3% (session 14; early loads at best 61.8)
    (True, 262144): (8192, 16, 1, False, False),  # 63.4% (session 14; early loads at best 62.1)
}


#: NORM_SPLIT_TUNED for float32 inputs (sessions 13 and 14, one pass, against the rows' config without splitting or
#: session 13's split entry, in the same run). None: the key's rows stay whole and do not fall back to P's entry (LN
#: 12288: split 74.6% against whole 83.5, session 13; RMS 12288: measured whole only, 91.5%).
NORM_SPLIT_TUNED_FP32: dict[tuple[bool, int], tuple[int, int, int, bool, bool] | None] = {
    (False, 12288): None,
    (False, 16384): (8192, 16, 1, False, True),  # 89.5% (session 13's 2048 x w8 split: 74.3; chunked 29.9)
    (False, 32768): (8192, 16, 1, False, True),  # 88.6% (71.7)
    (False, 65536): (8192, 16, 1, False, True),  # 85.0% (72.1); 70.3% at 131072 (63.4)
    (True, 12288): None,
    (True, 16384): (8192, 16, 1, True, True),  # 95.8% (whole rows: 93.5)
    (True, 32768): (8192, 16, 1, True, True),  # 94.4% (92.0)
    (True, 65536): (8192, 16, 1, True, False),  # 90.5% (session 14; early loads at best 89.7)
}


def _tables(elem_size: int) -> tuple[dict, dict] | None:
    """The measured (NORM_TUNED-like, NORM_SPLIT_TUNED-like) tables of inputs of ``elem_size`` bytes, or None (the
    rules serve: float64)."""
    if elem_size == 2:
        return NORM_TUNED, NORM_SPLIT_TUNED
    if elem_size == 4:
        return NORM_TUNED_FP32, NORM_SPLIT_TUNED_FP32
    return None


def _split(is_rms: bool, n: int, elem_size: int, device: int | None) -> NormConfig | None:
    """The backward's split-row config for rows of ``n``, or None (no measured entry, or more pieces than can be
    resident)."""
    tables = _tables(elem_size)
    if tables is None:
        return None
    table = tables[1]
    keys = [k for r, k in table if r == is_rms]
    if not keys:
        return None
    piece = _tuned_entry(table, (is_rms,), n) or (table[(is_rms, max(keys))] if _next_pow2(n) > max(keys) else None)
    if piece is None:
        return None
    block_n, warps, per_sm, w_in_loop, early_loads = piece
    programs = per_sm * multiprocessor_count(device)
    cfg = NormConfig(1, block_n, False, warps, 1, programs, w_in_loop, split=True, early_loads=early_loads)
    return cfg if norm_split_fits(cfg, n) else None


def norm_split_fits(cfg: NormConfig, n: int) -> bool:
    """Whether split rows of ``cfg`` hold a row of ``n`` in 2 to ``cfg.programs`` pieces (all resident at once),
    fewer (to the next power of two) than a program's threads: from that many on the kernel fails to compile (triton
    3.6, TritonGPURemoveLayoutConversions; offline sm_90 for pieces of 256-2048 columns and 1-8 warps, session 40)."""
    pieces = -(-n // cfg.block_n)
    return 2 <= pieces <= cfg.programs and _next_pow2(pieces) < 32 * cfg.num_warps


def norm_tuned_key(n: int) -> int:
    """NORM_TUNED's size key of rows of ``n``: the power of two P = next_pow2(n), or 3P/4 for n <= 3P/4 — rows that
    fill at most three quarters of their power-of-two tile (key 768 for 513..768, 3072 for 2049..3072, 6144 for
    4097..6144 such as 5120, ...: a thread then has fewer loads in flight, and other tiles win there), whose
    entries fall back to P's when absent."""
    p = _next_pow2(n)
    return p * 3 // 4 if p >= 4 and 4 * n <= 3 * p else p


def _tuned_entry(table: dict, prefix: tuple, n: int):
    """A measured table's entry for rows of ``n``: under ``(*prefix, norm_tuned_key(n))`` if that key is there (its
    value may be None: measured, no entry), else under next_pow2(n)'s key; None when neither is there."""
    key = (*prefix, norm_tuned_key(n))
    return table[key] if key in table else table.get((*prefix, _next_pow2(n)))


def _for_device(table: dict, device: int | None):
    """``table``'s value for ``device``: under the longest part of the device's name that the table has, or None."""
    name = device_name(device)
    parts = [part for part in table if part in name]
    return table[max(parts, key=len)] if parts else None


def _device_entry(kind: str, is_rms: bool, n: int, elem_size: int, device: int | None):
    """NORM_TUNED_BY_DEVICE's entry for rows of ``n`` on ``device`` (its own key only), or None."""
    entries = _for_device(NORM_TUNED_BY_DEVICE, device)
    if entries is None:
        return None
    return entries.get(elem_size, {}).get((kind, is_rms, norm_tuned_key(n)))


def _tuned(kind: str, is_rms: bool, n: int, elem_size: int, device: int | None,
           exact: bool = True, scalar_loads: bool = False, capped: bool = True) -> NormConfig | None:
    """The measured entry's config for rows of ``n``: the device's own, else an exact N's (16-bit, where ``exact``),
    else the key's; an entry that caps the registers gives way to NORM_TUNED_UNCAPPED's where the launch cannot
    take a cap (``capped`` False)."""
    tables = _tables(elem_size)
    if tables is None:
        return None
    prefix, exact = (kind, is_rms), exact and elem_size == 2
    hit = _device_entry(kind, is_rms, n, elem_size, device) or _table_entry(NORM_TUNED_EXACT, tables[0], prefix, n,
                                                                            exact)
    if hit is not None and not capped and isinstance(hit[-1], dict) and hit[-1].get("maxnreg"):
        hit = _table_entry(NORM_TUNED_UNCAPPED_EXACT, NORM_TUNED_UNCAPPED, prefix, n, exact)
    return None if hit is None else _entry_config(hit, n, device, scalar_loads)


def _table_entry(exact_table: dict, table: dict, prefix: tuple, n: int, exact: bool):
    """``exact_table``'s entry for N = ``n`` itself where ``exact``, else ``table``'s (:func:`_tuned_entry`)."""
    return (exact_table.get((*prefix, n)) if exact else None) or _tuned_entry(table, prefix, n)


def _entry_config(hit: NormEntry, n: int, device: int | None, scalar_loads: bool) -> NormConfig:
    """The config of a measured table's entry ``hit`` for rows of ``n`` (its programs per SM made a grid, its second
    piece sized for the row)."""
    block_m, block_n, chunked, warps, stages, per_sm, *rest = hit
    extra = dict(rest.pop()) if rest and isinstance(rest[-1], dict) else {}
    piece = extra.pop("block_n2", 0)  # the entry's own second piece
    least = extra.pop("least_n2", 0)  # its shortest second piece, on rows read in vectors
    if scalar_loads and not extra.get("hold_loaded"):  # held loads need 2 elements a thread in it: on every row
        least = 0
    block_n2 = (piece or _second_piece(n, block_n, least)) if not chunked and block_n < n else 0
    return NormConfig(block_m, block_n, chunked, warps, stages, per_sm * multiprocessor_count(device),
                      *(rest or [False]), block_n2, **extra)


def _second_piece(n: int, block_n: int, least: int) -> int:
    """The second piece of rows of ``n`` held as ``block_n`` + the rest: the rest's power of two, at least ``least``."""
    return max(least, _next_pow2(n - block_n))


def _row_range(table: tuple[RowRange, ...], n: int) -> RowRange | None:
    """The range of a row ranges' table (the scalar or the vector rows') that holds rows of ``n``, or None."""
    return next((rows for rows in table if rows.low <= n <= rows.high), None)


#: Where an entry caps the registers (``maxnreg``: the forward's), the entry of launches that cannot take a cap: traced
#: ones (torch.compile), whose kernel wrapper passes no ``maxnreg``. Uncapped, such an entry loses (H200, session 52: LN
#: forward 32768 held as 16384 + 16384 with one_round 78.1 against 93.5 capped), so these rows keep the entries they had
#: before it: by exact N (16-bit, as NORM_TUNED_EXACT), else by ``norm_tuned_key(N)``.
NORM_TUNED_UNCAPPED_EXACT: dict[tuple[str, bool, int], NormEntry] = {
    ("fwd", False, 32768): (1, 4096, True, 16, 1, 0, LOOPED_U8),  # 86.5 / 86.9 (session 52)
}
NORM_TUNED_UNCAPPED: dict[tuple[str, bool, int], NormEntry] = {
    ("fwd", False, 32768): (1, 32768, False, 32, 1, 0),  # 26000 67.5, 28000 70.2 / 70.3 (session 52)
}


@functools.cache
def norm_fwd_config(n: int, elem_size: int, device: int | None = None, is_rms: bool = False,
                    residual: bool = False, scalar_loads: bool = False, capped: bool = True) -> NormConfig:
    """Forward tile for rows of ``n`` elements of ``elem_size`` bytes; with a fused ``residual`` a measured entry
    that holds x as loaded (``hold_loaded``, which the residual's sum does not take: its whole row would spill) gives
    way to the rules, and NORM_TUNED_EXACT's (whose gain is L1 keeping x for the re-read, which a residual's second
    pass does not make) to the key's entry. ``scalar_loads``: the rows are read one element a load (an odd N or row
    stride), where NORM_FWD_SCALAR_ROWS serves 16-bit rows without a residual; rows read in vectors without one take
    NORM_FWD_VECTOR_ROWS' config in its ranges, unless the device has an entry of its own for the key. ``capped``:
    the launch can cap the registers; where it cannot, an entry that caps them gives way to NORM_TUNED_UNCAPPED's."""
    if not scalar_loads and not residual and _device_entry("fwd", is_rms, n, elem_size, device) is None:
        rows = _row_range(NORM_FWD_VECTOR_ROWS.get((elem_size, is_rms), ()), n)
        if rows is not None:
            cfg = rows.config
            return cfg._replace(block_n2=_second_piece(n, cfg.block_n, cfg.block_n2)) if cfg.block_n2 else cfg
    tuned = _tuned("fwd", is_rms, n, elem_size, device, exact=not residual, scalar_loads=scalar_loads, capped=capped)
    if scalar_loads and elem_size == 2 and not residual:
        rows = _row_range(NORM_FWD_SCALAR_ROWS[is_rms], n)
        if rows is not None and not (rows.two_pieces_stay and tuned is not None and tuned.block_n2):
            return rows.config
    if tuned is not None and not (residual and tuned.hold_loaded):
        return tuned
    acc = 8 if elem_size == 8 else 4
    bn = _next_pow2(n)
    if bn <= NORM_FWD_FUSED_MAX[acc]:
        block_m = max(1, NORM_FWD_TILE // bn)
        return NormConfig(block_m, bn, False, _pow2_warps(block_m * bn, NORM_FWD_ELEMS_PER_THREAD))
    chunk = NORM_FWD_CHUNK[acc]
    sms = multiprocessor_count(device)
    programs = max(1, min(2 * sms, NORM_L2_BUDGET // (n * elem_size)))
    return NormConfig(1, chunk, True, _pow2_warps(chunk, NORM_FWD_ELEMS_PER_THREAD // 2), NORM_STAGES, programs)


@functools.cache
def norm_bwd_config(n: int, elem_size: int, device: int | None, is_rms: bool = False,
                    split: bool = True, scalar_loads: bool = False, residual: bool = False) -> NormConfig:
    """Backward tile and persistent grid for rows of ``n`` elements (``elem_size``: the wider of x, dy); ``split``:
    split rows may be chosen; ``scalar_loads``: the rows are read one element a load (an odd N or row stride), where
    NORM_BWD_SCALAR_ROWS serves 16-bit rows without a ``residual``'s gradient (measured without one), or
    NORM_BWD_SCALAR_ROWS_UNSPLIT where no split rows do."""
    if scalar_loads and elem_size == 2 and not residual:
        for table in (NORM_BWD_SCALAR_ROWS, NORM_BWD_SCALAR_ROWS_UNSPLIT) if split else (NORM_BWD_SCALAR_ROWS_UNSPLIT,):
            rows = _row_range(table[is_rms], n)
            if rows is None:
                continue
            cfg = rows.config._replace(programs=rows.config.programs * multiprocessor_count(device))
            if not cfg.split or norm_split_fits(cfg, n):
                return cfg
    if split and (cfg := _split(is_rms, n, elem_size, device)) is not None:
        return cfg
    tuned = _tuned("bwd", is_rms, n, elem_size, device, scalar_loads=scalar_loads)
    if tuned is not None:
        return tuned
    acc = 8 if elem_size == 8 else 4
    bn = _next_pow2(n)
    sms = multiprocessor_count(device)
    if bn <= NORM_BWD_FUSED_MAX[acc]:
        block_m = max(1, NORM_BWD_TILE // bn)
        warps = _pow2_warps(block_m * bn, NORM_BWD_ELEMS_PER_THREAD)
        return NormConfig(block_m, bn, False, warps, NORM_STAGES, sms * NORM_BWD_PROGRAMS_PER_SM)
    chunk = NORM_BWD_CHUNK[acc]
    block_m = max(1, min(4, NORM_L2_BUDGET // (sms * n * 2 * elem_size)))
    return NormConfig(block_m, chunk, True, _pow2_warps(block_m * chunk, NORM_BWD_ELEMS_PER_THREAD), NORM_STAGES,
                      sms)


def norm_fwd_holds_params(cfg: NormConfig) -> bool:
    """Whether the forward keeps weight and bias in registers across its persistent loop (the kernel's HOIST): tiles
    of several rows in one piece; one-row tiles load them after the statistics (fewer live registers)."""
    return not cfg.chunked and cfg.programs > 0 and cfg.block_m > 1 and cfg.block_n2 == 0


def norm_widens(cfg: NormConfig, dtype: torch.dtype, row_align: int, aligned: bool) -> bool:
    """Whether the norm kernels widen bfloat16 loads by a shift and a mask (``layer_norm._widen``: one instruction an
    element, not the compiler's 1.5). Its inline assembly converts two elements a register, so every thread must hold
    an even number of each tile's columns: rows and pointers 16-byte aligned (``row_align`` >= 8 elements, ``aligned``
    the tensors' addresses), so loads are vectors, and each piece at least 2 elements a thread
    (:func:`norm_pieces_in_pairs`). Else, and under torch.compile (addresses unknown when traced), the plain
    conversion."""
    return dtype == torch.bfloat16 and aligned and row_align >= 8 and norm_pieces_in_pairs(cfg)


def norm_pieces_in_pairs(cfg: NormConfig) -> bool:
    """Whether each piece of a tile (block_n columns, and block_n2 if any) is at least 2 elements a thread, so that
    inline assembly taking 16-bit values two to a register compiles whatever the layout: the bf16 widening
    (:func:`norm_widens`) and the held loads' ``_unmerged`` (a measured entry that holds two pieces names a second
    piece that passes this). Whole-row tiles count all their block_m rows (sm_90, bf16 backward: LN 256's 32 × 256
    tiles on 16 warps, 8 columns of 2 rows a thread, widened: 370 -> 354 loop instructions, RMS 270 -> 254; session
    48); chunked ones their columns alone, as measured."""
    threads = 32 * cfg.num_warps
    rows = 1 if cfg.chunked else cfg.block_m
    return rows * cfg.block_n >= 2 * threads and (cfg.block_n2 == 0 or rows * cfg.block_n2 >= 2 * threads)


#: Shared memory one block may use on an H100/H200 (227 KiB, opted in; the sm_90 compile gate holds every kernel to it),
#: and what a norm kernel may need besides its prefetch buffers (reductions, layout conversions).
SMEM_BYTES_PER_BLOCK = 232448
NORM_SMEM_SCRATCH = 4096


def norm_fit_prefetch(cfg: NormConfig, column_bytes: int) -> NormConfig:
    """``cfg`` with its prefetch depth lowered until it fits in shared memory: a loop of num_stages keeps num_stages - 1
    tiles of everything it loads per iteration in shared memory, ``column_bytes`` per tile column (the caller's count:
    rows of x, dy, a residual, residual_out, and the parameters loaded per iteration). Applied to calls unlike the
    measured ones, which had no residual and parameters of the input's dtype (those fit as measured): a residual, or
    float32 parameters on 16-bit input, made three entries ask for 237-262 KB (sm_90 compile gate, session 13). The
    count is an upper bound (the pipeliner does not stage every load), so the depth it leaves may be lower than
    needed."""
    stages = cfg.num_stages
    tile = column_bytes * (cfg.block_n + cfg.block_n2)
    while stages > 1 and (stages - 1) * tile + NORM_SMEM_SCRATCH > SMEM_BYTES_PER_BLOCK:
        stages -= 1
    return cfg if stages == cfg.num_stages else cfg._replace(num_stages=stages)


#: Rows held as two pieces of one width of at most this many columns sum each row statistic in one reduction of the
#: pieces' element-wise sums (``norm_joint_pieces``).
NORM_JOINT_PIECES_MAX = 1024


def norm_joint_pieces(cfg: NormConfig) -> bool:
    """Whether rows held as two pieces of one width form each row sum in one reduction of the pieces' element-wise
    sums rather than one a piece: on pieces of at most NORM_JOINT_PIECES_MAX columns, and on rows held as loaded.
    Short rows so put half as many lanes on a row (bf16 256 as 128 + 128: 16 lanes of 16 elements, one row a thread,
    where one piece of 256 puts 32 lanes of 8, two rows a thread): H200, session 50, one piece -> two joint ones, LN
    forward 256 61.7 -> 62.7, RMS forward 256 64.9 -> 66.3, LN backward 128 34.9 -> 37.0% of copy. Wide pieces, a
    reduction a piece -> joint (session 52): LN forward 16384 as 8192 + 8192 94.4 -> 92.0, LN backward 14336 63.8 ->
    59.9; but held as loaded, LN forward 32768 as 16384 + 16384 capped at 64 registers 86.3 -> 90.5, with one_round
    87.5 -> 93.8."""
    return cfg.block_n2 == cfg.block_n and (cfg.block_n <= NORM_JOINT_PIECES_MAX or cfg.hold_loaded)


def norm_bwd_pair_sums(cfg: NormConfig) -> bool:
    """Whether the LayerNorm backward forms its two row sums (Σg·x̂, Σg) in one reduction (one exchange across
    warps) rather than two: on whole rows of at most 4096-wide tiles, and on rows held as two pieces. H200, session
    9 (NOTES.md): +3 to +4 points at N = 768–4096 and 12288; at one 8192- or 16384-wide tile it spilled more (16384:
    63.5 -> 55.3%); session 52, the held 16384 row: 78.0 -> 75.5 (both 128 registers, 8 bytes spilled)."""
    return not cfg.chunked and (cfg.block_n <= 4096 or cfg.block_n2 > 0)


def norm_bwd_sums_via_scratch(cfg: NormConfig, elem_size: int) -> bool:
    """Whether the whole-row backward sums its dw/db accumulators over the tile's rows through scratch rows in global
    memory (each thread stores its elements, a barrier, each thread adds a column's rows) rather than ``tl.sum``: where
    the warps split the tile's rows, that is where a piece's row is narrower than the warps' 16-byte vectors
    (block_n · elem_size < num_warps · 512 bytes). There Triton 3.6 reduces across warps through shared memory laid out
    [column][warp]: a lane's 4 or 8 consecutive columns put the lanes' words (columns a lane) × (warps along the
    rows) apart, so the stores and loads of the exchange conflict up to 32 ways (32 at 32 × 256 bf16 on 16 warps:
    sm_90 SASS; Nsight Compute, H200, session 50, (49152, 256) bf16 RMS backward: 1.05 M conflicted wavefronts, all
    in that epilogue, about 8000 shared-memory cycles an SM after the loop). Through scratch (H200, the suites'
    harness, GPU time, % of copy): bf16 LN 256 46.0 -> 55.4, 512 66.6 -> 70.7, 128 37.1 -> 38.7; RMS 256 53.8 ->
    60.0, 512 71.5 -> 73.4; fp32 LN 256 56.9 -> 63.9; RMS 128 level once its entry prefetched (NOTES.md)."""
    if cfg.chunked or not 1 < cfg.block_m <= NORM_SCRATCH_SUM_MAX_ROWS:
        return False
    narrowest = min(cfg.block_n, cfg.block_n2 or cfg.block_n)
    return narrowest * elem_size < cfg.num_warps * 512


#: The most rows a tile's scratch column sums take (:func:`norm_bwd_sums_via_scratch`): the kernel adds them in an
#: unrolled loop, and the tiny-N heuristic tiles of up to NORM_BWD_TILE rows took ptxas over ten minutes a
#: specialization (the sm_90 gate, session 50). The measured entries' tiles have at most 64.
NORM_SCRATCH_SUM_MAX_ROWS = 64


#: Column blocks (programs) aimed at when summing the backward's partial rows, and the narrowest block (16 fp32
#: = 64 bytes per partial row). The sum is latency-bound at small N: one program per 256 columns left N = 256 on a
#: single program walking 132 partial rows in 9 dependent steps, 17 us against the backward kernel's 12
#: (profile_host, H200, NOTES.md session 6).
NORM_PARTIAL_SUM_BLOCKS = 128
NORM_PARTIAL_SUM_MIN_COLS = 16


@functools.cache
def norm_partial_sum_config(n: int, g: int) -> NormPartialSumConfig:
    """Tile for summing the ``[g, n]`` backward partials over ``g``: about NORM_PARTIAL_SUM_BLOCKS column blocks
    (16 to 2048 wide), tiles of ~4096 elements (all of g in one step when g·block_c <= 4096)."""
    want = _next_pow2(-(-n // NORM_PARTIAL_SUM_BLOCKS))
    block_c = min(_next_pow2(n), max(NORM_PARTIAL_SUM_MIN_COLS, min(2048, want)))
    block_g = min(_next_pow2(g), max(1, 4096 // block_c))
    return NormPartialSumConfig(block_g, block_c, 4)


def norm_strategy_boundaries(elem_size: int) -> list[int]:
    """The first N of each new strategy or tile shape (tests run just past every boundary)."""
    acc = 8 if elem_size == 8 else 4
    edges = {NORM_FWD_FUSED_MAX[acc] + 1, NORM_BWD_FUSED_MAX[acc] + 1,
             NORM_FWD_TILE + 1, NORM_BWD_TILE + 1, NORM_FWD_CHUNK[acc] + 1, NORM_BWD_CHUNK[acc] + 1,
             NORM_PARTIAL_SUM_MIN_COLS * NORM_PARTIAL_SUM_BLOCKS + 1}  # the partial sum's blocks pass 16 columns
    tables = _tables(elem_size)
    if tables is not None:  # where the measured tables switch to chunked or split rows, and from a 3P/4 entry to P's
        tuned, split_tuned = tables
        for kind in ("fwd", "bwd"):
            for is_rms in (False, True):
                chunked = [n for (k, r, n), v in tuned.items() if k == kind and r == is_rms and v[2]]
                if chunked:
                    edges.add(_first_row(min(chunked)))
                split = [n for (r, n), v in split_tuned.items() if r == is_rms and v is not None]
                if kind == "bwd" and split:  # the first split rows
                    edges.add(_first_row(min(split)))
        for n in [n for _, _, n in tuned] + [n for _, n in split_tuned]:
            if n & (n - 1):  # a 3P/4 key, then P's entry
                edges.update((_first_row(n), n + 1))
        # the first rows read in 16-byte vectors past each least entry's first piece (odd rows: next_pow2's piece)
        edges.update(v[1] + 8 for v in tuned.values() if isinstance(v[-1], dict) and "least_n2" in v[-1])
        if elem_size == 2:  # rows of exactly an exact entry's N, and one shorter
            edges.update(m for _, _, n in NORM_TUNED_EXACT for m in (n - 1, n))
    if elem_size == 2:  # odd rows take the scalar rows' configs in their ranges: the even row after each, and the edges
        ranges = scalar_row_ranges()
        edges.update(e + 1 for e in list(edges) if e % 2 and any(r.low <= e <= r.high for r in ranges))
        for rows in ranges:
            edges.update((rows.low - 1, rows.low, rows.high, rows.high + 1))
    for rows in vector_row_ranges(elem_size):  # the vector rows' ranges: their edges, first aligned rows in and past
        edges.update((rows.low - 1, rows.low, _aligned_row(rows.low), rows.high, rows.high + 1,
                      _aligned_row(rows.high + 1)))
        if rows.config.block_n2:  # and the first row past a two-piece config's least second piece
            edges.add(_aligned_row(rows.config.block_n + rows.config.block_n2 + 1))
    return sorted(edges)


def vector_row_ranges(elem_size: int) -> list[RowRange]:
    """NORM_FWD_VECTOR_ROWS' ranges for inputs of ``elem_size`` bytes, both norms."""
    return [rows for is_rms in (False, True) for rows in NORM_FWD_VECTOR_ROWS.get((elem_size, is_rms), ())]


def _aligned_row(n: int) -> int:
    """The first row of at least ``n`` elements read in 16-byte vectors in 16-bit and float32 (N a multiple of 8)."""
    return -(-n // 8) * 8


def _first_row(key: int) -> int:
    """The shortest row a measured table's key ``norm_tuned_key`` gives: P/2 + 1 for a power of two P, 2P/3 + 1
    for a 3P/4 key (its rows run from P/2 + 1 to 3P/4)."""
    return key * 2 // 3 + 1 if key & (key - 1) else key // 2 + 1


# ----------------------------------------------------------------------------- BatchNorm
# One plan per (layout, C, V, dtypes, kind): channel blocks of CB, tiles [CB, BS], items of VPI inner
# indices, groups of CG channels sized to a fraction of L2 so that the fused kernels' second read of a
# group hits L2. See fastnorm/kernels/batch_norm.py for the decomposition and benchmarks/NOTES.md for
# the measurements behind the numbers.


class BatchNormPlan(NamedTuple):
    cb: int  # channels per tile / item
    bs: int  # inner indices per tile
    vpi: int  # inner indices per item (multiple of bs)
    split: int  # items per channel block
    msub: int  # items merged per sub-group
    nsub: int  # sub-groups per channel block
    cg: int  # channels per group (multiple of cb)
    groups: int
    ncb_g: int  # channel blocks per group
    lag: int  # fused schedule: apply(g - lag) follows stats(g)
    ms: int  # merge tile width (partials per step)
    num_warps: int


#: Elements per tile: forward (one stream), backward (two or three streams), and the backward's sums pass (x and dy
#: read, nothing written; see BN_SUMS_WAVE).
BN_TILE = {"fwd": 4096, "bwd": 2048, "sums": 4096}
#: Target elements per item, by kind (the statistics pass excepted: BN_STATS_WAVE): fused training kernels keep
#: items small so that the window of items in flight stays well inside L2; one-pass kernels take larger items.
BN_ITEM = {"fused": 32768, "stream": 65536}
#: Channels per tile in the channels-last layout (a row segment of cb·elem_size bytes), by kind. Measured
#: on the H200 (NOTES.md, session 3): 32 for the statistics pass (channels-last training forward +1..4 points
#: of copy), 64 for the one-pass kernels (32 cost the evaluation forward 8 points at 56²); the backward's sums pass
#: takes the statistics pass's 32 (measured with its one-wave plan, session 15), widened to BN_CL_SUMS' "row_bytes".
BN_CL_CB = {"fused": 32, "stream": 64, "sums": 32}
#: The channels-last one-pass kernels (the apply: evaluation, the training forward's second launch, SyncBatchNorm's
#: forward; the dx pass; the frozen backward) widen their channel block to rows of at least this many bytes of x (or all
#: C): 16-bit x takes 128 channels a tile, 4- and 8-byte x keep BN_CL_CB["stream"]'s 64. Measured on the H200 (NOTES.md,
#: session 48; CUDA-graph replays, % of copy, two rounds, 64 -> 128 channels): bf16 evaluation 256×256×28² 84.3 -> 86.7,
#: 256×1024×14² 85.5 -> 87.6, 8×256×128² 81.5 -> 83.2, 2×256×200×304 78.2 -> 80.2, 128×2048×7² 67.6 -> 68.9; frozen
#: backward of dx alone 80.2 -> 84.7, 80.2 -> 83.8, 79.1 -> 82.0, 75.5 -> 78.5, 63.4 -> 63.6; training forward and
#: backward +0.5..-0.2. fp32 at 128 lost (frozen backward 32×512×28² 78.1 -> 75.4, 128×2048×7² 79.0 -> 77.8): 256 bytes
#: for both. The BatchNorm suite (one run, GPU time): bf16 channels-last evaluation 256×256×28² 84.6 -> 86.8,
#: 256×1024×14² 85.8 -> 87.0, 2×256×200×304 78.1 -> 80.2, 8×256×128² 81.6 -> 80.8; its frozen backward (dx, dγ and dβ:
#: the row-strided frozen pass at these sizes, not a one-pass plan) within -0.2..+0.8.
BN_CL_STREAM_ROW_BYTES = 256
#: The channels-last tile sums pass's own plan (None: the generic BN_CL_CB["sums"], BN_TILE["sums"], BN_SUMS_WAVE):
#: 4- and 8-byte x and small tensors since session 46 (16-bit x from BN_SUMS_ROWS' size runs row-strided).
#: "row_bytes": its tiles read rows of at least this many bytes of x (and of dy), or all C: 16-bit x takes 64 channels
#: a tile, where 32 were half a 128-byte line. Measured on an H100 (NOTES.md, session 26; training backward, CUDA-graph
#: replays, % of copy, 32 -> 64 channels): bf16 8×256×128² 47.4 / 49.7 -> 52.5 / 52.5, 256×256×28² 51.9 -> 54.9,
#: 256×1024×14² 54.0 -> 55.8, 2×256×200×304 50.3 -> 51.3, 256×64×56² 54.8 / 54.9 -> 55.1 / 55.1, 128×2048×7² 38.7 ->
#: 38.7; fp32 at 64 lost (256×64×56² 58.1 -> 57.5, 8×256×128² 56.9 -> 56.3, 128×2048×7² 51.3 -> 50.6): it keeps 32,
#: 128 bytes too. The statistics pass at 64: bf16 8×256×128² 47.0 -> 48.8, but 56² 55.1 -> 53.7 and 2×256×200×304 48.4
#: -> 47.4; it keeps 32. "tile", "wave": tiles of this many elements (2048: 4 warps) and up to this many items per
#: multiprocessor, against the generic 4096 (8 warps) and 2 (session 34; training backward, graph replays, % of copy,
#: two rounds; H200, calls 7-8: bf16 128×2048×7² 40.7 / 40.5 -> 42.1 / 41.6, 256×64×56² 52.5 -> 53.1, fp32
#: 128×2048×7² 50.7 / 50.1 -> 51.8 / 51.1, 32×512×28² 49.9 / 50.0 -> 51.4 / 51.0, 256×64×56² 58.8 / 57.6 -> 59.0 /
#: 57.9, 8×256×128² 57.4 -> 57.7; H100, call 10: bf16 56² 55.8 -> 56.1, 128×2048×7² 47.7 -> 49.4, fp32 56² 58.3 ->
#: 58.5, 8×256×128² 57.6 -> 58.1, 128×2048×7² 54.3 -> 55.5, 32×512×28² 54.2 -> 55.1). The NCHW sums keep the generic
#: plan: the same settings lost there at bf16 8×256×128² (54.0 -> 51.5) and 56² (57.2 -> 56.6), H200 call 8. Tiles of
#: 2048 alone gained less, 1 item an SM or 4 were lower (calls 6-7).
BN_CL_SUMS: dict[str, int] | None = {"row_bytes": 128, "tile": 2048, "wave": 3}
#: Largest channel block for NCHW items that gather several small channels, and the smallest in the
#: NCHW row layout (S <= BN_ROW_LANES_MAX: a channel's run per image is at most 64 elements, so one
#: channel per tile reads many short runs; adjacent channels' runs are adjacent in memory).
BN_NCHW_MAX_CB = 16
BN_NCHW_ROW_MIN_CB = 4
#: The smallest channel block of the one-pass forward (evaluation, the training forward's apply pass) in NCHW (either
#: layout) when it divides the channel count: a tile of one channel reads a run of S elements per image, one image's
#: worth of addresses apart; four adjacent channels make each run 4·S contiguous elements. Measured on the H200
#: (NOTES.md, session 12; evaluation forward, % of copy): 14² bf16 72.6 -> 82.7, fp32 81.4 -> 88.6; 28² fp32 (32
#: images) 73.5 -> 78.3; training forward 14² 46.6 -> 50.3; runs of >= 3136 elements within 2 points either way. 8
#: and 16 lost at 7² and 28² (16: fp32 7² evaluation 53 -> 20). Channel counts it does not divide lost (a review's
#: A/B: bf16 64×6×112² 43.1 -> 40.7, 32×3×224² 44.0 -> 43.0): their last block is partly masked. Not the one-pass
#: backward kinds: at 28² their tiles of 4 channels lost 2-3 points (dx alone and the frozen backward with its sums,
#: fp32 and bf16), at 14² gained 1-2.
BN_NCHW_STREAM_MIN_CB = 4
#: Items per multiprocessor aimed at (items shrink for small tensors), by kind, and warps per 4096-element
#: tile. 8 for the fused kinds (measured when the statistics pass took it too: training forward +1..3 points, the
#: most at 7²); the statistics pass now takes BN_STATS_WAVE. "frozen": the frozen backward with dγ, dβ in one pass (the
#: tile kernel: channels-last, and NCHW where BN_FROZEN_FLAT does not take it), 8 with its loop 4 stages deep
#: (BN_LOOP_STAGES["frozen"]). Measured on the H200 (NOTES.md, session 30, call 1; frozen backward with dγ, dβ,
#: CUDA-graph replays, % of copy; 16 items an SM and 3 stages -> 8 / 3, 16 / 4, 8 / 4): bf16 channels-last 128×2048×7²
#: 41.4 -> 48.7 / 42.8 / 49.3, fp32 channels-last 8×256×128² 75.2 -> 75.1 / 83.3 / 83.5, bf16 channels-last 56² 76.7
#: -> 76.8 / 78.1 / 78.0, 256×1024×14² 72.4 -> 72.5 / 73.2 / 73.4, NCHW 8×256×128² 77.9 -> 78.0 / 78.6 / 78.4; bf16
#: channels-last 8×256×128² 65.6 -> 65.5 / 63.7 / 63.7 (the 4 stages). NCHW of few images (call 6, 16 / 3 -> 8 / 4):
#: bf16 2×256×200×304 77.6 -> 74.7, 16×1024×14² 21.9 -> 20.8, 8×128×56² 27.6 -> 30.7, others within 0.3.
BN_ITEMS_PER_SM = {"fused": 8, "stream": 16, "frozen": 8}
#: (elements, items per SM): the one-pass kernels (evaluation forward, the apply, dx and frozen backward passes) over
#: tensors this large cut this many items per SM instead. Measured on the H200 (NOTES.md, session 11): 32 items
#: per SM at 2^25-5·10^7 elements, evaluation forward +1..4 points of copy (NCHW 56² 85 -> 88, 128² 79 -> 83),
#: frozen backward +1..2; at 1.3·10^7 (7²) the items got too small (evaluation forward 64 -> 55).
BN_STREAM_LARGE = (1 << 25, 32)
#: The training backward's dx pass (x and dy read, dx written; kind "dx") over tensors of BN_STREAM_LARGE[0] elements
#: or more takes tiles of this many elements (8 warps) instead of BN_TILE["bwd"]. Measured on the H200 (NOTES.md,
#: session 15; training backward, CUDA-graph replays, two runs, % of copy): bf16 NCHW 14² 44.9 / 45.0 -> 49.6 / 49.4,
#: the other large shapes within -0.6..+0.5. Not the frozen dx-only pass (same kernel, dy alone read), where bf16 CL
#: 56² and 8×256×128² lost 1.5-1.7 points; nor smaller tensors, whose one-launch backward lost up to 7 points.
BN_DX_LARGE_TILE = 4096
#: The one-pass forward (evaluation, the training forward's second launch, SyncBatchNorm's collective path; not
#: ``apply_peers``, whose programs each take part in the symmetric-memory exchange) over tensors of BN_APPLY_FLAT[0]
#: elements or more of 4-byte x, or 16-bit x in NCHW, runs as a flat pointwise kernel (``_bn_apply_flat_kernel``):
#: BN_APPLY_FLAT[1] consecutive elements and BN_APPLY_FLAT[2] warps a program, the channel of element i as (i // S) % C
#: or i % C with S and C compiled in — torch.compile's form — each program forming the per-channel values of the
#: channels its block touches (at most BN_APPLY_FLAT[3] of them: NCHW runs of S >= BLOCK / (window - 2) elements;
#: channels-last rows of at most that many channels) and gathering each element's. Measured on the H200 (NOTES.md,
#: session 19; evaluation, kernels only, % of copy, the tiled apply -> a flat kernel with the per-channel values
#: precomputed, two runs): fp32 NCHW 14² 91.1 / 90.2 -> 94.3 / 94.3, 7² (128 images) 60.9 / 62.8 -> 80.3 / 78.1, 28²
#: 94.1 / 93.7 -> 94.6 / 95.2, 128² 89.8 / 89.7 -> 90.7 / 91.0, 56² 95.2 / 94.7 -> 94.4 / 94.9; fp32 channels-last 56²
#: 89.7 / 90.0 -> 95.7 / 96.0, 28² 91.5 -> 95.2 / 95.7, 128² 89.4 / 88.9 -> 92.5 / 92.0; bf16 NCHW 56² 88.0 / 87.9 ->
#: 91.2 / 92.2, 14² 82.4 / 82.0 -> 90.4 / 90.8. Not bf16 channels-last (56²: 85.7 / 85.0 -> 83.2 / 83.2) nor 2048 or
#: 4096 elements a program (within 2 points of 1024 for fp32, 4-9 below for bf16); invstd formed per element from the
#: variance lost 10-25 points, and the per-channel values in a launch of their own (a 3-5 us step before the pass) lost
#: up to 7 at bf16 NCHW. Smaller tensors keep the tiled kernel. As built (call 14, H100, CUDA-graph replays, tiled ->
#: flat): fp32 evaluation NCHW 7² 71.1 -> 84.7, 14² 93.5 -> 96.3, CL 56² 94.9 -> 96.4; bf16 NCHW 14² 87.7 -> 92.2, 56²
#: 90.8 -> 92.6, 8×256×128² 87.6 -> 86.8; training forward +0.2..+4.8.
BN_APPLY_FLAT = (1 << 23, 1024, 4, 256)
#: The dx pass (the training backward's second launch; the frozen dx-only pass; also the stage API's ``backward_dx``
#: and SyncBatchNorm's dx pass where it runs apart from its exchange, not measured there) as a flat pointwise kernel
#: (``kernels.batch_norm._bn_bwd_dx_flat_kernel``), on the terms of BN_APPLY_FLAT: tensors of BN_DX_FLAT[0] elements or
#: more of 4-byte x, or 16-bit x in NCHW, BN_DX_FLAT[1] elements and BN_DX_FLAT[2] warps a program, at most
#: BN_DX_FLAT[3] channel slots — channels-last rows only in the frozen pass; None: the tile kernel everywhere. The
#: tile kernel stores NCHW rows of 49 fp32 one element at a time (no 16-byte alignment). Measured (NOTES.md, session
#: 28; H200, CUDA-graph replays, % of copy, tile -> flat, tensors of 1.6M-103M elements): frozen dx fp32 NCHW
#: 128×2048×7² 64.4 -> 83.7, bf16 48.5 -> 71.3, bf16 256×1024×14² 73.6 -> 90.6, fp32 32×256×14² 39.1 -> 41.3, fp32
#: channels-last 256×64×56² 88.9 -> 94.9, +0.5..+23 at each of 19 tensors; training backward fp32 NCHW 7² 37.6 ->
#: 44.2, bf16 28.7 -> 32.7, bf16 256×1024×14² 50.1 -> 55.0, +0.5..+6.6 at each of 16 NCHW tensors, and in the
#: BatchNorm suite +0.3..+6.6 at each of its 20 NCHW cells. Channels-last in training gained nothing: −1.5, −1.6,
#: +0.9 (bn_ab), −1.3..+1.6 at the suite's 8 fp32 cells, about 0 on average (its tile kernel already moves 16 bytes
#: an access). The H100 (session 28, 8 tensors): training backward NCHW fp32 7² 44.8 -> 51.4, bf16 35.6 -> 40.9, bf16
#: 256×1024×14² 53.2 -> 57.2, +0.3..+1.7 at 14² and 56²; frozen dx +1.4..+23.5 at NCHW, fp32 channels-last +1.5
#: (128²), −1.4 (14²). Smaller tensors (not measured) keep the tile kernel.
BN_DX_FLAT: tuple[int, int, int, int] | None = (1 << 20, 1024, 4, 256)
#: The frozen backward with parameter gradients (dx = w·invstd·g with Σg and Σg·x̂ in one pass: the "frozen" backward
#: of ``kernels.batch_norm.backward``) over NCHW x as the image-strided flat kernel (``_bn_bwd_frozen_flat_kernel``,
#: then ``_bn_frozen_sums_kernel`` adding its partial sums per channel), for 4-byte or 16-bit x of at least
#: "min_numel" elements and "min_images" images: blocks of "block" consecutive offsets of an image, "warps" warps a
#: program, each program one block in a share of the images, as many shares as make "per_sm" programs a
#: multiprocessor with at least "images" images a share (where there are as many), the loop over them pipelined
#: "stages" deep; at most "window" channel slots a block, and at least "min_per_sm" programs a multiprocessor (fewer
#: lost, session 30, call 7: at 32×256×14², 98 programs on 132 SMs, the training backward bf16 14.9 -> 12.6, fp32
#: 23.9 -> 22.2, the frozen backward bf16 16.2 -> 14.6; 32×2048×7², 196 programs, within 0.4). None: the
#: one-pass tile kernel everywhere, which reads NCHW runs of odd length one element at a time where the flat form
#: moves 16 bytes an access. Measured on the H200
#: (NOTES.md, session 29, calls 4-5; bn_ab frozen_params, CUDA-graph replays, % of copy, tile -> as set): bf16
#: 128×2048×7² 34.6 -> 56.8, 256×1024×14² 72.6 -> 85.0, 256×64×56² 82.2 -> 84.9, 32×512×28² 53.6 -> 59.6; fp32
#: 128×2048×7² 52.0 -> 73.2, 256×256×28² 88.9 -> 92.2. Lost at small batches, which "min_images" keeps on the tile
#: kernel: bf16 8×256×128² 78.7 -> 70.7, 2×256×200×304 77.6 -> 38.9 (a program's gathers and closing scan over 8 or 2
#: images). 8 programs an SM not pipelined: within a point of this at 14²-56², 2-4 below at 7²; 4 an SM not pipelined
#: lost up to 12 (too few bytes in flight); 2048-offset blocks of 8 warps no better.
BN_FROZEN_FLAT: dict[str, int] | None = {"min_numel": 1 << 20, "min_images": 32, "images": 16, "block": 1024,
                                         "warps": 4, "window": 256, "per_sm": 4, "stages": 3, "min_per_sm": 1}
#: The backward's sums pass (the two-launch training backward's first launch, SyncBatchNorm's local sums, the frozen
#: backward with dγ, dβ and no dx) over NCHW x of runs of at most this many elements through the frozen flat kernel
#: without its dx, on BN_FROZEN_FLAT's terms and plan; None: never. Measured on the H200 (NOTES.md, session 29, call
#: 7; training backward, CUDA-graph replays, % of copy, tile sums pass -> flat): bf16 128×2048×7² 32.4 -> 37.3, fp32
#: 44.1 -> 50.3, bf16 32×512×28² 39.9 -> 43.2, 256×1024×14² 55.5 -> 55.7, fp32 256×256×28² 59.2 -> 59.5; bf16
#: 256×64×56² (S = 3136) 56.6 -> 55.7, which the bound keeps on the tile pass (its tail kept in L2 for the dx pass).
BN_SUMS_FLAT: int | None = 1024
#: The two-launch training forward's apply takes its chunks (flat blocks) from the tensor's end down
#: (``kernels.batch_norm._pass_item``): the statistics pass's items end in their last images, so what it read last,
#: still in L2, is read first. Measured (NOTES.md, session 24; CUDA-graph replays, training forward, % of copy):
#: H200 +0.3..+2 at 50-200 MB NCHW tensors (fp32 32×512×28² 44.2 -> 46.2, bf16 256×256×28² 52.7 -> 53.4), −0.5 at
#: 2×256×200×304; H100 fp32 32×512×28² 50.8 -> 53.2, bf16 8×256×128² 52.9 -> 53.8. The backward's dx pass keeps the
#: ascending order: reversed it gained up to 2 points on the H200 but took 28% longer at bf16 32×64×147² on the H100
#: (100.7 -> 128.7 µs, not explained), and with each chunk's tiles descending too it lost 11% at 256×1024×14² (H200);
#: it reads from the end down only after the row-strided sums pass (BN_SUMS_ROWS, whose last reads are x's end).
BN_APPLY_REVERSE = True
#: Bytes of their inputs that the two-launch training passes' reductions (the forward's statistics, the backward's
#: sums) load ``evict_last``, at each item's end, so that the second launch, which reads them again, finds them in L2
#: (``kernels.batch_norm._kept``); 0: none. Those tiles load unpipelined (Triton 3.6's cp.async drops the hint), and
#: the forward over aligned rows (odd S) does without (both loops of an item then cost more than the hits save).
#: Measured on an H100 (NOTES.md, session 26; CUDA-graph replays, % of copy, 3 rounds, none -> 8 MB): training
#: backward bf16 NCHW 56² 55.8 -> 56.8, 28² 54.8 -> 55.5, 14² 52.3 -> 53.0, 8×256×128² 53.5 -> 54.7, 147² 48.5 ->
#: 49.1, channels-last 56² 53.8 -> 54.6, fp32 NCHW 32×512×28² 47.9 -> 49.4; training forward 56² 58.2 -> 59.0,
#: 128² 54.4 -> 55.1, channels-last 56² 54.0 -> 54.7, fp32 32×512×28² 53.1 -> 54.5, 28² and 14² within 0.3; the
#: same tiles unhinted gained nothing (the loads' hint is the gain: ~8 MB more of the second read from L2), and
#: 16-32 MB gained less (the unpipelined tail grows, the hits do not: ``benchmarks/scripts/l2_reuse.py``).
BN_KEEP_BYTES = 8_000_000
BN_WARPS = 8
#: The statistics pass (the training forward's first launch, the one-launch forward, SyncBatchNorm's statistics)
#: as one wave of at most this many items per multiprocessor, each as large as that allows: its programs (8 warps,
#: <= 64 registers, three prefetch buffers of 8-16 KB) fit four to an SM, so every item starts at once and none is
#: left for a tail. Measured on the H200 (NOTES.md, session 11): bf16 training forward +2..6 points of copy
#: (NCHW 56² 50 -> 53, 14² 40 -> 46, 7² 24 -> 28, CL 7² 26 -> 32) against 8 items per SM of at most 32K elements.
BN_STATS_WAVE = 4
#: The statistics pass's items per multiprocessor on devices that measured better with another count than
#: BN_STATS_WAVE: by a part of the device's name (the longest found wins, as in NORM_TUNED_BY_DEVICE), then the
#: layout — "flat" (channels-last), "runs" (NCHW read as runs of S), "rows" (the NCHW row layout, S <=
#: BN_ROW_LANES_MAX); a layout not listed takes BN_STATS_WAVE. Measured on an H100 (NOTES.md, session 20; training
#: forward, report timing, % of copy, 4 -> 2 items): channels-last bf16 56² 53.3 -> 54.7, 7² 39.7 -> 40.5, fp32 56²
#: 60.1 -> 60.8, 128² 56.5 -> 58.2, 7² 50.6 -> 52.7; NCHW bf16 56² 58.2 -> 58.2, 14² 56.5 -> 57.3, 32×512×28² 40.8 ->
#: 44.4, fp32 28² 62.1 -> 62.7, 32×512×28² 50.2 -> 51.9; the row layout lost (bf16 128×2048×7² 39.9 -> 33.8: its
#: channel blocks grow to fit fewer items) and keeps 4; 1 item or 3 were lower. Not measured: SyncBatchNorm's
#: statistics and the one-launch forward, which take the same plan. On the H200 (session 32, call 4; CUDA-graph
#: replays, % of copy, 2 rounds, 4 -> 2 items), channels-last: statistics bf16 56² 46.1 -> 48.5, 256×256×28² 41.8 ->
#: 50.2, 128×2048×7² 26.8 -> 27.2, fp32 8×256×128² 58.5 -> 63.7; training forward 48.3 -> 49.2, 46.1 -> 50.0, 32.8 ->
#: 32.9, 54.8 -> 56.6; NCHW lost (training forward 56² 56.1 -> 55.2, 14² 55.2 -> 54.0) and keeps 4. An override of
#: BN_STATS_WAVE (a test, a tuning script) holds on such a device only with this table cleared too
#: (``BN_STATS_WAVE_BY_DEVICE={}``; the tests do).
BN_STATS_WAVE_BY_DEVICE: dict[str, dict[str, int]] = {"H100 80GB HBM3": {"flat": 2, "runs": 2}, "H200": {"flat": 2}}
#: The backward's sums pass (the first launch of the two-launch training backward; SyncBatchNorm's local sums) as
#: one wave of this many items per multiprocessor, tiles of BN_TILE["sums"] elements (8 warps). Measured on the
#: H200 (NOTES.md, session 15; training backward, CUDA-graph replays, % of copy) against the one-pass kernels' plan
#: (up to 32 items per SM of 2048-element tiles): bf16 NCHW 56² 52.6 -> 53.9, 28² 51.2 -> 52.7, 14² 42.3 -> 45.0,
#: CL 56² 48.7 -> 50.4, fp32 CL 56² 52.1 -> 56.2, NCHW 28² 56.4 -> 57.0; 3 or 4 items per SM, or 2 of 2048-element
#: tiles, within a point of it or below. Channels-last sums take BN_CL_SUMS' instead.
BN_SUMS_WAVE = 2
#: NCHW inputs with S <= this many (padded to a power of two) lanes per image use the row layout
#: (index = n·L + s: shifts and masks instead of a division per element). Measured on the H200: better
#: at 7x7 (S=49), worse than the division at 14x14 (S=196: training forward 12% vs 25% of copy).
BN_ROW_LANES_MAX = 64
#: Training passes in one launch (ticket queue; statistics items, then apply/dx items that wait for their group;
#: True) or two (statistics/sums kernel, then a one-pass kernel; False). Two, measured: the forward everywhere (the
#: H200); the backward too (the H200, NOTES.md session 27; CUDA-graph replays, % of copy, one launch -> two, at 15
#: tensors of 1.6M-12.8M elements where one launch had been the rule up to 2^24 elements): bf16 NCHW 128x2048x7² 22.9
#: -> 28.7, CL 31.6 -> 38.4, fp32 NCHW 30.7 -> 37.5, 32x256x14² bf16 9.7 -> 14.4, fp32 16.9 -> 22.7, 8x2048x7² 6.4 ->
#: 7.5 — faster at every one (that rule was measured with host time in the figures); the H100 the same (session 28,
#: one launch -> two with the tile dx pass, 8 tensors): fp32 NCHW 7² 37.8 -> 44.8, bf16 30.4 -> 35.6, fp32 32x256x14²
#: 21.1 -> 28.3, CL 22.8 -> 29.9, fp32 256x64x56² 57.4 -> 59.3. The one-launch kernel stays for SyncBatchNorm's
#: backward with its exchange.
BN_TRAIN_FUSED = False


def batch_norm_flat_window(c: int, s: int, flat: bool, block: int) -> int:
    """A flat pointwise kernel's channel slots per program: every channel's (channels-last rows), or the runs of S
    elements that a block of ``block`` elements can touch (NCHW)."""
    return _next_pow2(c) if flat else _next_pow2(block // s + 2)


#: How many distinct NCHW spatial sizes (S > 64) a process compiles into the BatchNorm kernels; later sizes run with S
#: as a kernel argument and only its power-of-two factor (up to 16) compiled in, one compile per factor
#: (``kernels.batch_norm._spatial``; bitwise the same results), the flat apply kernel with S and C both arguments. A
#: ResNet trains on 4-5 sizes; a detector fed images of ever new sizes compiled every kernel again for each (17
#: image sizes × 4 stages: 60 specializations in evaluation, 180 in training; 8 and 33 as arguments). Speed of the
#: argument form: see NOTES.md, session 22.
BN_SPATIAL_COMPILED = 32


def batch_norm_apply_flat(numel: int, x_size: int, flat: bool, c: int, s: int) -> bool:
    """Whether the one-pass forward over ``numel`` elements of ``x_size`` bytes, ``c`` channels of runs of ``s``
    (``flat``: channels-last rows) takes the flat pointwise kernel (BN_APPLY_FLAT: measured for 4-byte x, and 16-bit x
    in NCHW; a window of at most BN_APPLY_FLAT[3] channel slots)."""
    return (numel >= BN_APPLY_FLAT[0] and (x_size == 4 or (x_size == 2 and not flat))
            and batch_norm_flat_window(c, s, flat, BN_APPLY_FLAT[1]) <= BN_APPLY_FLAT[3])


def batch_norm_dx_flat(numel: int, x_size: int, flat: bool, c: int, s: int, train: bool) -> bool:
    """Whether the dx pass over ``numel`` elements of ``x_size`` bytes (``flat``: channels-last rows; ``c`` channels
    of runs of ``s``; ``train``: the training backward's, else the frozen dx-alone pass) takes the flat pointwise
    kernel (BN_DX_FLAT; channels-last rows only in the frozen pass)."""
    if BN_DX_FLAT is None or (flat and train):
        return False
    min_numel, block, _, max_window = BN_DX_FLAT
    return (numel >= min_numel and (x_size == 4 or (x_size == 2 and not flat))
            and batch_norm_flat_window(c, s, flat, block) <= max_window)


class ImageShares(NamedTuple):
    """How the image-strided frozen kernel cuts NCHW x (``batch_norm_image_shares``)."""

    block: int  # image offsets a block
    blocks: int  # blocks an image
    per_program: int  # images a program
    shares: int  # programs a block: shares of the images
    window: int  # channel slots a block


@functools.cache
def batch_norm_image_shares(n: int, c: int, s: int, sms: int) -> ImageShares:
    """BN_FROZEN_FLAT's cut of NCHW x of ``n`` images, ``c`` channels of runs of ``s``, on ``sms`` multiprocessors: as
    many shares of the images as make "per_sm" programs a multiprocessor (rounded up: rounded down to at most one
    wave, the frozen backward lost up to 10 points of copy, NOTES.md, session 30), with at least "images" images a
    share where there are as many. Cached: the rule and the pass both ask for it on every call."""
    f = BN_FROZEN_FLAT
    block = f["block"]
    blocks = _cdiv(c * s, block)
    shares = min(_cdiv(sms * f["per_sm"], blocks), max(1, n // f["images"]))
    per_program = _cdiv(n, shares)
    return ImageShares(block, blocks, per_program, _cdiv(n, per_program), batch_norm_flat_window(c, s, False, block))


def batch_norm_frozen_flat(numel: int, x_size: int, flat: bool, c: int, s: int, sms: int,
                           sums_only: bool = False) -> bool:
    """Whether the frozen backward with parameter sums (``sums_only``: the sums pass, BN_SUMS_FLAT's runs) over
    ``numel`` elements of ``x_size`` bytes (``flat``: channels-last rows; ``c`` channels of runs of ``s``) on ``sms``
    multiprocessors takes the image-strided flat kernel (BN_FROZEN_FLAT)."""
    if BN_FROZEN_FLAT is None or flat or x_size not in (2, 4):
        return False
    if sums_only and (BN_SUMS_FLAT is None or s > BN_SUMS_FLAT):
        return False
    f = BN_FROZEN_FLAT
    if numel < f["min_numel"] or numel // (c * s) < f["min_images"]:
        return False
    cut = batch_norm_image_shares(numel // (c * s), c, s, sms)
    return cut.window <= f["window"] and cut.blocks * cut.shares >= f["min_per_sm"] * sms


#: The most channel lanes a row-strided tile takes (``batch_norm_row_shares``): a wider per-channel vector (its shift,
#: its sums) changes layout through shared memory, which the sm_90 gate refuses (tiles of 2048 over C > 1024).
BN_ROWS_WIDTH_MAX = 1024

#: The row-strided passes' lanes (BN_FROZEN_ROWS, BN_STATS_ROWS, BN_SUMS_ROWS): ranges (lo, hi, lanes) of channel
#: counts whose tiles take at most ``lanes`` channels (several channel blocks a share); elsewhere the channels' power of
#: two up to BN_ROWS_WIDTH_MAX. At C = 256 tiles of 8 rows × 256 lanes stall on shared memory: Nsight Compute (NOTES.md,
#: session 45, calls 2-3; H200, bf16 statistics pass, the same 392 programs, requests and DRAM bytes as at 256×64×56²)
#: 44.1 µs at 256×256×28² against 33.2 at 256×64×56², short-scoreboard and MIO-throttle stalls 0.98 and 0.28 per
#: issue against 0.49 and 0.03; with 64 lanes 33.8 µs. Measured (call 4, graph replays, % of copy, two rounds; bf16
#: channels-last): training forward (256 lanes of the tile kernel -> these rows) 8×256×128² 45.1 -> 46.3, 256×256×28²
#: 50.0 -> 51.9, 2×256×200×304 44.0 -> 46.5, fp32 56.6 -> 56.6 and 60.2 -> 60.1; frozen backward (1024-lane rows ->
#: 64) 71.4 -> 76.0, 78.7 -> 82.1, 69.9 -> 75.1, fp32 87.2 -> 87.0, 90.4 -> 90.1. 64 lanes at C = 512 and 1024 were
#: mixed or lower: statistics bf16 32×512×28² 32.2 -> 34.2 but 256×512×28² 56.0 -> 55.7, fp32 32×512×28² 50.1 ->
#: 48.7; frozen bf16 32×512×28² 55.0 -> 57.0, 256×512×28² 88.5 -> 83.5, 256×1024×14² 82.3 -> 79.9. C between 129 and
#: 255 (also 256-lane tiles) was not measured.
BN_ROWS_LANES = ((256, 256, 64),)


#: The frozen backward with parameter sums over channels-last rows (R rows of C channels) as the row-strided kernel
#: (``_bn_bwd_frozen_rows_kernel``; its partial sums added per channel by ``_bn_rows_sums_kernel``): tiles of "block"
#: elements — "block" // W rows of W channels, W the channels' power of two up to "block" — "warps" warps a program,
#: each program one channel block in a share of the rows, as many shares as make "per_sm" programs a multiprocessor
#: with at least "steps" tiles a share where there are as many, the loop pipelined "stages" deep; tensors of at least
#: "min_numel" elements of 4-byte or 16-bit x. None: the tile kernel (BN_ITEMS_PER_SM["frozen"]), whose
#: channels-last items of 64 channels end after a few tiles each. The channels-last form of BN_FROZEN_FLAT: a lane
#: keeps one channel and its sums to the end. Measured on the H200 (NOTES.md, session 35, calls 3-4; CUDA-graph
#: replays, % of copy, two rounds; tile -> 3 an SM, 4 stages): bf16 256×64×56² 75.9 -> 82.5, 256×256×28² 76.4 ->
#: 77.7, 256×1024×14² 74.3 -> 82.4, 128×2048×7² 55.6 -> 61.0, 8×256×128² 62.5 -> 70.4, 32×512×28² 50.1 -> 55.6,
#: 2×256×200×304 66.8 -> 69.1; fp32 256×64×56² 86.4 -> 90.2, 256×256×28² 87.2 -> 89.8, 8×256×128² 83.3 -> 85.9,
#: 128×2048×7² 75.5 -> 78.4, 32×512×28² 70.1 -> 78.4. bf16 256×64×56²: the main pass 80.9 µs for 308 MB (3.8 TB/s),
#: the sums launch 3.8 µs (call 3). 4 an SM (0.2-2.6 points lower), 3 stages (0-3.4 lower), 2 or 6-8 an SM and tiles of
#: 2048 lower still. The same kernel as the training backward's sums pass (without dx; call 2, tiles of 1024) lost
#: 0.4-2.9 points of the training backward against the tile sums pass; session 46 measured it gaining for 16-bit x
#: (BN_SUMS_ROWS; tiles of 1024 too, less; why it lost in session 35 is not established). As its dx pass (dx = k1·g
#: + k2 + k3·x̂; call 4) it lost 0.4-2.2 against the tile dx pass: not built. Lanes: BN_ROWS_LANES.
BN_FROZEN_ROWS: dict[str, int] | None = {"min_numel": 1 << 20, "block": 1024, "warps": 4, "per_sm": 3, "stages": 4,
                                          "steps": 16}


class RowShares(NamedTuple):
    """How a row-strided pass cuts channels-last x (``batch_norm_row_shares``)."""

    width: int  # channel lanes a tile (a power of two)
    rows: int  # rows a tile
    blocks: int  # channel blocks: programs a share
    per_program: int  # rows a share (a multiple of ``rows``): the frozen pass's contiguous shares
    shares: int  # shares of the rows (the statistics and sums passes take each share's tiles grid-strided)


def batch_norm_rows_settings(rows_pass: str) -> dict:
    """The settings of the row-strided pass ``rows_pass``: "frozen" BN_FROZEN_ROWS, "stats" BN_STATS_ROWS, "sums"
    BN_SUMS_ROWS."""
    return {"frozen": BN_FROZEN_ROWS, "stats": BN_STATS_ROWS, "sums": BN_SUMS_ROWS}[rows_pass]


@functools.cache
def batch_norm_row_shares(r: int, c: int, sms: int, rows_pass: str = "frozen") -> RowShares:
    """The cut of ``r`` channels-last rows of ``c`` channels on ``sms`` multiprocessors by the row-strided pass
    ``rows_pass`` ("frozen": BN_FROZEN_ROWS, "stats": BN_STATS_ROWS, "sums": BN_SUMS_ROWS): tiles of the channels'
    power of two (at most "block") by as many rows as fill "block", as many shares of the rows as make "per_sm"
    programs a multiprocessor (rounded up), each at least "steps" tiles where there are as many; at most
    BN_ROWS_WIDTH_MAX lanes, or the lanes of a BN_ROWS_LANES range (lo, hi, lanes) holding ``c``."""
    f = batch_norm_rows_settings(rows_pass)
    lanes = next((n for lo, hi, n in BN_ROWS_LANES if lo <= c <= hi), BN_ROWS_WIDTH_MAX)
    width = min(_next_pow2(c), f["block"], lanes, BN_ROWS_WIDTH_MAX)
    rows = f["block"] // width
    blocks = _cdiv(c, width)
    shares = max(1, min(_cdiv(sms * f["per_sm"], blocks), r // (rows * f["steps"])))
    per_program = _cdiv(_cdiv(max(r, 1), shares), rows) * rows
    return RowShares(width, rows, blocks, per_program, _cdiv(max(r, 1), per_program))


#: The training forward's statistics over channels-last rows (its first launch) as the row-strided kernel
#: (``_bn_stats_rows_kernel``, its partials merged by ``_bn_rows_stats_kernel``), cut as BN_FROZEN_ROWS' keys say
#: (``batch_norm_row_shares``), where x has at least "min_numel" elements of 4 or 2 bytes and C lies in one of the
#: "channels" ranges (inclusive). None: the tile kernel (``_bn_fwd_fused_kernel``, MODE 2) everywhere. Measured
#: (NOTES.md, session 36; training forward, CUDA-graph replays, % of copy, two rounds, tile -> this): H200 (calls
#: 3-4) bf16 256×64×56² 49.2 -> 52.1, 128×64×112² 55.2 -> 57.2, 256×128×28² 39.5 -> 42.8, 256×128×56² 52.5 -> 55.5,
#: 256×512×28² 55.1 -> 55.7, 32×512×28² 31.6 -> 31.8, 256×1024×14² 51.8 -> 52.9; fp32 256×64×56² 59.4 -> 61.0,
#: 256×128×28² 52.9 -> 53.3, 32×512×28² 47.3 -> 49.7; the H100 (call 2) alike. Left out, where it lost on both
#: devices: C = 2048 (bf16 128×2048×7² 32.9 -> 31.1, fp32 48.3 -> 44.2), and C = 256 in tiles of 256 lanes (bf16
#: 8×256×128² 44.7 -> 41.8, 256×256×28² 50.2 -> 48.2, 2×256×200×304 43.7 -> 41.8), which stall on shared memory:
#: C = 256 is taken in tiles of 64 lanes since session 45 (BN_ROWS_LANES). The merge launch takes ~4 µs at every
#: size. Loading x's last 8 MB ``evict_last`` (BN_KEEP_BYTES, as the tile pass does) gained nothing (call 3: 0-0.8
#: points lower everywhere). Tiles of 1024 elements were up to 2.3 points lower at the channel counts taken (call 1,
#: H100: x is the kernel's only stream, so a tile is all its bytes in flight); 2 or 4 programs an SM, 6-8 stages,
#: tiles of 4096 no better (call 2).
BN_STATS_ROWS: dict | None = {"min_numel": 1 << 20, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16,
                              "channels": ((64, 128), (256, 256), (512, 1024))}


#: The backward's sums pass alone (the two-launch training backward's first launch, SyncBatchNorm's local sums, the
#: frozen backward with dγ, dβ and no dx) over channels-last rows of x of one of the "x_sizes" (bytes an element) as
#: the row-strided frozen kernel without its dx (``_bn_bwd_frozen_rows_kernel``), cut as BN_FROZEN_ROWS' keys say.
#: None: the tile kernel (BN_CL_SUMS) everywhere. Measured on the H200 (NOTES.md, session 46, calls 1-4; training
#: backward, CUDA-graph replays, % of copy, two rounds, tile -> this): bf16 256×64×56² 53.6 -> 54.9, 256×256×28² 53.1
#: -> 54.6, 8×256×128² 48.7 -> 50.7, 2×256×200×304 47.9 -> 50.0, 128×2048×7² 41.8 -> 43.1, 256×128×28² 44.8 -> 46.1,
#: 32×512×28² 38.7 -> 39.3, 256×512×28² 56.6 -> 56.6, 256×1024×14² 54.8 -> 54.5; fp32 lost (32×512×28² 51.1 -> 49.6,
#: 8×256×128² 56.8 -> 55.9, 128×2048×7² 51.3 -> 50.9) and keeps the tile pass. The sums pass alone, bf16 256×64×56²
#: with the suites' L2 flush (profiler, call 2): 65.1 µs -> 57.8 + 1.9 (the sums launch); the dx pass the same 68.2-
#: 68.6. Tiles of 1024 within a point either way (call 1), 3 stages 0.3-0.6 lower (call 2), 4 an SM within 0.5; each
#: share's last rows loaded ``evict_last`` for the dx pass (BN_KEEP_BYTES) left the dx pass as slow and the sums pass
#: 2 µs slower (call 2); the shares' sums added in the same launch (the last program of each 16 or 32 shares, then
#: the last group; no sums launch) lost 0.2-5.9 in the training and frozen backward (call 4). The pass walks the rows
#: grid-strided (the tiles j, j + SPLIT, …), and the training dx pass over the same x then takes its chunks from the
#: end down (``_pass_item``'s REV), reading first what the sums pass read last. Against contiguous shares and an
#: ascending dx pass (call 8): bf16 256×64×56² 54.2 -> 55.0, 256×256×28² 53.7 -> 54.6, 8×256×128² 50.1 -> 50.6,
#: 2×256×200×304 49.1 -> 50.0, 256×1024×14² 53.6 -> 54.4, 128×2048×7² 43.0 -> 44.3 (call 7 alike; the dx pass 70.1
#: -> 68.0 µs, flushed, 56²); either change alone within 0.3 (call 7). (Reversed under the tile sums pass, session 24
#: measured the H100 28% slower at NCHW 32×64×147²; the channels-last dx pass reversed is unmeasured on the H100.)
BN_SUMS_ROWS: dict | None = {"min_numel": 1 << 20, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16,
                             "x_sizes": (2,)}


def batch_norm_sums_rows(numel: int, x_size: int, flat: bool) -> bool:
    """Whether the backward's sums pass over ``numel`` elements of ``x_size`` bytes (``flat``: channels-last rows)
    takes the row-strided kernel (BN_SUMS_ROWS)."""
    return _row_strided(BN_SUMS_ROWS, numel, x_size, flat) and x_size in BN_SUMS_ROWS["x_sizes"]


def batch_norm_stats_rows(numel: int, x_size: int, flat: bool, c: int) -> bool:
    """Whether the training forward's statistics over ``numel`` elements of ``x_size`` bytes in ``c`` channels
    (``flat``: channels-last rows) take the row-strided kernel (BN_STATS_ROWS)."""
    f = BN_STATS_ROWS
    return _row_strided(f, numel, x_size, flat) and any(lo <= c <= hi for lo, hi in f["channels"])


#: ``_bn_rows_sums_kernel``'s tiles (and ``_bn_rows_stats_kernel``'s, which merges the statistics pass's partials;
#: session 36's call 2 tried 1024 elements there: −4 points at 128×2048×7²): at most "shares" shares added a step
#: (JB: the shares' power of two up to this), "elements" a tile (so CB = "elements" // JB channels a program, up to
#: the channels' power of two and "channels": the sums of more would change layout through shared memory, which the
#: sm_90 gate refuses): at BN_FROZEN_ROWS' 3 an SM (396 shares on 132 SMs) one step. Measured on the H200 (NOTES.md,
#: session 35, call 5; frozen backward, graph replays, % of copy, 256 shares of 16 channels a step -> this, with the
#: x̂ sum's mask select dropped too): bf16 CL 256×64×56² 83.2 -> 84.0, 256×256×28² 78.2 -> 79.0, 32×512×28² 53.9 ->
#: 55.1, fp32 CL 32×512×28² 76.3 -> 77.2, 128×2048×7² 75.7 -> 75.6 (the select alone: +0..+0.5).
BN_ROWS_SUMS_TILE = {"shares": 512, "elements": 4096, "channels": 256}


def batch_norm_rows_sums_tile(c: int, shares: int) -> tuple[int, int]:
    """(CB, JB) of ``_bn_rows_sums_kernel`` (and ``_bn_rows_stats_kernel``) over ``c`` channels of ``shares`` shares
    (BN_ROWS_SUMS_TILE)."""
    t = BN_ROWS_SUMS_TILE
    jb = min(_next_pow2(shares), t["shares"])
    return min(_next_pow2(c), max(1, t["elements"] // jb), t["channels"]), jb


def batch_norm_frozen_rows(numel: int, x_size: int, flat: bool) -> bool:
    """Whether the frozen backward with parameter sums over ``numel`` elements of ``x_size`` bytes (``flat``:
    channels-last rows) takes the row-strided kernel (BN_FROZEN_ROWS)."""
    return _row_strided(BN_FROZEN_ROWS, numel, x_size, flat)


def _row_strided(f: dict | None, numel: int, x_size: int, flat: bool) -> bool:
    """Whether a row-strided pass set up by ``f`` (BN_FROZEN_ROWS, BN_STATS_ROWS, BN_SUMS_ROWS) takes ``numel``
    elements of ``x_size`` bytes (``flat``: channels-last rows): on, rows, 4-byte or 16-bit x, from its "min_numel"."""
    return f is not None and flat and x_size in (2, 4) and numel >= f["min_numel"]


#: The reductions over NCHW x — the training forward's statistics (its first launch; SyncBatchNorm's statistics) and
#: the backward's sums (the two-launch backward's first launch; SyncBatchNorm's local sums) where not flat
#: (BN_SUMS_FLAT) — read each image's run of
#: a channel as an aligned row (``kernels.batch_norm._aligned_rows``: whole 16-byte vectors from the aligned element
#: at or before the run's start, the neighbouring runs' elements masked out) when x has elements of a size listed here
#: and S's power-of-two factor is at most the value; not where the launch's items are shared with a pass that writes
#: (the one-launch forward and backward), nor where N·C·S is no multiple of the vector. Runs of an odd S otherwise
#: load one element at a time, and 16-bit elements so loaded are not staged through shared memory at all (cp.async
#: moves 4 bytes or more): the tile loop waits on every load, at 19 sm_90 instructions an element (10 where S has a
#: factor 16), half of them forming indices; aligned rows take 21 (their masks and per-vector statistics) but keep
#: the loads in flight. Measured on the H200 (NOTES.md, session 23; CUDA-graph replays, % of copy, runs as they lie
#: -> aligned rows; calls 5 and 8), bf16 training forward: 75² 35.0 -> 37.0, 147² 39.9 -> 42.6, 35² 25.2 -> 26.8,
#: 17² 16.2 -> 17.6 (the statistics alone 30.6 -> 34.9, 38.0 -> 44.4, 19.3 -> 21.9, 15.6 -> 18.3); training
#: backward: 75² 31.2 -> 38.9, 147² 39.2 -> 43.0 (35², 17²: the one-launch backward). Not fp32 (75² statistics
#: 32.5 -> 37.4 µs: its 4-byte loads already pipeline) nor S with a factor 2 (25×38: 22.1 -> 21.7 in a first form).
#: BN_ALIGNED_ROWS_MIN_S: the smallest S so read (smaller ones take the row layout, BN_ROW_LANES_MAX).
BN_ALIGNED_ROWS = {2: 1}
BN_ALIGNED_ROWS_MIN_S = BN_ROW_LANES_MAX + 1


def batch_norm_aligned_rows(x_size: int, s: int) -> int:
    """Elements per aligned vector of the NCHW reductions (statistics, sums) over runs of ``s`` elements of ``x_size``
    bytes (BN_ALIGNED_ROWS), or 0 to read the runs as they lie."""
    if s < BN_ALIGNED_ROWS_MIN_S or (s & -s) > BN_ALIGNED_ROWS.get(x_size, 0):
        return 0
    return 16 // x_size


#: Bytes of re-read input per group of the fused kernels, and the schedule lag (in groups).
BN_GROUP_BYTES = 8 << 20
BN_LAG = 1
#: Items per sub-group merge and the cap on items per channel block.
BN_MSUB = 64
BN_MAX_SPLIT = 4096
#: Merge tile: at most BN_MERGE_TILE partials per step and at most BN_MERGE_ELEMS elements ([CB, width]):
#: the rarely taken merge path's registers count for the whole kernel's occupancy.
BN_MERGE_TILE = 16
BN_MERGE_ELEMS = 256

#: SyncBatchNorm's symmetric-memory exchange: channels per step when the first program of the apply (dx)
#: launch merges the ranks' statistics (adds their sums). One step's R remote loads are in flight together;
#: with the dx tile's channel block (1-64 channels in NCHW) as the step, the steps' NVLink latencies added up
#: to 0.6-2 ms at C = 512-2048 (2x H200, 2026-11-21).
BN_PEER_SUM_BLOCK = 1024
#: How long a rank waits in the exchange for a peer to arrive before it aborts the launch (a CUDA error rather
#: than a hang when ranks are out of step): NCCL's default collective timeout.
BN_PEER_TIMEOUT_S = 600
#: Per kernel ("stats": the statistics pass and the one-launch training forward; "apply"; "bwd": the sums
#: pass and the one-launch backward; "dx"): the prefetch depth of its tile loop (``tl.range(num_stages=)``,
#: cp.async through shared memory; 1 = none) and the register cap handed to ptxas for fp32 accumulation
#: (None = no cap; the rarely taken merge path may then spill, the tile loop does not: checked in the
#: SASS). Measured on the H200 (NOTES.md, session 3): statistics prefetch 3 + cap 64 + merge tiles of 256
#: elements took channels-last 56² training forward from 31 to 38% of copy (109 -> 64 registers); apply
#: and dx prefetch 3: evaluation forward +1..5 points, frozen backward +2..8 (14²: 64 -> 72%); bwd prefetch 3:
#: training backward +1..3 points. Session 11: apply prefetch 4 (evaluation forward +1..3 points; 5 was
#: erratic); statistics 4-5 no gain, the sums and dx loops at 4 together lost 3 points at NCHW 14². Session 12:
#: "apply_row32", the apply loop over the NCHW row layout (S <= BN_ROW_LANES_MAX) with 4-byte x, at 2 (fp32 7²
#: evaluation 53.3 -> 62.7%, training forward 33.5 -> 36.2; at 2 everywhere, 56² bf16 and 14² fp32 lost 2 points).
#: Session 30: "frozen", the frozen backward's one-pass loop (the "bwd" loop until then), at 4 (BN_ITEMS_PER_SM).
BN_LOOP_STAGES = {"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3, "frozen": 4}
BN_MAXNREG: dict[str, int | None] = {"stats": 64, "apply": None, "apply_row32": None, "bwd": None, "dx": None,
                                     "frozen": None}


def batch_norm_loop(loop: str, lanes: int, x_size: int) -> str:
    """The BN_LOOP_STAGES / BN_MAXNREG key of kernel loop ``loop`` over a view with ``lanes`` (the NCHW row layout's
    lanes per image, or 0) and x elements of ``x_size`` bytes: "apply_row32" for the apply loop over the row layout
    with 4-byte x, else ``loop``."""
    return "apply_row32" if loop == "apply" and lanes and x_size == 4 else loop


def _prev_pow2(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@functools.cache
def batch_norm_stats_wave(device: int | None, flat: bool, lanes: int) -> int:
    """The statistics pass's items per multiprocessor on ``device`` for a layout (BN_STATS_WAVE_BY_DEVICE)."""
    waves = _for_device(BN_STATS_WAVE_BY_DEVICE, device) or {}
    return waves.get("flat" if flat else "rows" if lanes else "runs", BN_STATS_WAVE)


@functools.cache
def batch_norm_plan(flat: bool, c: int, v: int, reread_bytes: int, kind: str, direction: str,
                    sms: int = 4, lanes: int = 0, stats_wave: int | None = None, x_size: int = 0) -> BatchNormPlan:
    """Plan for ``c`` channels of ``v`` inner indices each on a device of ``sms`` multiprocessors.

    ``flat``: channels-last rows (channel contiguous) vs NCHW (inner index contiguous); ``reread_bytes``: bytes per
    element that the fused kernels read twice (x, or x + dy (+ y)); ``kind``: "fused" (training, two item kinds),
    "stream" (one pass), "sums" (the backward's sums pass), "dx" (the training backward's dx pass: "stream" with
    BN_DX_LARGE_TILE over large tensors) or "frozen" (the frozen backward with its sums in one pass: "stream" with
    its own BN_ITEMS_PER_SM); ``direction``: "fwd" or "bwd". Items
    shrink (down to one tile) until there are about BN_ITEMS_PER_SM per multiprocessor (BN_STREAM_LARGE's count for
    one-pass kinds over large tensors), so that small tensors still fill the device; the statistics pass ("fused",
    "fwd") and the sums pass instead cut at most BN_STATS_WAVE (BN_SUMS_WAVE) items per multiprocessor, as large as that
    allows (channel blocks grow in NCHW when there are more channels than that). NCHW channel blocks aim at no fewer
    than BN_NCHW_ROW_MIN_CB channels in the row layout and BN_NCHW_STREAM_MIN_CB in the one-pass forward (where it
    divides the channel count), within the cap of the channels' power of two and the tile. ``lanes``: the NCHW row
    layout's lanes per image (tiles hold whole rows), or 0; ``stats_wave``: the statistics pass's items per
    multiprocessor (``batch_norm_stats_wave``; None: BN_STATS_WAVE); ``x_size``: bytes of an x element, with which
    the channels-last sums pass's channel block widens to BN_CL_SUMS' "row_bytes" of a row (its tile and items per
    SM are BN_CL_SUMS' too; None: the generic settings), the one-pass kinds' to BN_CL_STREAM_ROW_BYTES.
    """
    cl_sums = BN_CL_SUMS if flat and kind == "sums" else None
    tile = cl_sums["tile"] if cl_sums else BN_TILE["sums" if kind == "sums" else direction]
    total = c * max(v, 1)
    small_key = kind  # the key of BN_ITEMS_PER_SM below BN_STREAM_LARGE
    if kind == "dx":  # a one-pass kind, with its own tile over large tensors
        kind = small_key = "stream"
        if total >= BN_STREAM_LARGE[0]:
            tile = BN_DX_LARGE_TILE
    elif kind == "frozen":  # a one-pass kind, with its own items per SM over small tensors
        kind = "stream"
    one_wave = kind == "sums" or (kind == "fused" and direction == "fwd")
    if one_wave:
        if kind == "sums":
            per_sm = cl_sums["wave"] if cl_sums else BN_SUMS_WAVE
        else:
            per_sm = BN_STATS_WAVE if stats_wave is None else stats_wave
    elif kind == "stream" and total >= BN_STREAM_LARGE[0]:
        per_sm = BN_STREAM_LARGE[1]
    else:
        per_sm = BN_ITEMS_PER_SM[small_key]
    slots = sms * per_sm
    item = max(min(tile, total), _cdiv(total, slots) if one_wave else min(BN_ITEM[kind], _cdiv(total, slots)))
    if flat:
        cb = BN_CL_CB[kind]
        if cl_sums and x_size:
            cb = max(cb, cl_sums["row_bytes"] // x_size)
        elif kind == "stream" and x_size:
            cb = max(cb, BN_CL_STREAM_ROW_BYTES // x_size)
        cb = min(_next_pow2(c), cb)
    else:
        by_item = _prev_pow2(max(1, item // max(1, v)))
        if lanes:
            by_item = max(by_item, BN_NCHW_ROW_MIN_CB)
        if kind == "stream" and direction == "fwd" and c % BN_NCHW_STREAM_MIN_CB == 0:
            by_item = max(by_item, BN_NCHW_STREAM_MIN_CB)
        cb_max = min(_next_pow2(c), BN_NCHW_MAX_CB, max(1, tile // max(1, lanes)))
        cb = min(cb_max, by_item)
        while one_wave and _cdiv(c, cb) > slots and cb < cb_max:
            cb *= 2
    bs = max(1, tile // cb, lanes)
    split = _cdiv(max(v, 1), max(bs, item // cb))
    if one_wave:
        split = min(split, max(1, slots // _cdiv(c, cb)))
    split = min(split, BN_MAX_SPLIT)
    vpi = _cdiv(_cdiv(max(v, 1), split), bs) * bs
    split = _cdiv(max(v, 1), vpi)
    msub = BN_MSUB
    nsub = _cdiv(split, msub)
    if kind == "fused":
        per_block = cb * max(v, 1) * max(1, reread_bytes)
        cg = cb * max(1, BN_GROUP_BYTES // per_block)
    else:
        cg = cb * 8
    cg = min(cg, _cdiv(c, cb) * cb)
    groups = _cdiv(c, cg)
    num_warps = BN_WARPS if cb * bs >= 4096 else max(1, BN_WARPS // 2)
    return BatchNormPlan(cb, bs, vpi, split, msub, nsub, cg, groups, cg // cb, BN_LAG, _merge_width(cb), num_warps)


def _merge_width(cb: int) -> int:
    """Partials merged per step by a channel block of ``cb`` (BN_MERGE_TILE, BN_MERGE_ELEMS)."""
    return max(2, min(BN_MERGE_TILE, BN_MERGE_ELEMS // cb))


#: Single-read training forward (``_bn_fwd_resident_kernel``): when the whole tensor fits in the registers of one
#: program per multiprocessor, each program holds its item from the statistics to the output (x read once).
#: BN_RESIDENT_BYTES: bytes held per program (32768 fp32 values; an element's bytes: BN_RESIDENT_HOLD_LOADED);
#: BN_RESIDENT_WARPS by the bytes of an x element: 8 for 16-bit inputs (128 values per thread: 0-48 bytes of spills on
#: sm_90a; 2-12% faster than 16 warps in two H200 runs, session 8) and for fp32 (session 8's kernel spilled 200-350
#: bytes at 8 warps and lost up to 10% in channels-last; the current one gained on the H200, session 32, call 9,
#: training forward, CUDA-graph replays, % of copy, 16 -> 8 warps: CL 8×64×56² 11.4 -> 18.4, 32×256×14² 17.2 -> 21.1,
#: 16×1024×14² 29.4 -> 32.6, 32×2048×7² 30.0 -> 32.8; NCHW 32×2048×7² 25.5 -> 26.9, 16×1024×14² 31.6 -> 32.9, 8×64×56²
#: 22.3 -> 22.9, 32×256×14² 23.1 -> 22.9; 32 warps lost; sm_90 registers at 8 warps 103-254, 104 bytes of spills at NCHW
#: 32×2048×7², 32 at 16 warps), 16 for fp64; BN_RESIDENT_MIN_RUN: the shortest contiguous run an item reads (elements
#: along the channel in channels-last, along the inner index in NCHW), for whole 32-byte sectors. Measured on the H200
#: (NOTES.md, session 8): 2 or 4 programs per multiprocessor (half or a quarter of the warps and values each) were
#: faster at some NCHW shapes, slower at channels-last ones, and 5-20x slower where a program held one channel; session
#: 34 (call 3, forward and backward at 32×256×14² and 8×64×56², two programs an SM of half the budget, 8 or 4 warps):
#: within a point or lower (fp32 CL 32×256×14² forward 21.4 -> 18.8 / 20.3).
BN_RESIDENT = True
#: The training backward's single read (``_bn_bwd_resident_kernel``, session 33): the same plan, its budget shared by
#: the tensors an item holds (dy and x, and y under a fused ReLU). H200, graph replays, % of copy, two launches ->
#: one (torch): CL 32×256×14² fp32 26.9 -> 31.6 (29.0), bf16 11.8 -> 18.5 (12.7); CL 8×64×56² fp32 24.1 -> 29.7
#: (26.5), bf16 10.8 -> 17.5 (12.3); NCHW fp32 32×256×14² 30.8 -> 32.5, 8×64×56² 28.8 -> 32.9, bf16 8×64×56² 19.0 ->
#: 20.9, 32×256×14² 19.9 -> 19.2.
BN_RESIDENT_BACKWARD = True
BN_RESIDENT_BYTES = 32768 * 4
#: The bytes a held element counts in that budget, by layout (flat: channels-last): 16-bit inputs are held as loaded, so
#: in channels-last they count their own bytes (bf16 items of up to 65536 values, 8 warps; sm_90 spills 128-360 B) and
#: in NCHW the accumulation dtype's (their larger items lost there). bf16, graph replays, % of copy, fp32-counted -> own
#: bytes (torch). H200, session 34: backward (call 1; two launches -> one) CL 32×2048×7² 20.3 -> 26.2 (14.5),
#: 16×1024×14² 19.8 -> 25.2 (18.3), NCHW 32×2048×7² 20.2 -> 15.6, 16×1024×14² 30.3 -> 27.5; forward (call 4) CL
#: 32×256×28² 20.8 -> 24.9 (15.6), 32×64×56² 20.4 -> 23.2 (14.8), 32×1024×14² 20.6 -> 24.3 (14.2), NCHW 32×256×28² 27.9
#: -> 27.7, 32×64×56² 30.0 -> 17.6, 32×1024×14² 26.7 -> 26.4; fused-ReLU backward (call 5; y held too) CL 8×64×56² 17.1
#: -> 21.9 (16.9), 32×256×14² 18.9 -> 22.5 (17.3); 16 warps lost in both layouts. H100 (call 9, CL): backward 32×2048×7²
#: 27.2 -> 31.9, 16×1024×14² 26.8 -> 31.8; forward 32×256×28² 27.4 -> 31.1, 32×64×56² 27.7 -> 29.8, 32×1024×14² 27.6 ->
#: 30.8; fused-ReLU backward 8×64×56² 23.2 -> 28.7, 32×256×14² 25.7 -> 29.7; the tensors whose plans it leaves alone
#: within 0.5.
BN_RESIDENT_HOLD_LOADED = {True: True, False: False}
BN_RESIDENT_WARPS = {2: 8, 4: 8, 8: 16}
BN_RESIDENT_MIN_RUN = {True: 32, False: 256}


class ResidentPlan(NamedTuple):
    cb: int  # channels per item
    vp: int  # inner indices per item (a power of two)
    split: int  # items per channel block
    ncb: int  # channel blocks
    ms: int  # partials merged per step
    num_warps: int


def batch_norm_resident_held_bytes(flat: bool, acc_size: int, x_size: int) -> int:
    """The bytes an element held by a single-read kernel counts in BN_RESIDENT_BYTES: the accumulation dtype's
    (``acc_size``), or x's own (``x_size``) where narrower and BN_RESIDENT_HOLD_LOADED[flat]. The backward holds two
    or three tensors (dy and x, and y under a fused ReLU) and counts each."""
    return min(acc_size, x_size) if BN_RESIDENT_HOLD_LOADED[flat] else acc_size


@functools.cache
def batch_norm_resident_plan(flat: bool, c: int, v: int, elem_bytes: int, sms: int, lanes: int = 0, x_size: int = 4
                             ) -> ResidentPlan | None:
    """The single-read plan for ``c`` channels of ``v`` inner indices, or None when the tensor does not fit in
    ``sms`` programs of BN_RESIDENT_BYTES // elem_bytes values (``elem_bytes``: what an element of the item counts,
    ``batch_norm_resident_held_bytes`` times the tensors held). Among the items that fit (a power-of-two channel
    block, inner extents of a power of two, whole runs of at least BN_RESIDENT_MIN_RUN), the plan with the least
    work per program: the item's elements plus the partials every program reads in its merge (3·split·cb values,
    weighted 2: 4-byte partials against 2-byte elements), then the fewest programs; warps by ``x_size``, the bytes
    of an x element. (The launcher consults it when BN_RESIDENT.)"""
    cap = BN_RESIDENT_BYTES // elem_bytes
    best = None
    cb = 1
    while cb <= _next_pow2(c):
        ncb = _cdiv(c, cb)
        if ncb <= sms and (not flat or cb >= min(_next_pow2(c), BN_RESIDENT_MIN_RUN[True])):
            vp = max(_next_pow2(_cdiv(max(v, 1), sms // ncb)), lanes, 1)
            if not flat:
                vp = max(vp, min(_next_pow2(max(v, 1)), BN_RESIDENT_MIN_RUN[False]))
            while cb * vp <= cap:
                split = _cdiv(max(v, 1), vp)
                key = (cb * vp + 6 * split * cb, ncb * split)
                if best is None or key < best[0]:
                    best = (key, cb, vp, split, ncb)
                if split == 1:
                    break
                vp *= 2
        cb *= 2
    if best is None:
        return None
    _, cb, vp, split, ncb = best
    warps = max(1, min(BN_RESIDENT_WARPS[x_size], cb * vp // 512))
    return ResidentPlan(cb, vp, split, ncb, _merge_width(cb), warps)


# ----------------------------------------------------------------------------- changes at run time


class _Config(types.ModuleType):
    """This module's type: setting or deleting any attribute (a tuning script's override, a test's monkeypatch)
    clears the cached heuristics above and counts up ``generation``, on which the launches replayed by
    ``kernels._replay`` are keyed, so that nothing keeps a decision made under the old values. A table changed in
    place (``NORM_TUNED[key] = ...``) is not seen: assign a changed copy instead."""

    def __setattr__(self, name: str, value) -> None:
        super().__setattr__(name, value)
        if name != "generation":
            self._changed()

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        self._changed()

    def _changed(self) -> None:
        for obj in tuple(vars(self).values()):
            if callable(getattr(obj, "cache_clear", None)):
                obj.cache_clear()
        super().__setattr__("generation", self.generation + 1)


#: Counts the changes made to this module's values at run time (see ``_Config``).
generation = 0
sys.modules[__name__].__class__ = _Config
