"""Check and tune fastnorm's BatchNorm kernels on a GPU.

    PYTHONPATH=src python3 benchmarks/scripts/tune_batchnorm.py [--sections check,time,variants,tests]

1. ``check``: fastnorm against torch in fp32 (forward, running statistics, dx/dw/db) in training,
   evaluation and frozen modes, NCHW and channels_last, on small shapes (in a subprocess with a
   timeout, so a hang is reported rather than waited on);
2. ``time``: fastnorm vs torch eager at the shapes of BENCHMARKS.md — bf16 input with fp32 parameters,
   and fp32; NCHW and channels_last; training forward, training backward (dx, dw, db), evaluation
   forward, frozen backward (dx only) — as % of the copy bandwidth measured in the same process, on the
   fewest bytes (forward: x read + y written; backward: x, dy read + dx written; frozen backward: dy
   read + dx written; parameters and statistics added). Every timed fastnorm result is also compared
   with torch's (a wrong result is flagged in the table);
3. ``variants``: the fused training kernels under other plans (group size, schedule lag, item size)
   on a subset of cases;
4. ``tests``: tests/test_batch_norm*.py and tests/test_convert.py on CUDA (pytest -n 8).

``runner`` (``bn_ab.py``'s ops) also takes ``frozen_params``: the frozen backward with dγ and dβ (the suite's frozen
mode; fewest bytes x, dy read + dx written), and ``relu_bwd``: the training backward of relu(bn(x) + z) for x, γ, β
and z (fewest bytes dy, x, y read + dx, dz written). Its check is against torch in float32 with the ReLU's mask
taken from fastnorm's output: against torch's own 16-bit result every 16-bit case was flagged (session 34, in every
column, the two-launch path's and torch's alike), since torch rounds bn(x) before adding z and fastnorm the sum once,
so elements near 0 fall on different sides of the ReLU and their dx, dz differ by a whole dy.

Kernels are compiled first in parallel worker processes (filling Triton's on-disk cache). Results go
to $OUT/batchnorm.json when $OUT is set. Timing: triton.testing.do_bench, median, L2 flushed.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = [(256, 64, 56, 56), (256, 256, 28, 28), (256, 1024, 14, 14), (128, 2048, 7, 7), (8, 256, 128, 128)]
DTYPES = {"bf16": (torch.bfloat16, torch.float32), "fp32": (torch.float32, torch.float32)}
OPS = ("train_fwd", "train_bwd", "eval_fwd", "frozen_bwd")


def log(*a):
    print(*a, flush=True)


# ----------------------------------------------------------------------------------------------- cases


def make_case(shape, dtype_name, cl, seed=0):
    dtype, pdtype = DTYPES[dtype_name]
    g = torch.Generator(device="cuda").manual_seed(seed)
    c = shape[1]
    x = torch.randn(shape, device="cuda", generator=g).mul_(2).add_(0.5).to(dtype)
    dy = torch.randn(shape, device="cuda", generator=g).to(dtype)
    if cl:
        x = x.to(memory_format=torch.channels_last)
        dy = dy.to(memory_format=torch.channels_last)
    w = (torch.rand(c, device="cuda", generator=g) + 0.5).to(pdtype)
    b = torch.randn(c, device="cuda", generator=g).to(pdtype)
    rm = torch.randn(c, device="cuda", generator=g) * 0.1
    rv = torch.rand(c, device="cuda", generator=g) + 0.5
    return dict(x=x, dy=dy, w=w, b=b, rm=rm, rv=rv)


def case_key(shape, dtype_name, cl):
    """A case's name in the tables, the JSON and the BN_VARIANT_CASES filter."""
    return f"{dtype_name} {'CL' if cl else 'NCHW'} {shape}"


def fewest_bytes(op, case):
    x = case["x"]
    n = x.numel() * x.element_size()
    c = x.shape[1]
    params = c * 4 * 6
    return {"train_fwd": 2 * n, "train_bwd": 3 * n, "eval_fwd": 2 * n, "frozen_bwd": 2 * n, "frozen_params": 3 * n,
            "stats": n, "relu_bwd": 5 * n}[op] + params


