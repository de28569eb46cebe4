"""Check and tune fastnorm's LayerNorm/RMSNorm kernels.

On the GPU machine (one call does everything, prints a compact table last)::

    PYTHONPATH=src python3 benchmarks/scripts/tune_norms.py [--sweep] [--tests] [--ns 128,1024]

1. checks fastnorm against torch (fp32 and bf16, forward and gradients, residual, non-contiguous);
2. measures the host cost of one eager call (small shape) for fastnorm, the custom op and torch;
3. times forward and backward of fastnorm and torch eager for bf16 x of shape (M, N) and reports
   GB/s on the fewest bytes and % of the copy bandwidth measured in the same process;
4. with ``--sweep``, times alternative launch configs per N (kernel-only) to choose the heuristics;
5. with ``--tests``, runs tests/test_layer_norm*.py on CUDA.

Kernels are compiled up front in parallel worker processes (they fill Triton's on-disk cache).

Offline, without a GPU: ``--ptxas`` compiles every config for sm_90 and prints registers and spills.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from fastnorm.kernels import config as C
from fastnorm.kernels import layer_norm as K

NS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
M_MAX = 49152
ELEMS_CAP = 1 << 29  # rows reduced for large N so one tensor stays <= 1 GiB in bf16


def rows_for(n: int) -> int:
    return min(M_MAX, max(1024, ELEMS_CAP // n))


# ----------------------------------------------------------------------------- variants


def _warps(elements: int, per_thread: int) -> int:
    return max(1, min(32, triton_next_pow2(max(1, elements // (32 * per_thread)))))


def fwd_variants(n: int, sms: int, esize: int = 2, is_rms: bool = False) -> list[C.NormConfig]:
    """Forward configs to try at N (the current default first)."""
    dev = torch.cuda.current_device() if torch.cuda.is_available() else None
    out = [C.norm_fwd_config(n, esize, dev, is_rms, scalar_loads=K._scalar_loads((n,)))]  # x of (rows, N), contiguous
    bn = triton_next_pow2(n)
    if bn <= 32768:
        for tile in sorted({bn, 2048, 4096, 8192, 16384}):
            if tile < bn:
                continue
            for ept in (8, 16, 32, 64):
                w = _warps(tile, ept)
                out.append(C.NormConfig(tile // bn, bn, False, w))
                out.append(C.NormConfig(tile // bn, bn, False, w, 2, sms * 4))
    out += two_piece_variants("fwd", n, sms)
    if n >= 16384:
        for chunk in (4096, 8192, 16384):
            for ept in (8, 16, 32):
                w = chunk // (32 * ept)
                if not 4 <= w <= 32:
                    continue
                for per_sm in (1, 2, 4):
                    for st in (1, 3):
                        for evict in (False, True):
                            out.append(C.NormConfig(1, chunk, True, w, st, sms * per_sm, evict=evict))
    out += looped_variants(n)
    return list(dict.fromkeys(out))


def looped_variants(n: int, chunks=(1024, 2048, 4096, 8192), warps=(4, 8, 16), unrolls=(2, 4, 8),
                    evicts=(False, True)) -> list[C.NormConfig]:
    """The forward's rows walked in chunks by one program per row (torch.compile's reduction kernels): chunks of
    1024 to 8192 columns, 2 to 16 elements per thread, the chunk loops unrolled 2, 4 or 8 times (the loads of that
    many chunks in flight), the L2 eviction hints on or off (or the subsets given)."""
    out = []
    for chunk in chunks:
        if chunk > max(1024, triton_next_pow2(n)):
            continue
        for w in warps:
            if 2 <= chunk // (32 * w) <= 16:
                for unroll in unrolls:
                    for evict in evicts:
                        out.append(C.NormConfig(1, chunk, True, w, evict=evict, unroll=unroll))
    return out


def two_piece_variants(kind: str, n: int, sms: int) -> list[C.NormConfig]:
    """Whole rows as two pieces without power-of-two padding (N = 5120 as 4096 + 1024), where that saves columns:
    1, 2 or 4 rows per tile, 8 to 64 elements per thread (forward) or 4 to 32 (backward); the forward one program
    per tile or 4 persistent per SM, the backward 1, 2 or 4 per SM, the weight held or (past 4096) re-read."""
    bn = triton_next_pow2(n)
    first = bn // 2
    second = triton_next_pow2(n - first) if n > first else 0
    if not (0 < second and first + second < bn and first + second <= 32768):
        return []
    out = []
    for rows in (1, 2, 4):
        cols = rows * (first + second)
        for w in (1, 2, 4, 8, 16, 32):
            if kind == "fwd" and 8 * 32 * w <= cols <= 64 * 32 * w:
                out.append(C.NormConfig(rows, first, False, w, block_n2=second))
                out.append(C.NormConfig(rows, first, False, w, 2, sms * 4, block_n2=second))
            if kind == "bwd" and 4 * 32 * w <= cols <= 32 * 32 * w:
                for per_sm in (1, 2, 4):
                    for w_in_loop in (False, True) if first >= 4096 else (False,):
                        out.append(C.NormConfig(rows, first, False, w, 3 if first <= 4096 else 1, sms * per_sm,
                                                w_in_loop, second))
    return out


def split_variants(n: int, sms: int, is_rms: bool = False, esize: int = 2) -> list[C.NormConfig]:
    """The backward's rows split across programs (``NormConfig.split``): pieces of 2048 to 16384 columns, 8 to 32
    elements per thread, 1, 2 or 4 programs per SM, 16 to 32 warps per SM, the weight held or re-read per row, the
    next row's partial published before or after the wait (``early_loads``); and, for the A/B, the config the rows
    take without splitting."""
    dev = torch.cuda.current_device() if torch.cuda.is_available() else None
    out = [C.norm_bwd_config(n, esize, dev, is_rms, False)]
    for piece in (2048, 4096, 8192, 16384):
        for w in (4, 8, 16):
            if not 8 <= piece // (32 * w) <= 32:
                continue
            for per_sm in (1, 2, 4):
                if not 16 <= w * per_sm <= 32:
                    continue
                for w_in_loop in (False, True):
                    for early in (False, True):
                        cfg = C.NormConfig(1, piece, False, w, 1, sms * per_sm, w_in_loop, split=True,
                                           early_loads=early)
                        if C.norm_split_fits(cfg, n):
                            out.append(cfg)
    return out


def bwd_variants(n: int, sms: int, esize: int = 2, is_rms: bool = False) -> list[C.NormConfig]:
    """Backward configs to try at N (the current default first)."""
    dev = torch.cuda.current_device() if torch.cuda.is_available() else None
    out = [C.norm_bwd_config(n, esize, dev, is_rms, scalar_loads=K._scalar_loads((n,)))]
    bn = triton_next_pow2(n)
    if bn <= 8192:
        for tile in sorted({bn, 2048, 4096, 8192}):
            if tile < bn:
                continue
            for ept in (8, 16):
                w = _warps(tile, ept)
                for per_sm in (1, 2, 4):
                    for st in (1, 3):
                        out.append(C.NormConfig(tile // bn, bn, False, w, st, sms * per_sm))
    if 4096 <= bn <= 32768:  # whole rows, the weight re-read per row block (registers for the accumulators)
        for w in (16, 32):
            for per_sm in (1, 4, 16):
                for st in (1, 3):
                    out.append(C.NormConfig(1, bn, False, w, st, sms * per_sm, True))
    out += two_piece_variants("bwd", n, sms)
    if n >= 8192:
        for chunk in (2048, 4096, 8192):
            for bm in (1, 2, 4):
                for ept in (8, 16):
                    w = chunk * bm // (32 * ept)
                    if not 4 <= w <= 32:
                        continue
                    for per_sm in (1, 2):
                        for st in (1, 3):
                            out.append(C.NormConfig(bm, chunk, True, w, st, sms * per_sm))
    return list(dict.fromkeys(out))


def triton_next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


# ----------------------------------------------------------------------------- runs


def make_inputs(m, n, dtype=torch.bfloat16, device="cuda", is_rms=False, wdtype=None):
    g = torch.Generator(device=device).manual_seed(m * 31 + n)
    x = torch.randn(m, n, dtype=dtype, device=device, generator=g)
    w = (1 + 0.1 * torch.randn(n, device=device, generator=g)).to(wdtype or dtype)
    b = None if is_rms else (0.1 * torch.randn(n, device=device, generator=g)).to(wdtype or dtype)
    dy = torch.randn(m, n, dtype=dtype, device=device, generator=g)
    return x, w, b, dy


def run_fwd(x, w, b, is_rms, cfg=None, store_stats=True):
    return K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, store_stats, config=cfg)


def run_bwd(dy, x, w, has_b, mean, rstd, is_rms, cfg=None):
    return K.norm_bwd(dy, x, w, has_b, mean, rstd, None, x.dtype, None, 1e-5, 0.0, is_rms,
                      bias_dtype=w.dtype if has_b else None, config=cfg)


def _compile_items(items):
    """Worker: run each (is_rms, n, m, kind, cfg[, dtype]) once on small tensors to fill the Triton cache."""
    torch.cuda.init()
    done = 0
    for is_rms, n, m, kind, cfg, *dtype in items:
        mm = 32 if m % 16 == 0 else 16 + m % 16  # same specialization (M % 16) with few rows
        x, w, b, dy = make_inputs(mm, n, *dtype, is_rms=is_rms)
        try:
            y, _, mean, rstd = run_fwd(x, w, b, is_rms, cfg if kind == "fwd" else None)
            if kind == "bwd":
                run_bwd(dy, x, w, b is not None, mean, rstd, is_rms, cfg)
            done += 1
        except Exception as e:  # a variant past the shared-memory limit: the sweep skips it
            print(f"  skip {kind} N={n} {cfg}: {type(e).__name__}", flush=True)
    torch.cuda.synchronize()
    return done


def precompile(items, workers=15):
    import multiprocessing as mp

    t0 = time.perf_counter()
    chunks = [items[i::workers] for i in range(workers)]
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers) as pool:
        n = sum(pool.map(_compile_items, [c for c in chunks if c]))
    print(f"precompiled {n} launches in {time.perf_counter() - t0:.1f} s", flush=True)


def bench(fn, rep=30):
    import triton.testing

    return triton.testing.do_bench(fn, warmup=5, rep=rep, return_mode="median")


def copy_bandwidth():
    src = torch.empty(1 << 29, dtype=torch.float32, device="cuda").uniform_()  # 2 GiB
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), rep=100)
    return 2 * (1 << 29) * 4 / ms / 1e6  # GB/s


def fwd_bytes(m, n, e, is_rms):
    return 2 * m * n * e + (1 if is_rms else 2) * n * e + (4 if is_rms else 8) * m


def bwd_bytes(m, n, e, is_rms):
    return 3 * m * n * e + (1 if is_rms else 2) * 2 * n * e + (4 if is_rms else 8) * m


# ----------------------------------------------------------------------------- sections


def check_correctness():
    import fastnorm

    print("== correctness vs torch (max |err| / max |ref|)", flush=True)
    worst = 0.0
    cases = [(7, 1), (33, 127), (64, 1000), (16, 4096), (3, 20000), (2, 70000)]
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 1.6e-2)):
        for m, n in cases:
            for is_rms in (False, True):
                x, w, b, dy = make_inputs(m, n, dtype=dtype, is_rms=is_rms)
                x.requires_grad_()
                w.requires_grad_()
                params = [x, w] + ([] if is_rms else [b.requires_grad_()])
                if is_rms:
                    y = fastnorm.rms_norm(x, n, w, 1e-5)
                    xr, wr = x.double(), w.double()
                    yr = torch.nn.functional.rms_norm(xr, (n,), wr, 1e-5)
                else:
                    y = fastnorm.layer_norm(x, n, w, b)
                    yr = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), b.double())
                g = torch.autograd.grad(y, params, dy)
                gr = torch.autograd.grad(yr, params, dy.double())
                errs = [((a.double() - r).abs().max() / r.abs().max().clamp_min(1e-30)).item()
                        for a, r in zip((y,) + g, (yr,) + gr, strict=True)]
                ok = max(errs) <= 4 * tol
                worst = max(worst, max(errs) / tol)
                print(f"  {'RMS' if is_rms else 'LN '} {str(dtype)[6:]:8s} ({m},{n}): y/dx/dw/db "
                      + " ".join(f"{e:.1e}" for e in errs) + ("" if ok else "   <-- FAIL"), flush=True)
    # non-contiguous rows (a column slice) and residual with fp32 residual stream
    base = torch.randn(64, 3000, device="cuda")
    x = base[:, 100:1100]
    y1 = fastnorm.layer_norm(x, 1000)
    y2 = fastnorm.layer_norm(x.contiguous(), 1000)
    print(f"  strided rows equal contiguous: {torch.equal(y1, y2)}")
    xb = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16)
    r = torch.randn(64, 1000, device="cuda")
    y, s = fastnorm.rms_norm(xb, 1000, residual=r, residual_dtype=torch.float32)
    ref_s = xb.float() + r
    print(f"  residual fp32: sum exact {torch.equal(s, ref_s)}, y err "
          f"{(y.float() - torch.nn.functional.rms_norm(ref_s, (1000,))).abs().max().item():.2e}")
    print(f"  worst error / tolerance: {worst:.2f}")


def host_overhead():
    import fastnorm

    print("== host cost per eager call (us), (32, 32) fp32, 2000 calls", flush=True)
    x = torch.randn(32, 32, device="cuda")
    w = torch.ones(32, device="cuda")
    b = torch.zeros(32, device="cuda")
    xg = x.clone().requires_grad_()
    fns = {
        "fastnorm.layer_norm (no grad)": lambda: fastnorm.layer_norm(x, 32, w, b),
        "fastnorm.layer_norm (x requires grad)": lambda: fastnorm.layer_norm(xg, 32, w, b),
        "torch.ops.fastnorm.norm_fwd": lambda: torch.ops.fastnorm.norm_fwd(x, w, b, None, 1, 1e-5, 0.0, False, None),
        "torch.ops.fastnorm.norm_fwd (x grad)": lambda: torch.ops.fastnorm.norm_fwd(xg, w, b, None, 1, 1e-5, 0.0,
                                                                                      False, None),
        "K.norm_fwd (launcher only)": lambda: K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, False),
        "torch F.layer_norm": lambda: torch.nn.functional.layer_norm(x, (32,), w, b),
        "torch F.layer_norm (x grad)": lambda: torch.nn.functional.layer_norm(xg, (32,), w, b),
    }
    for name, fn in fns.items():
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        print(f"  {name:40s} {(t1 - t0) / 2000 * 1e6:6.1f}")


def table_row(is_rms, n, copy_gbs):
    import fastnorm

    m = rows_for(n)
    x, w, b, dy = make_inputs(m, n, is_rms=is_rms)
    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()
    bg = None if is_rms else b.clone().requires_grad_()
    params = [xg, wg] + ([] if is_rms else [bg])
    if is_rms:
        impls = (("fastnorm", lambda: fastnorm.rms_norm(xg, n, wg, 1e-5)),
                 ("torch", lambda: torch.nn.functional.rms_norm(xg, (n,), wg, 1e-5)))
    else:
        impls = (("fastnorm", lambda: fastnorm.layer_norm(xg, n, wg, bg)),
                 ("torch", lambda: torch.nn.functional.layer_norm(xg, (n,), wg, bg)))
    res = {}
    for name, fn in impls:
        t_f = bench(fn)
        y = fn()
        t_b = bench(lambda y=y: torch.autograd.grad(y, params, dy, retain_graph=True))
        res[name] = (t_f, t_b)
    fb, bb = fwd_bytes(m, n, 2, is_rms), bwd_bytes(m, n, 2, is_rms)
    row = ("RMS" if is_rms else "LN", n, m,
           fb / res["fastnorm"][0] / 1e6 / copy_gbs * 100, fb / res["torch"][0] / 1e6 / copy_gbs * 100,
           bb / res["fastnorm"][1] / 1e6 / copy_gbs * 100, bb / res["torch"][1] / 1e6 / copy_gbs * 100,
           res["fastnorm"][0] * 1e3, res["fastnorm"][1] * 1e3)
    print(f"  {row[0]:3s} N={n:6d} M={m:6d} fwd {row[3]:5.1f}% (torch {row[4]:5.1f}%)  "
          f"bwd {row[5]:5.1f}% (torch {row[6]:5.1f}%)", flush=True)
    return row


def table(ns, copy_gbs):
    rows = []
    for is_rms in (False, True):
        for n in ns:
            rows.append(table_row(is_rms, n, copy_gbs))
            torch.cuda.empty_cache()
    return rows


def regs_of_last_launch(launcher) -> tuple[int, int]:
    """Registers and spills of the kernel ``launcher`` launched last, when its cache was emptied before that launch
    (a kernel compiled earlier, by ``precompile`` or an earlier variant, is not added to the cache again)."""
    kernel = list(launcher.cache.values())[-1].kernel
    return kernel.n_regs, kernel.n_spills


def max_rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.float(), b.float()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def measure_configs(kind: str, is_rms: bool, n: int, sms: int, copy_gbs: float, variants, passes: int = 1,
                    rep: int = 20, dtype: torch.dtype = torch.bfloat16) -> list[dict]:
    """Kernel-only % of copy of the current config and ``variants(n, sms)`` of direction ``kind`` (x of
    ``rows_for(n)`` rows in ``dtype``, the weight too): each checked against the current config's results, then
    timed (``do_bench``, ``rep`` ms) in ``passes`` interleaved passes over all of them, the median of the passes
    reported. -> one dict per config that ran (the current one first), with its registers and spills."""
    m = rows_for(n)
    x, w, b, dy = make_inputs(m, n, dtype, is_rms=is_rms)
    _, _, mean, rstd = run_fwd(x, w, b, is_rms)
    dev = torch.cuda.current_device()
    esize = x.element_size()
    if kind == "fwd":
        nbytes, launcher = fwd_bytes(m, n, esize, is_rms), K._fwd
        current = C.norm_fwd_config(n, esize, dev, is_rms, scalar_loads=K._scalar_loads((n,)))
        names = (("y", 0), ("rstd", 3))

        def run(cfg=None):
            return run_fwd(x, w, b, is_rms, cfg)
    else:
        nbytes, launcher = bwd_bytes(m, n, esize, is_rms), K._bwd
        current = C.norm_bwd_config(n, esize, dev, is_rms, scalar_loads=K._scalar_loads((n,)))
        names = (("dx", 0), ("dw", 2), ("db", 3))

        def run(cfg=None):
            return run_bwd(dy, x, w, b is not None, mean, rstd, is_rms, cfg)
    base = run()
    rows, runs = [], []
    for cfg in [current, *(v for v in variants(n, sms) if v != current)]:
        for kernel_launcher in (launcher, K._bwd_split):  # so that regs_of_last_launch reads this config's kernel
            kernel_launcher.cache.clear()
        try:
            got = run(cfg)
        except Exception as e:  # a variant past a resource limit
            print(f"  skip {fmt_cfg(cfg)}: {type(e).__name__}: {str(e)[:80]}", flush=True)
            continue
        if K._SPLIT_FIT:  # the split grid did not fit at once: it ran on fewer programs, or unsplit
            K._SPLIT_FIT.clear()
            print(f"  skip {fmt_cfg(cfg)}: cooperative launch refused", flush=True)
            continue
        regs, spills = regs_of_last_launch(K._bwd_split if cfg.split else launcher)
        errs = {name: max_rel(got[i], base[i]) for name, i in names if got[i] is not None}
        rows.append(dict(op="RMS" if is_rms else "LN", kind=kind, n=n, rows=m, dtype=str(dtype).removeprefix("torch."),
                         cfg=fmt_cfg(cfg), config=list(cfg),
                         regs=regs, spills=spills, errs=errs, times_us=[]))
        runs.append(lambda cfg=cfg: run(cfg))
    for _ in range(passes):
        for row, fn in zip(rows, runs, strict=True):
            row["times_us"].append(bench(fn, rep=rep) * 1e3)
    for row in rows:
        row["us"] = sorted(row["times_us"])[len(row["times_us"]) // 2]
        row["pct"] = nbytes / row["us"] / 1e3 / copy_gbs * 100
        errs = " ".join(f"{k} {v:.1e}" for k, v in row["errs"].items())
        print(f"  {row['op']} {kind} N={n} {row['cfg']:40s} {row['pct']:5.1f}%  {row['us']:8.1f} us  regs "
              f"{row['regs']:3d} spills {row['spills']:5d}  {errs}", flush=True)
    return rows


def sweep_one(is_rms, n, copy_gbs, sms, top):
    """Kernel-only timings of alternative configs (``measure_configs``); prints the best few per direction."""
    out = {}
    for kind, variants in (("fwd", fwd_variants), ("bwd", bwd_variants)):
        rows = measure_configs(kind, is_rms, n, sms, copy_gbs, lambda n, sms, v=variants: v(n, sms, 2, is_rms)[1:],
                               rep=10)
        default_pct = rows[0]["pct"]
        results = sorted(((r["pct"], C.NormConfig(*r["config"])) for r in rows), key=lambda r: -r[0])
        out[("RMS" if is_rms else "LN", n, kind)] = (default_pct, results)
        print(f"  sweep {'RMS' if is_rms else 'LN'} {kind} N={n}: default {default_pct:.1f}%; best "
              + "; ".join(f"{p:.1f}% {fmt_cfg(c)}" for p, c in results[:top]), flush=True)
    return out


def fmt_cfg(c: C.NormConfig) -> str:
    s = f"bm{c.block_m} bn{c.block_n}{f'+{c.block_n2}' if c.block_n2 else ''} w{c.num_warps}"
    if c.chunked:
        s += " chunked"
    if c.split:
        s += " split"
    if c.w_in_loop:
        s += " w-in-loop"
    if c.early_loads:
        s += " early"
    if c.programs:
        s += f" G{c.programs}"
    if c.num_stages != 1:
        s += f" st{c.num_stages}"
    if c.evict:
        s += " evict"
    if c.unroll != 1:
        s += f" u{c.unroll}"
    if getattr(c, "x_l2_only", False):  # (source trees before session 37 lack it)
        s += " x-l2"
    if getattr(c, "params_l2_only", False):  # (source trees before session 38 lack it)
        s += " p-l2"
    return s


# ----------------------------------------------------------------------------- offline: registers / spills


def ptxas_report(ns):
    """Compile each config for sm_90 without a GPU; print registers and spill bytes (ptxas -v)."""
    import triton.backends.nvidia as nv

    ptxas = os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas")
    recorded = []

    class Shim:
        def __init__(self, k):
            self.k = k

        def __call__(self, grid, args, meta, num_warps, num_stages, traceable):
            recorded.append((self.k, args, {**meta, "num_warps": num_warps, "num_stages": num_stages}))

    saved = K._fwd, K._bwd, K._sum_partials
    K._fwd, K._bwd, K._sum_partials = Shim(K._norm_fwd_kernel), Shim(K._norm_bwd_kernel), Shim(K._sum_partials_kernel)
    try:
        for is_rms in (False, True):
            for n in ns:
                m = 64
                x, w, b, dy = make_inputs(m, n, device="cpu", is_rms=is_rms)
                sms = 132
                for cfg in fwd_variants(n, sms):
                    if cfg.num_stages == 1 and cfg.programs:
                        continue
                    recorded.clear()
                    run_fwd(x, w, b, is_rms, cfg)
                    report(recorded[0], f"{'RMS' if is_rms else 'LN'} fwd N={n} {fmt_cfg(cfg)}", ptxas)
                mean = torch.zeros(m)
                rstd = torch.ones(m)
                seen = set()
                for cfg in bwd_variants(n, sms):
                    if cfg._replace(programs=0) in seen:
                        continue
                    seen.add(cfg._replace(programs=0))
                    recorded.clear()
                    run_bwd(dy, x, w, b is not None, mean, rstd, is_rms, cfg)
                    report(recorded[0], f"{'RMS' if is_rms else 'LN'} bwd N={n} {fmt_cfg(cfg)}", ptxas)
    finally:
        K._fwd, K._bwd, K._sum_partials = saved


def report(rec, label, ptxas):
    import re

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    from fastnorm.kernels._launch import specialization

    k, args, kw = rec
    target = GPUTarget("cuda", 90, 32)
    sig, consts, attrs, opts = specialization(k, args, {p.name: kw[p.name] for p in k.params if p.is_constexpr},
                                              kw.get("num_warps", 4), kw.get("num_stages"), None, make_backend(target))
    src = triton.compiler.ASTSource(fn=k, signature=sig, constexprs=consts, attrs=attrs)
    c = triton.compile(src, target=target, options=opts)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(c.asm["ptx"])
    out = subprocess.run([ptxas, "-arch=sm_90a", "-v", f.name, "-o", os.devnull], capture_output=True, text=True)
    os.unlink(f.name)
    text = out.stderr + out.stdout
    regs = re.search(r"Used (\d+) registers", text)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    ptx = c.asm["ptx"]
    vec = next((v for v in ("v4", "v2") if re.search(rf"ld\.global[\w.:]*\.{v}\.", ptx)), "scalar")
    pattern = r"cp\.async\.c[ag]\.shared\.global(?:\.L2::\w+)? \[[^]]+\], \[[^]]+\], (0x[0-9a-f]+|\d+)"
    cp = sorted(set(re.findall(pattern, ptx)))
    if cp:
        vec += " cp.async " + "/".join(cp)
    print(f"{label:55s} smem {c.metadata.shared:6d} regs {regs.group(1) if regs else '?':>4s}  "
          f"spills {spill.group(1) if spill else '?'}/"
          f"{spill.group(2) if spill else '?'}  loads {vec}", flush=True)


# ----------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--sweep-ns", default="")
    ap.add_argument("--rms-sweep-ns", default="", help="N values of the RMSNorm sweep (default: none)")
    ap.add_argument("--tests", action="store_true")
    ap.add_argument("--select", action="store_true", help="use the sweep's winners for the table")
    ap.add_argument("--gpu-tests", action="store_true", help="only the tests marked gpu")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds after which the sweep stops")
    ap.add_argument("--ptxas", action="store_true")
    args = ap.parse_args()
    ns = [int(s) for s in args.ns.split(",") if s]
    if args.ptxas:
        ptxas_report(ns)
        return
    t_start = time.perf_counter()
    dev = torch.cuda.current_device()
    sms = C.multiprocessor_count(dev)
    print(f"device {torch.cuda.get_device_name()} ({sms} SMs), torch {torch.__version__}", flush=True)
    sweep_ns = [int(s) for s in args.sweep_ns.split(",") if s] if args.sweep_ns else ns
    plan = [(False, n) for n in sweep_ns] + [(True, int(s)) for s in args.rms_sweep_ns.split(",") if s]
    items = {}
    for is_rms in (False, True):
        for n in ns:
            items[(is_rms, n, "bwd", None)] = (is_rms, n, rows_for(n), "bwd", None)
    if args.sweep:
        for is_rms, n in plan:
            for kind, variants in (("fwd", fwd_variants(n, sms, 2, is_rms)[1:]),
                                   ("bwd", bwd_variants(n, sms, 2, is_rms)[1:])):
                for c in variants:
                    key = (is_rms, n, kind, c._replace(programs=0))
                    items.setdefault(key, (is_rms, n, rows_for(n), kind, c))
    precompile(list(items.values()))
    check_correctness()
    host_overhead()
    copy_gbs = copy_bandwidth()
    print(f"== copy bandwidth {copy_gbs:.0f} GB/s (read + write)", flush=True)
    best = {}
    if args.sweep:
        for is_rms, n in plan:
            if time.perf_counter() - t_start > args.deadline:
                print(f"  sweep stopped at the {args.deadline} s deadline", flush=True)
                break
            best.update(sweep_one(is_rms, n, copy_gbs, sms, 3))
            torch.cuda.empty_cache()
        if os.environ.get("OUT"):
            with open(os.path.join(os.environ["OUT"], "sweep.json"), "w") as f:
                json.dump([{"op": k[0], "n": k[1], "kind": k[2], "default": dp,
                            "results": [[p, list(c)] for p, c in res]} for k, (dp, res) in best.items()], f)
        if args.select:
            install_winners(best, sms)
    print("== fastnorm vs torch eager, bf16, % of copy bandwidth (fwd incl. stats; bwd = autograd.grad)")
    rows = table(ns, copy_gbs)
    print_summary(rows, best, copy_gbs, t_start)
    if args.tests or args.gpu_tests:
        sel = ["-m", "gpu"] if args.gpu_tests and not args.tests else []
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "8", "-p", "no:cacheprovider", *sel,
                        *sorted(str(p) for p in Path("tests").glob("test_layer_norm*.py"))])
    print_summary(rows, best, copy_gbs, t_start)


def install_winners(best, sms):
    """Make the swept winners the bf16 configs of this process (what NORM_TUNED should then hold)."""
    print("== winners (NORM_TUNED entries: block_m, block_n, chunked, warps, stages, programs per SM[, w_in_loop])")
    table = dict(C.NORM_TUNED)
    exact = dict(C.NORM_TUNED_EXACT)
    for (op, n, kind), (_dp, res) in best.items():
        if not res:
            continue
        if K._scalar_loads((n,)):  # measured on loads of one element (the scalar rows' own configs serve such rows)
            print(f"    N = {n}: odd, not installed for its key's aligned rows")
            continue
        c = res[0][1]
        per_sm = c.programs // sms
        entry = (c.block_m, c.block_n, c.chunked, c.num_warps, c.num_stages, per_sm) + ((True,) if c.w_in_loop else ())
        table[(kind, op == "RMS", C.norm_tuned_key(n))] = entry
        exact.pop((kind, op == "RMS", n), None)  # an exact entry at the swept N would shadow the winner
        print(f'    ("{kind}", {op == "RMS"}, {C.norm_tuned_key(n)}): {entry},  # {res[0][0]:.1f}%')
    C.NORM_TUNED = table  # assigned, not changed in place: config then drops its cached configs and replayed launches
    C.NORM_TUNED_EXACT = exact


def print_summary(rows, best, copy_gbs, t_start):
    print(f"\n== summary (copy {copy_gbs:.0f} GB/s, {time.perf_counter() - t_start:.0f} s)")
    print("op  N      M      fwd%  torch  bwd%  torch  fwd_us  bwd_us")
    for r in rows:
        print(f"{r[0]:3s} {r[1]:<6d} {r[2]:<6d} {r[3]:5.1f} {r[4]:5.1f}  {r[5]:5.1f} {r[6]:5.1f}  "
              f"{r[7]:6.1f}  {r[8]:6.1f}")
    for key, (dp, res) in best.items():
        print(f"best {key[0]} {key[2]} N={key[1]}: default {dp:.1f}% | " +
              " | ".join(f"{p:.1f}% {fmt_cfg(c)}" for p, c in res[:2]))


if __name__ == "__main__":
    main()