def runner(op, impl, case):
    """A closure running ``op`` with ``impl`` ("fastnorm" or "torch") on ``case``; returns (fn, result_fn)."""
    import fastnorm

    x, dy, w, b, rm, rv = (case[k] for k in ("x", "dy", "w", "b", "rm", "rv"))
    bn = fastnorm.batch_norm if impl == "fastnorm" else F.batch_norm
    if op == "train_fwd":
        rm_, rv_ = rm.clone(), rv.clone()
        return (lambda: bn(x, rm_, rv_, w, b, True, 0.1, 1e-5)), (lambda: (bn(x, rm.clone(), rv.clone(), w, b, True,
                                                                             0.1, 1e-5),))
    if op == "eval_fwd":
        return (lambda: bn(x, rm, rv, w, b, False, 0.1, 1e-5)), (lambda: (bn(x, rm, rv, w, b, False, 0.1, 1e-5),))
    if op == "train_bwd":
        xg = x.detach().requires_grad_(True)
        wg = w.detach().requires_grad_(True)
        bg = b.detach().requires_grad_(True)
        y = bn(xg, None, None, wg, bg, True, 0.1, 1e-5)
        return (lambda: torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True)), \
            (lambda: torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True))
    if op == "relu_bwd":  # the training backward of relu(bn(x) + z) for x, w, b and z (reads dy, x, y; writes dx, dz)
        xg, wg, bg = (t.detach().requires_grad_(True) for t in (x, w, b))
        zg = _relu_z(case).requires_grad_(True)
        if impl == "fastnorm":
            y = fastnorm.batch_norm(xg, None, None, wg, bg, True, 0.1, 1e-5, activation="relu", z=zg)
        else:
            y = F.relu(F.batch_norm(xg, None, None, wg, bg, True, 0.1, 1e-5) + zg)
        return (lambda: torch.autograd.grad(y, (xg, wg, bg, zg), dy, retain_graph=True)), \
            (lambda: torch.autograd.grad(y, (xg, wg, bg, zg), dy, retain_graph=True))
    if op == "stats":  # the training forward's first pass alone: per-channel (mean, M2)
        if impl == "fastnorm":
            fn = functools.partial(fastnorm.ops.batch_norm.local_stats, x)
            return fn, fn
        dims = [d for d in range(x.dim()) if d != 1]

        def torch_stats():
            var, mean = torch.var_mean(x, dim=dims, correction=0)
            return mean.float(), var.float() * (x.numel() // x.shape[1])

        return torch_stats, torch_stats
    if op in ("frozen_bwd", "frozen_params"):  # dx alone; dx, dγ and dβ (the suite's frozen mode)
        xg = x.detach().requires_grad_(True)
        params = op == "frozen_params"
        wg, bg = (t.detach().requires_grad_(params) for t in (w, b))
        y = bn(xg, rm, rv, wg, bg, False, 0.1, 1e-5)
        wrt = (xg, wg, bg) if params else (xg,)
        return (lambda: torch.autograd.grad(y, wrt, dy, retain_graph=True)), \
            (lambda: torch.autograd.grad(y, wrt, dy, retain_graph=True))
    raise ValueError(op)


def rel_err(a, e):
    a = a.float()
    e = e.float()
    return float((a - e).abs().max() / e.abs().max().clamp_min(1e-30))


# --------------------------------------------------------------------------------------------- check


def check():
    """fp32, small shapes: fastnorm vs torch in every mode."""
    import fastnorm

    torch.manual_seed(0)
    worst = 0.0
    n = 0
    for shape in [(8, 16, 9, 9), (4, 65, 5, 7), (16, 3, 33, 31), (32, 129, 1, 1), (64, 32, 4, 4), (6, 64)]:
        for cl in (False, True):
            if cl and len(shape) != 4:
                continue
            case = make_case(shape, "fp32", cl)
            x, dy, w, b, rm, rv = (case[k] for k in ("x", "dy", "w", "b", "rm", "rv"))
            for mode in ("train", "eval", "frozen"):
                outs = []
                for impl in ("fastnorm", "torch"):
                    xg = x.detach().clone().requires_grad_(True)
                    wg = w.detach().clone().requires_grad_(mode != "frozen")
                    bg = b.detach().clone().requires_grad_(mode != "frozen")
                    rm_, rv_ = rm.clone(), rv.clone()
                    if impl == "fastnorm":
                        y = fastnorm.batch_norm(xg, rm_, rv_, wg, bg, mode == "train", 0.1, 1e-5)
                    else:
                        y = F.batch_norm(xg, rm_, rv_, wg, bg, mode == "train", 0.1, 1e-5)
                    ins = (xg, wg, bg) if mode != "frozen" else (xg,)
                    grads = torch.autograd.grad(y, ins, dy)
                    outs.append((y, rm_, rv_, *grads))
                errs = [rel_err(a, e) for a, e in zip(*outs, strict=True)]
                worst = max(worst, *errs)
                n += 1
                if max(errs) > 1e-4:
                    log(f"  MISMATCH {shape} cl={cl} {mode}: {[f'{e:.2e}' for e in errs]}")
    log(f"check: {n} cases, worst relative error vs torch {worst:.2e}")
    return worst < 1e-4


# -------------------------------------------------------------------------------------------- compile


def _warm_worker(args):
    shape, dtype_name, cl, overrides = args
    os.environ.setdefault("TRITON_PRINT_AUTOTUNING", "0")
    _apply_overrides(overrides)
    case = make_case(shape, dtype_name, cl)
    for op in OPS:
        fn, _ = runner(op, "fastnorm", case)
        fn()
    torch.cuda.synchronize()
    return shape


def _apply_overrides(overrides):
    """Set ``fastnorm.kernels.config``'s names to the values of ``overrides`` (a name it lacks: an error)."""
    from fastnorm.kernels import config

    for k, v in (overrides or {}).items():
        if not hasattr(config, k):
            raise SystemExit(f"config has no {k}")
        setattr(config, k, v)  # config drops its cached plans on every change


def precompile(jobs):
    t = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(min(12, len(jobs))) as pool:
        pool.map(_warm_worker, jobs)
    log(f"precompiled {len(jobs)} cases in {time.time() - t:.1f}s")


# ----------------------------------------------------------------------------------------------- time


def bench(fn):
    import triton

    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e-3


def graphed(fn, stream=None):
    """``fn`` captured in a CUDA graph (after one warm-up call) -> the graph's replay, timed by ``bench`` as GPU time
    without the host's per-call cost. ``stream``: the capturing stream, when the op's inputs (a forward's output,
    whose backward autograd runs on its forward's stream) were made on it; else torch's own side stream."""
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        fn()
    torch.cuda.synchronize()
    return g.replay


def copy_bandwidth():
    src = torch.empty(1 << 29, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    t = bench(lambda: dst.copy_(src))
    return 2 * src.numel() * src.element_size() / t


def _relu_z(case):
    """relu_bwd's residual z: x's layout, another tensor's values."""
    return case["dy"].detach().flip(0)


def _relu_bwd_reference(case):
    """relu_bwd's gradients in float32 through torch, with the ReLU's mask taken from fastnorm's own output: which
    side of 0 an element near it falls on depends on where the sum bn(x) + z is rounded (torch rounds bn(x) to a
    16-bit dtype first, fastnorm the sum once), so the check is of the backward given the forward's mask."""
    import fastnorm

    x, dy, w, b = (case[k] for k in ("x", "dy", "w", "b"))
    mask = fastnorm.batch_norm(x, None, None, w, b, True, 0.1, 1e-5, activation="relu", z=_relu_z(case)) > 0
    x32, w32, b32, z32 = (t.detach().float().requires_grad_(True) for t in (x, w, b, _relu_z(case)))
    pre = F.batch_norm(x32, None, None, w32, b32, True, 0.1, 1e-5) + z32
    return torch.autograd.grad(pre, (x32, w32, b32, z32), dy.float() * mask)


def compare(op, case):
    """Worst normwise error of fastnorm's result vs torch's (torch computing in its own way; relu_bwd: against
    ``_relu_bwd_reference``)."""
    _, ours = runner(op, "fastnorm", case)
    if op == "relu_bwd":
        return max(rel_err(a, e) for a, e in zip(ours(), _relu_bwd_reference(case), strict=True))
    _, theirs = runner(op, "torch", case)
    return max(rel_err(a, e) for a, e in zip(ours(), theirs(), strict=True))


def time_all(copy_bw, results):
    from fastnorm.kernels import config

    for dtype_name in DTYPES:
        for cl in (False, True):
            for shape in SHAPES:
                case = make_case(shape, dtype_name, cl)
                row = {}
                for op in OPS:
                    nbytes = fewest_bytes(op, case)
                    err = compare(op, case)
                    ts = {}
                    for impl in ("fastnorm", "torch"):
                        fn, _ = runner(op, impl, case)
                        ts[impl] = bench(fn)
                    row[op] = dict(fastnorm_s=ts["fastnorm"], torch_s=ts["torch"], bytes=nbytes,
                                   fastnorm_pct=100 * nbytes / ts["fastnorm"] / copy_bw,
                                   torch_pct=100 * nbytes / ts["torch"] / copy_bw, err=err)
                    if op.startswith("train"):  # the other training path (one launch vs two)
                        chosen = config.BN_TRAIN_FUSED
                        config.BN_TRAIN_FUSED = not chosen
                        fn, _ = runner(op, "fastnorm", case)
                        t_alt = bench(fn)
                        config.BN_TRAIN_FUSED = chosen
                        row[op]["alt_pct"] = 100 * nbytes / t_alt / copy_bw
                        row[op]["fused"] = chosen
                key = case_key(shape, dtype_name, cl)
                results["time"][key] = row
                tol = 2e-2 if dtype_name == "bf16" else 1e-4
                flag = {op: (f" ERR {r['err']:.1e}" if r["err"] > tol else "") for op, r in row.items()}
                log(key + "  " + "  ".join(
                    f"{op}: {r['fastnorm_pct']:.0f}/{r.get('alt_pct', 0):.0f}/{r['torch_pct']:.0f}{flag[op]}"
                    for op, r in row.items()))
                del case
                torch.cuda.empty_cache()


def table(results):
    lines = ["", "% of copy bandwidth, fastnorm (other training path) / torch eager "
             "(train fwd | train bwd | eval fwd | frozen bwd)"]
    for key, row in results["time"].items():
        cells = " | ".join(f"{row[op]['fastnorm_pct']:3.0f}" + (f" ({row[op]['alt_pct']:3.0f})" if "alt_pct" in row[op]
                                                                 else "") + f" / {row[op]['torch_pct']:3.0f}"
                           for op in OPS)
        lines.append(f"{key:34s} {cells}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- variants

VARIANT_CASES = [((256, 64, 56, 56), "bf16", False), ((256, 64, 56, 56), "bf16", True),
                 ((256, 1024, 14, 14), "bf16", False), ((128, 2048, 7, 7), "bf16", True),
                 ((128, 2048, 7, 7), "bf16", False), ((256, 256, 28, 28), "fp32", False),
                 ((32, 512, 28, 28), "bf16", False), ((8, 256, 128, 128), "bf16", False),
                 # fp32 channels-last and 7x7: the rows where torch eager was faster (report, session 5)
                 ((256, 64, 56, 56), "fp32", True), ((8, 256, 128, 128), "fp32", True),
                 ((128, 2048, 7, 7), "fp32", False), ((128, 2048, 7, 7), "fp32", True),
                 # tensors that fit the single-read (resident) training forward on 132 SMs
                 ((32, 2048, 7, 7), "bf16", False), ((32, 2048, 7, 7), "bf16", True),
                 ((16, 1024, 14, 14), "bf16", False), ((16, 1024, 14, 14), "bf16", True),
                 ((8, 64, 56, 56), "bf16", False), ((8, 64, 56, 56), "bf16", True),
                 ((32, 2048, 7, 7), "fp32", False), ((32, 2048, 7, 7), "fp32", True),
                 ((16, 1024, 14, 14), "fp32", False), ((16, 1024, 14, 14), "fp32", True),
                 ((8, 64, 56, 56), "fp32", False), ((8, 64, 56, 56), "fp32", True),
                 # ResNet-50's 6.4M-element layers at batch 32: past the 16-bit single read's budget counted in fp32
                 # values, within it counted in the loaded bytes (session 34)
                 ((32, 256, 28, 28), "bf16", False), ((32, 256, 28, 28), "bf16", True),
                 ((32, 64, 56, 56), "bf16", False), ((32, 64, 56, 56), "bf16", True),
                 ((32, 1024, 14, 14), "bf16", False), ((32, 1024, 14, 14), "bf16", True),
                 # ResNet-50's layer3 at batch 32: the suite's smallest shape (training backward slower than torch's
                 # in GPU time, session 27)
                 ((32, 256, 14, 14), "bf16", False), ((32, 256, 14, 14), "bf16", True),
                 ((32, 256, 14, 14), "fp32", False), ((32, 256, 14, 14), "fp32", True),
                 # fp32 NCHW rows slower than a peer in session 11's suite (training forward, evaluation)
                 ((32, 512, 28, 28), "fp32", False), ((256, 1024, 14, 14), "fp32", False),
                 # fp32 channels-last training backward slower than cuDNN's in GPU time (session 34's suite)
                 ((32, 512, 28, 28), "fp32", True),
                 # long NCHW runs (S = 60800, 12544, 784), to check that plans for short runs leave them alone
                 ((2, 256, 200, 304), "bf16", False), ((128, 64, 112, 112), "bf16", False),
                 ((256, 256, 28, 28), "bf16", False),
                 # fp32 evaluation, where torch.compile's pointwise kernel was faster (session 15's suite)
                 ((256, 64, 56, 56), "fp32", False), ((8, 256, 128, 128), "fp32", False),
                 # NCHW sizes whose power-of-two factor is 1 or 2 (S = 5625, 950): the spatial size as an argument
                 ((16, 256, 75, 75), "bf16", False), ((16, 256, 75, 75), "fp32", False),
                 ((32, 256, 25, 38), "bf16", False),
                 # Inception-v3's odd sizes (S = 147², 35², 17²: runs with no two 16-bit elements aligned)
                 ((32, 64, 147, 147), "bf16", False), ((32, 288, 35, 35), "bf16", False),
                 ((32, 768, 17, 17), "bf16", False),
                 # ResNet-50's layers at batch 8 (SyncBatchNorm's per-GPU stack) that take the single-read forward
                 # with the whole channel in one program (NCHW: one channel a program, then 2 and 16), and one in
                 # channels-last
                 ((8, 128, 56, 56), "fp32", False), ((8, 128, 56, 56), "bf16", False),
                 ((8, 128, 28, 28), "bf16", False), ((8, 256, 28, 28), "bf16", False),
                 ((8, 2048, 7, 7), "bf16", False), ((8, 128, 56, 56), "bf16", True),
                 # the report's channels-last bf16 rows below the NCHW ones (session 26)
                 ((8, 256, 128, 128), "bf16", True), ((256, 256, 28, 28), "bf16", True),
                 ((256, 1024, 14, 14), "bf16", True), ((2, 256, 200, 304), "bf16", True),
                 # channels-last frozen backward below its NCHW form (session 35)
                 ((32, 512, 28, 28), "bf16", True), ((256, 256, 28, 28), "fp32", True),
                 # fp32 channels-last evaluation where torch.compile's pointwise kernel was faster (session 34's suite)
                 ((256, 1024, 14, 14), "fp32", True),
                 # channels-last ResNet-50 layers at batch 256 (128): the row-strided statistics pass's channel counts
                 # (session 36)
                 ((256, 128, 28, 28), "bf16", True), ((256, 128, 56, 56), "bf16", True),
                 ((256, 512, 28, 28), "bf16", True), ((128, 64, 112, 112), "bf16", True),
                 ((256, 256, 56, 56), "bf16", True), ((256, 128, 28, 28), "fp32", True)]
VARIANTS = {
    "default": {},
    "onelaunch": {"BN_TRAIN_FUSED": True},
    "twolaunch": {"BN_TRAIN_FUSED": False},
    "onegroup": {"BN_GROUP_BYTES": 1 << 40},
    "group16MB": {"BN_GROUP_BYTES": 16 << 20},
    "ips8": {"BN_ITEMS_PER_SM": {"fused": 8, "stream": 8, "frozen": 8}},
    "ips16": {"BN_ITEMS_PER_SM": {"fused": 16, "stream": 16, "frozen": 16}},
    "ips32": {"BN_ITEMS_PER_SM": {"fused": 32, "stream": 32, "frozen": 32}},
    "warps4": {"BN_WARPS": 4},
    "clcb32": {"BN_CL_CB": {"fused": 32, "stream": 32, "sums": 32}, "BN_CL_SUMS": None, "BN_CL_STREAM_ROW_BYTES": 0},
    "clcb64": {"BN_CL_CB": {"fused": 64, "stream": 64, "sums": 64}, "BN_CL_SUMS": None, "BN_CL_STREAM_ROW_BYTES": 0},
    "tile8K": {"BN_TILE": {"fwd": 8192, "bwd": 4096, "sums": 8192}},
    "rows2048": {"BN_ROW_LANES_MAX": 2048},
    "rowcb4": {"BN_NCHW_ROW_MIN_CB": 4},
    "rowcb8": {"BN_NCHW_ROW_MIN_CB": 8},
    "rowcb16": {"BN_NCHW_ROW_MIN_CB": 16},
    "rows256cb8": {"BN_ROW_LANES_MAX": 256, "BN_NCHW_ROW_MIN_CB": 8},
}
def _loop_variants():
    """Prefetch depth and register cap of one kernel's tile loop, each against the current defaults."""
    from fastnorm.kernels import config

    out = {}
    for loop, stages in config.BN_LOOP_STAGES.items():
        for n in sorted({1, 2, 3} - {stages}):
            out[f"{loop}_st{n}"] = {"BN_LOOP_STAGES": {**config.BN_LOOP_STAGES, loop: n}}
        for r in sorted({None, 64, 80} - {config.BN_MAXNREG[loop]}, key=str):
            out[f"{loop}_reg{r or 'free'}"] = {"BN_MAXNREG": {**config.BN_MAXNREG, loop: r}}
    return out


VARIANTS.update(_loop_variants())
VARIANTS["item64K"] = {"BN_ITEM": {"fused": 65536, "stream": 65536}}
VARIANTS["merge1024"] = {"BN_MERGE_ELEMS": 1024}
VARIANTS["noresident"] = {"BN_RESIDENT": False}
VARIANTS["res_w16"] = {"BN_RESIDENT_WARPS": {2: 16, 4: 16, 8: 16}}
VARIANTS["res_16K"] = {"BN_RESIDENT_BYTES": 16384 * 4}


def selected_variants():
    """VARIANTS' (name, overrides) named in $BN_VARIANTS (comma-separated; default: all), always with "default"."""
    names = os.environ.get("BN_VARIANTS")
    return [(n, ov) for n, ov in VARIANTS.items() if not names or n in names.split(",") or n == "default"]


def selected_cases():
    """VARIANT_CASES whose key contains one of the ';'-separated substrings of $BN_VARIANT_CASES (default: all)."""
    filters = os.environ.get("BN_VARIANT_CASES", "").split(";")
    return [(s, d, cl) for s, d, cl in VARIANT_CASES if any(f in case_key(s, d, cl) for f in filters)]


def variants(copy_bw, results):
    from fastnorm.kernels import config

    variant_items = selected_variants()
    variant_items += variant_items[::-1]  # each variant twice, in both orders (the first timings run colder)

    saved = {k: getattr(config, k) for v in VARIANTS.values() for k in v}
    for shape, dtype_name, cl in selected_cases():
        key = case_key(shape, dtype_name, cl)
        case = make_case(shape, dtype_name, cl)
        t_torch = {op: bench(runner(op, "torch", case)[0]) for op in OPS}
        results["variants"].setdefault(key, {})["torch"] = {op: 100 * fewest_bytes(op, case) / t / copy_bw
                                                            for op, t in t_torch.items()}
        cells = ["torch=" + "/".join(f"{results['variants'][key]['torch'][op]:.0f}" for op in OPS)]
        for name, ov in variant_items:
            _apply_overrides({**saved, **ov})
            r = {}
            for op in OPS:
                err = compare(op, case)
                if err > (2e-2 if dtype_name == "bf16" else 1e-4):
                    log(f"{key} {name} {op}: ERR {err:.1e} against torch")
                fn, _ = runner(op, "fastnorm", case)
                r[op] = 100 * fewest_bytes(op, case) / bench(fn) / copy_bw
            prev = results["variants"].setdefault(key, {}).get(name)
            if prev:  # the better of the two passes
                r = {op: max(v, prev[op]) for op, v in r.items()}
            results["variants"][key][name] = r
            cells.append(f"{name}=" + "/".join(f"{r[op]:.0f}" for op in OPS))
        log(key + "  " + " ".join(cells))
        del case
        torch.cuda.empty_cache()
    _apply_overrides(saved)


# ---------------------------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sections", default="check,time,variants")
    ap.add_argument("--check-timeout", type=int, default=120)
    ap.add_argument("--tests-timeout", type=int, default=240)
    args = ap.parse_args()
    sections = args.sections.split(",")
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "time": {}, "variants": {},
               "date": time.strftime("%Y-%m-%d")}
    import triton

    results["triton"] = triton.__version__
    log(f"{results['device']} torch {torch.__version__} triton {triton.__version__}")
    if "check" in sections:
        r = subprocess.run([sys.executable, __file__, "--sections", "_check"], timeout=args.check_timeout)
        if r.returncode != 0:
            log("check FAILED (or hung); stopping")
            sys.exit(1)
    if "_check" in sections:
        sys.exit(0 if check() else 1)
    copy_bw = None
    if "time" in sections or "variants" in sections:
        jobs = [(s, d, cl, {}) for d in DTYPES for cl in (False, True) for s in SHAPES] if "time" in sections else []
        if "variants" in sections:
            jobs += [(s, d, cl, ov) for s, d, cl in selected_cases() for _, ov in selected_variants()]
        precompile(jobs)
        copy_bw = copy_bandwidth()
        results["copy_GBps"] = copy_bw / 1e9
        log(f"copy bandwidth {copy_bw / 1e9:.0f} GB/s")
    if "variants" in sections:
        variants(copy_bw, results)
    if "time" in sections:
        time_all(copy_bw, results)
        log(table(results))
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "batchnorm.json"), "w") as f:
            json.dump(results, f, indent=1)
    if "tests" in sections:
        t = time.time()
        try:
            r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-n", "8", "-p", "no:warnings",
                                "tests/test_batch_norm.py", "tests/test_batch_norm_stages.py", "tests/test_convert.py"],
                               timeout=args.tests_timeout)
            log(f"tests exit status {r.returncode} in {time.time() - t:.0f}s")
        except subprocess.TimeoutExpired:
            log(f"tests timed out after {args.tests_timeout}s")


if __name__ == "__main__":
    main()
