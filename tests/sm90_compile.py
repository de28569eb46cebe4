"""Compile every kernel specialization that fastnorm's host code launches, for sm_90, without a GPU.

The interpreter runs the kernels' Python, so it does not see what only Triton's compiler checks: a
variable whose type differs between the branches of an ``if`` (a float in one, a pointer in the other), a
shape mismatch in a branch the test shapes never take, a specialization that does not lower. This script
(run by ``tests/test_sm90_compile.py`` in a child process with ``TRITON_INTERPRET=0``):

1. forces the kernel path on (``uses_triton``) and replaces ``_Launcher.__call__`` with a recorder, then
   runs the public functions, forward and backward, on meta tensors (no data, any size) over the dtypes,
   layouts, options and size strategies of every kernel, plus the stage functions and the symmetric-memory
   exchange launches of SyncBatchNorm with a stand-in exchange;
2. binds each recorded launch with Triton's own binder (``kernels._launch.specialization``: argument types as
   annotated, pointer dtypes, 16-byte alignment, integers equal to 1 / divisible by 16 / 64-bit, constexprs)
   and compiles each distinct specialization with ``triton.compile`` for ``GPUTarget("cuda", 90, 32)``
   (Triton's own ptxas included);
3. fails a BatchNorm kernel that converts a floating-point tensor of more than 1024 elements between layouts (a
   data tile through shared memory: ``_no_tile_conversions``).

Every distinct (kernel, constexprs, launch options) is compiled down to a cubin; its variants that differ in
pointer dtypes, integer widths or 16-byte divisibility go through the front end (source to Triton IR, where type
errors show) only, which keeps the run to a few minutes on two cores. Prints one JSON line per failure, then a
summary line; exits 1 if any failed.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor

assert os.environ.get("TRITON_INTERPRET", "0") in ("", "0"), "run without TRITON_INTERPRET"

import torch  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

SM_COUNT = 132  # an H100/H200: plans as on the device the kernels are tuned for
TARGET = GPUTarget("cuda", 90, 32)


# ------------------------------------------------------------------------------------------- recording


def record_launches() -> list[tuple]:
    """Run the host code over its cases on meta tensors; -> the distinct launches as compile jobs."""
    import fastnorm
    from fastnorm.kernels import config

    jobs = install_recorder()
    config.BN_SPATIAL_COMPILED = 1 << 30  # every size compiled in (S as an argument: ``spatial_argument``)
    for case in _norm_cases(fastnorm) + _batch_norm_cases(fastnorm, config) + _stage_cases():
        case()
    return list(jobs.values())


def install_recorder() -> dict[str, tuple]:
    """Route every kernel launch into the dict returned (its repr -> the compile job, in launch order) instead of a
    GPU, with the kernel path forced on and plans made for SM_COUNT multiprocessors."""
    from fastnorm.kernels import _launch, config
    from fastnorm.ops import batch_norm as bn_ops
    from fastnorm.ops import layer_norm as ln_ops

    jobs: dict[str, tuple] = {}

    def recorder(self, grid, args, meta, num_warps, num_stages, traceable=False, maxnreg=None, cooperative=False):
        job = _job(self.fn, args, meta, num_warps, num_stages, maxnreg, cooperative)
        jobs.setdefault(repr(job), job)

    _launch._Launcher.__call__ = recorder
    ln_ops.uses_triton = bn_ops.uses_triton = lambda t: True
    config.multiprocessor_count = lambda device_index: SM_COUNT  # (config drops its cached plans on every change)
    return jobs


def batch_norm_paths(fastnorm, config, x, rm, rv, w, b) -> None:
    """The BatchNorm launches over x (with gradients): training in each of its forms (single read, one launch, two
    launches; the dx pass flat at every size and tiled), the frozen step and evaluation (their backward flat at every
    size and tiled), forward and backward."""
    for resident, fused in ((True, False), (False, True), (False, False)):
        config.BN_RESIDENT, config.BN_TRAIN_FUSED = resident, fused
        _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True)
    for dx_flat in _dx_passes(config):
        with _setting(config, "BN_DX_FLAT", dx_flat):
            _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True)
            _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w.detach(), b.detach(), training=False)  # frozen dx alone
    config.BN_RESIDENT, config.BN_TRAIN_FUSED = True, False
    for frozen_flat, frozen_rows in zip(_frozen_passes(config, stages=(1, 3)),
                                        _frozen_rows_passes(config, stages=(1, 3)), strict=True):
        with _setting(config, "BN_FROZEN_FLAT", frozen_flat), _setting(config, "BN_FROZEN_ROWS", frozen_rows):
            _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, use_global_stats=True)
            _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=False)


def _dx_passes(config) -> tuple:
    """BN_DX_FLAT's settings that take the dx pass flat at every size, and tiled at every size."""
    return (0, *config.BN_DX_FLAT[1:]), None


def _frozen_passes(config, stages: tuple[int, ...] = (1,)) -> tuple:
    """BN_FROZEN_FLAT's settings that take the frozen backward with parameter sums flat at every size and batch
    (pipelined each of ``stages`` deep), and tiled."""
    everywhere = {**config.BN_FROZEN_FLAT, "min_numel": 0, "min_images": 1, "min_per_sm": 0}
    return (*({**everywhere, "stages": k} for k in stages), None)


def _frozen_rows_passes(config, stages: tuple[int, ...] = (1,)) -> tuple:
    """BN_FROZEN_ROWS' settings that take the channels-last frozen backward with parameter sums row-strided at every
    size (pipelined each of ``stages`` deep), and tiled."""
    everywhere = {**config.BN_FROZEN_ROWS, "min_numel": 0}
    return (*({**everywhere, "stages": k} for k in stages), None)


@contextlib.contextmanager
def _setting(config, name: str, value):
    """config.<name> = value inside the block, then back to what it was (the cases after run under the default)."""
    old = getattr(config, name)
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, old)


def _meta(*shape, dtype=torch.float32, grad=False, channels_last=False):
    t = torch.empty(shape, dtype=dtype, device="meta")
    if channels_last:
        t = t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t.requires_grad_(grad)


def _fwd_bwd(fn, *args, every_output=False, **kwargs):
    """``fn(*args, **kwargs)`` and, when its first output (``every_output``: each of its outputs, such as the norms'
    residual_out) needs one, the backward for every input tensor."""
    out = fn(*args, **kwargs)
    outs = [t for t in (out if isinstance(out, tuple) else (out,))[: None if every_output else 1] if t.requires_grad]
    if outs:
        inputs = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor) and t.requires_grad]
        torch.autograd.grad(outs, inputs, [torch.empty_like(t) for t in outs])


def _norm_cases(fastnorm) -> list:
    cases = []
    ns = (1, 7, 128, 1000, 4097, 8193, 16385, 32769, 65536, 262144)
    for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
        for n in ns:
            for is_rms in (False, True):
                for wdt in {dtype, torch.float32}:
                    def case(dtype=dtype, n=n, is_rms=is_rms, wdt=wdt):
                        x = _meta(64, n, dtype=dtype, grad=True)
                        w = _meta(n, dtype=wdt, grad=True)
                        if is_rms:
                            _fwd_bwd(fastnorm.rms_norm, x, n, w)
                        else:
                            _fwd_bwd(fastnorm.layer_norm, x, n, w, _meta(n, dtype=wdt, grad=True))
                    cases.append(case)

    def options():
        for dtype in (torch.bfloat16, torch.float32):
            for n in (256, 20000, *_tuned_rows(dtype.itemsize)):
                x = _meta(33, n, dtype=dtype, grad=True)
                r = _meta(33, n, dtype=dtype, grad=True)
                w = _meta(n, dtype=torch.float32, grad=True)
                b = _meta(n, dtype=torch.float32, grad=True)
                _fwd_bwd(fastnorm.layer_norm, x, n, w, b, residual=r, residual_dtype=torch.float32,
                         weight_offset=1.0, every_output=True)
                _fwd_bwd(fastnorm.rms_norm, x, n, None, residual=r)
                _fwd_bwd(fastnorm.rms_norm, x, n, w, residual=r, residual_dtype=torch.float32, every_output=True)
                _fwd_bwd(fastnorm.rms_norm, x, n, w)  # float32 weight, no residual
                r16 = _meta(33, n, dtype=torch.bfloat16, grad=True)  # a narrower residual than x (float32 x)
                _fwd_bwd(fastnorm.layer_norm, x, n, w, b, residual=r16, every_output=True)
                _fwd_bwd(fastnorm.layer_norm, x, n)
                fastnorm.layer_norm(x.detach(), n, w.detach())  # inference: no saved statistics
        big = _meta(2**31 // 1024 + 1, 1024, dtype=torch.bfloat16, grad=True)  # 64-bit offsets
        _fwd_bwd(fastnorm.layer_norm, big, 1024)

    def scalar_rows():  # 16-bit rows read one element a load: both odd ends of every scalar rows' range
        from fastnorm.kernels import config
        from fastnorm.kernels import layer_norm as kernels

        for n in sorted({end for rows in config.scalar_row_ranges() for end in rows.odd_ends()}):
            x = _meta(64, n, dtype=torch.bfloat16, grad=True)
            w, b = _meta(n, dtype=torch.bfloat16, grad=True), _meta(n, dtype=torch.bfloat16, grad=True)
            _fwd_bwd(fastnorm.layer_norm, x, n, w, b)
            _fwd_bwd(fastnorm.rms_norm, x, n, w)
            for is_rms in (False, True):  # traced (torch.compile): no split rows
                stats = _meta(64, dtype=torch.float32)
                kernels.norm_bwd(x.detach(), x.detach(), w.detach(), not is_rms, None if is_rms else stats, stats,
                                 None, torch.bfloat16, None, 1e-5, 0.0, is_rms, torch.bfloat16, traceable=True)

    def vector_rows():  # rows read in vectors in a vector rows' range: its first aligned row and its last
        from fastnorm.kernels import config

        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            for rows in config.vector_row_ranges(dtype.itemsize):
                for n in (config._aligned_row(rows.low), rows.high):
                    x = _meta(64, n, dtype=dtype, grad=True)
                    w, b = _meta(n, dtype=dtype, grad=True), _meta(n, dtype=dtype, grad=True)
                    _fwd_bwd(fastnorm.layer_norm, x, n, w, b)
                    _fwd_bwd(fastnorm.rms_norm, x, n, w)

    def device_entries():  # the entries of named devices (meta tensors have no device: name one)
        from fastnorm.kernels import config

        named = config.device_name
        try:
            for part, by_size in config.NORM_TUNED_BY_DEVICE.items():
                config.device_name = lambda index, part=part: part
                for dtype in (torch.bfloat16, torch.float32):
                    for _, _, key in by_size.get(dtype.itemsize, {}):
                        first = 3 * key // 4 + 1 if key & (key - 1) == 0 else 2 * key // 3 + 1  # the key's rows
                        for n, wdt in ((key, dtype), (first, dtype), (key, torch.float32)):
                            x = _meta(33, n, dtype=dtype, grad=True)
                            r = _meta(33, n, dtype=dtype, grad=True)
                            w, b = _meta(n, dtype=wdt, grad=True), _meta(n, dtype=wdt, grad=True)
                            for residual in (None, r):
                                _fwd_bwd(fastnorm.layer_norm, x, n, w, b, residual=residual, every_output=True)
                                _fwd_bwd(fastnorm.rms_norm, x, n, w, residual=residual, every_output=True)
        finally:
            config.device_name = named
    return cases + [options, scalar_rows, vector_rows, device_entries]


def _tuned_rows(elem_size: int) -> list[int]:
    """A row length of every measured entry of the norms' tables for ``elem_size`` (its key): the options above
    (a residual, whose tensors the loops prefetch too) run on each, as the plain cases run on the rules' sizes;
    where an exact entry takes the key's own N, an even row two shorter reaches the key's entry (odd rows take the
    scalar rows' configs)."""
    from fastnorm.kernels import config

    tuned, split = config._tables(elem_size)
    exact = config.NORM_TUNED_EXACT if elem_size == 2 else {}
    return sorted({n for _, _, n in tuned} | {n for _, n in split} | {m for _, _, n in exact for m in (n, n - 2)})


BN_SHAPES = [((8, 3, 14, 14), False), ((4, 5, 7, 7), False), ((2, 65, 3, 3), False), ((6, 129, 20, 20), False),
             ((8, 3, 14, 14), True), ((4, 64, 7, 7), True), ((16, 17), False), ((4, 6, 10), False),
             ((2, 3, 4, 5, 6), False), ((2, 3, 4, 5, 6), True), ((64, 256, 56, 56), False), ((64, 256, 56, 56), True)]


def _batch_norm_cases(fastnorm, config) -> list:
    cases = []
    for shape, cl in BN_SHAPES:
        for dtype, pdtype in ((torch.bfloat16, torch.float32), (torch.float16, torch.float16),
                              (torch.float32, torch.float32), (torch.float64, torch.float64)):
            def case(shape=shape, cl=cl, dtype=dtype, pdtype=pdtype):
                c = shape[1]
                x = _meta(*shape, dtype=dtype, grad=True, channels_last=cl)
                w, b = _meta(c, dtype=pdtype, grad=True), _meta(c, dtype=pdtype, grad=True)
                rm, rv = _meta(c), _meta(c)
                nbt = torch.empty((), dtype=torch.long, device="meta")
                for resident, fused in ((True, False), (False, True), (False, False)):
                    config.BN_RESIDENT, config.BN_TRAIN_FUSED = resident, fused
                    _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True)
                config.BN_RESIDENT, config.BN_TRAIN_FUSED = True, False
                _fwd_bwd(fastnorm.batch_norm, x, None, None, None, None, training=True)
                _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=False)
                _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w.detach(), b.detach(), training=False)  # dx alone
                z = _meta(*shape, dtype=dtype, grad=True, channels_last=cl)
                _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, momentum=None, activation="relu", z=z,
                         num_batches_tracked=nbt)
                config.BN_RESIDENT, config.BN_TRAIN_FUSED = False, False
                for dx_flat in _dx_passes(config):
                    with _setting(config, "BN_DX_FLAT", dx_flat):
                        _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, activation="relu", z=z)
                        _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w.detach(), b.detach(), training=True,
                                 use_global_stats=True)
                with _setting(config, "BN_FROZEN_FLAT", _frozen_passes(config)[0]), \
                        _setting(config, "BN_FROZEN_ROWS", _frozen_rows_passes(config)[0]):
                    _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, use_global_stats=True,
                             fix_gamma=True, activation="relu", z=z)
                    _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True)  # its sums pass (BN_SUMS_FLAT)
                config.BN_RESIDENT = True
                _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, use_global_stats=True, fix_gamma=True,
                         activation="relu")
                fastnorm.batch_norm(x.detach(), rm, rv, w.detach(), b.detach(), training=False)
            cases.append(case)

    def spatial_argument():  # NCHW kernels with S a run-time argument (past config.BN_SPATIAL_COMPILED sizes)
        config.BN_SPATIAL_COMPILED = 0
        # S = 196, 324 (factor 4), 99 (1), 90 (2), 72 (8), 96 and 256 (16; 256/16 divisible by 16 too), 64-bit offsets
        for shape in ((4, 64, 14, 14), (2, 33, 4, 9, 9), (3, 8, 9, 11), (2, 8, 10, 9), (2, 8, 8, 9), (2, 8, 8, 12),
                      (4, 64, 16, 16), (2**31 // (64 * 196) + 1, 64, 14, 14)):
            for dtype in (torch.bfloat16, torch.float32):
                c = shape[1]
                x = _meta(*shape, dtype=dtype, grad=True)
                w, b, rm, rv = _meta(c, grad=True), _meta(c, grad=True), _meta(c), _meta(c)
                batch_norm_paths(fastnorm, config, x, rm, rv, w, b)
                z = _meta(*shape, dtype=dtype, grad=True)
                _fwd_bwd(fastnorm.batch_norm, x, rm, rv, w, b, training=True, activation="relu", z=z)
        config.BN_SPATIAL_COMPILED = 1 << 30

    def whole_channels():  # single-read plans of one whole channel a program (CB = 1, SPLIT = 1)
        for shape in ((8, 128, 56, 56), (8, 128, 28, 28)):
            for dtype in (torch.bfloat16, torch.float32):
                x = _meta(*shape, dtype=dtype, grad=True)
                c = shape[1]
                _fwd_bwd(fastnorm.batch_norm, x, _meta(c), _meta(c), _meta(c, grad=True), _meta(c, grad=True),
                         training=True)

    def merge_levels():  # C = 64 at 256×56²: merges of one level (NSUB = 1, constant-specialized), frozen included
        for cl in (False, True):
            x = _meta(256, 64, 56, 56, dtype=torch.bfloat16, grad=True, channels_last=cl)
            w, b = _meta(64, grad=True), _meta(64, grad=True)
            for training in (True, False):
                _fwd_bwd(fastnorm.batch_norm, x, _meta(64), _meta(64), w, b, training=training)

    def big():  # 64-bit offsets (S = 99: the statistics pass's aligned rows too)
        for spatial in ((7, 7), (9, 11)):
            x = _meta(2**31 // (64 * math.prod(spatial)) + 1, 64, *spatial, dtype=torch.bfloat16, grad=True)
            w, b = _meta(64, grad=True), _meta(64, grad=True)
            _fwd_bwd(fastnorm.batch_norm, x, _meta(64), _meta(64), w, b, training=True)
    def frozen_rows():  # the row-strided frozen pass over tiles of 1024 channels (two blocks), and in 64 bits; the
        # same kernel as the sums pass alone (training, with ReLU and a residual; the frozen dγ, dβ alone), 16-bit x
        for shape in ((2, 1536, 2, 2), (2**31 // (64 * 49) + 1, 64, 7, 7)):
            for dtype in (torch.bfloat16, torch.float32):
                x = _meta(*shape, dtype=dtype, grad=True, channels_last=True)
                c = shape[1]
                w, b = _meta(c, grad=True), _meta(c, grad=True)
                with _setting(config, "BN_FROZEN_ROWS", _frozen_rows_passes(config)[0]):
                    _fwd_bwd(fastnorm.batch_norm, x, _meta(c), _meta(c), w, b, training=False)
                if x.element_size() not in config.BN_SUMS_ROWS["x_sizes"]:
                    continue
                with _setting(config, "BN_SUMS_ROWS", {**config.BN_SUMS_ROWS, "min_numel": 0}), \
                        _setting(config, "BN_RESIDENT", False), _setting(config, "BN_RESIDENT_BACKWARD", False):
                    z = _meta(*shape, dtype=dtype, grad=True, channels_last=True)
                    _fwd_bwd(fastnorm.batch_norm, x, _meta(c), _meta(c), w, b, training=True, activation="relu", z=z)
                    _fwd_bwd(fastnorm.batch_norm, x.detach(), _meta(c), _meta(c), w, b, training=False)

    def stats_rows():  # the row-strided statistics pass: C = 1 ((N, C) rows), 70, 1536 (two 1024-channel blocks),
        # 64-bit offsets
        for shape in ((4096, 1), (2, 70, 3, 3), (2, 1536, 2, 2), (2**31 // (64 * 49) + 1, 64, 7, 7)):
            for dtype in (torch.bfloat16, torch.float16, torch.float32):
                x = _meta(*shape, dtype=dtype, channels_last=len(shape) > 2)
                c = shape[1]
                rows = {**config.BN_STATS_ROWS, "min_numel": 0, "channels": ((1, 1 << 30),)}
                with _setting(config, "BN_RESIDENT", False), _setting(config, "BN_STATS_ROWS", rows):
                    fastnorm.batch_norm(x, _meta(c), _meta(c), _meta(c), _meta(c), training=True)
                    fastnorm.batch_norm(x, _meta(c), _meta(c), None, None, training=True, momentum=None,
                                        num_batches_tracked=torch.empty((), dtype=torch.long, device="meta"))
                    fastnorm.batch_norm(x, None, None, None, None, training=True)
    return cases + [spatial_argument, whole_channels, merge_levels, big, frozen_rows, stats_rows]


def _stage_cases() -> list:
    """The SyncBatchNorm stage functions and its symmetric-memory launches (a stand-in exchange)."""
    from fastnorm.kernels import batch_norm as K
    from fastnorm.ops import batch_norm as bn_ops

    def stages():
        for dtype in (torch.bfloat16, torch.float32, torch.float64):
            # (4, 64, 9, 11): an odd S, whose 16-bit statistics read aligned rows
            for shape, cl in (((4, 64, 14, 14), False), ((4, 64, 14, 14), True), ((16, 2048, 7, 7), False),
                              ((4, 64, 9, 11), False)):
                c = shape[1]
                acc = torch.float64 if dtype == torch.float64 else torch.float32
                x = _meta(*shape, dtype=dtype, channels_last=cl)
                dy = _meta(*shape, dtype=dtype, channels_last=cl)
                w = _meta(c, dtype=acc)
                mean, invstd, rm, rv = _meta(c, dtype=acc), _meta(c, dtype=acc), _meta(c), _meta(c)
                count = torch.empty((), dtype=acc, device="meta")
                nbt = torch.empty((), dtype=torch.long, device="meta")
                bn_ops._local_stats(x, c)
                gathered = _meta(3, 2 * c + 1, dtype=acc)
                bn_ops._merge_stats(gathered[:, 2 * c], gathered[:, :c], gathered[:, c:2 * c], 1e-5,
                                    (rm, rv, 0.1, nbt))
                bn_ops._merge_stats(gathered[:, 2 * c], gathered[:, :c], gathered[:, c:2 * c], None)
                bn_ops._update_running_stats_(rm, rv, mean, invstd, count, None, nbt)
                sums = bn_ops._backward_sums(dy, x, mean, invstd, None, False, _meta(c), _meta(c))
                bn_ops._backward_dx(dy, x, mean, invstd, w, sums, count, None, False, True)
                bn_ops._apply(x, mean, invstd, w, w, None, True)
                if dtype == torch.float64:
                    continue  # the exchange is fp32 only
                peers = K.Peers(_meta(4, dtype=torch.int64), _meta(64, dtype=torch.int32), 1, 4, 8192, 4096)
                xv = K.view(x)
                K.apply_peers(xv, torch.empty_like(xv.x), None, w, w, peers, eps=1e-5, relu=False, running_mean=rm,
                              running_var=rv, momentum=None, nbt=nbt)
                K.backward_peers(xv, K.in_layout(dy, xv.x), None, torch.empty_like(xv.x), None, w, mean, invstd,
                                 _meta(c), _meta(c), count, peers, relu=False)
    return [stages]


def _job(fn, args, meta, num_warps, num_stages, maxnreg, cooperative=False) -> tuple:
    """-> (module, kernel name, signature, constexprs, attrs, options): what Triton specializes this launch on
    (bound by Triton's own binder, ``kernels._launch.specialization``), in a form a worker process can take."""
    from fastnorm.kernels._launch import specialization

    sig, consts, attrs, options = specialization(fn, args, meta, num_warps, num_stages, maxnreg, _backend(),
                                                 cooperative)
    return (fn.fn.__module__, fn.__name__, tuple(sig.items()), tuple(consts.items()), tuple(attrs.items()),
            tuple(options.items()))


def _backend():
    from triton.compiler.compiler import make_backend

    return make_backend(TARGET)


def _full_key(job: tuple) -> str:
    """One specialization per (kernel, constexprs, options) is compiled to a cubin (about 560: the constexprs
    carry the accumulation dtype and every code-path switch); the others, which differ in pointer dtypes,
    integer widths or divisibility (about 690), go through the front end only, to keep CI to minutes."""
    module, name, sig, consts, attrs, options = job
    if "_norm_" in name:  # the norms' shared memory depends on the streamed tensors' dtypes: each mix compiled in full
        return repr((name, consts, options, sig))
    return repr((name, consts, options))


# ------------------------------------------------------------------------------------------- compiling


def compile_job(job_full) -> dict:
    """Compile one specialization: the whole pipeline down to a cubin (``full``), or only the front end (the
    Python source to Triton IR, where type and shape errors show) for a variant of one compiled in full."""
    import importlib

    import triton

    from fastnorm.kernels import config

    (module, name, sig, consts, attrs, options), full = job_full
    fn = getattr(importlib.import_module(module), name)
    opts = dict(options)
    t = time.time()
    try:
        src = triton.compiler.ASTSource(fn=fn, signature=dict(sig), constexprs=dict(consts), attrs=dict(attrs))
        if full:
            kernel = triton.compile(src, target=TARGET, options=opts)
            detail = f"{kernel.metadata.shared} B shared"
            limit = config.SMEM_BYTES_PER_BLOCK
            if kernel.metadata.shared > limit:  # CUDA would refuse the launch (Triton's OutOfResources)
                raise RuntimeError(f"{detail}: more than the {limit} B an sm_90 block may have")
            if name.startswith("_bn_"):
                _no_tile_conversions(kernel.asm["ttgir"])
            ttir = kernel.asm["ttir"]
        else:
            ttir = str(_front_end(src, TARGET, opts))
            detail = "front end"
        if module == "fastnorm.kernels.layer_norm":
            _readable_by_torch_compile(ttir)
        ok = True
    except Exception as e:  # noqa: BLE001 - reported per specialization
        ok, detail = False, "".join(traceback.format_exception_only(type(e), e)).strip()[-3000:]
    return dict(kernel=name, ok=ok, full=full, seconds=round(time.time() - t, 2), options=opts,
                signature={k: v for k, v in sig if v != "constexpr"},
                constexprs={str(k): str(v) for k, v in consts if v is not None}, detail=detail)


def _no_tile_conversions(ttgir: str, limit: int = 1024) -> None:
    """Raise if the kernel converts a floating-point tensor of more than ``limit`` elements between layouts:
    BatchNorm's kernels convert per-channel vectors only. A data tile converted goes through shared memory and
    back, and the compiler chose that once for the single-read forward's whole x tile and its y (channels-last:
    [CB, MS] tiles of partials gave the merged statistics a layout of their own), and with one whole channel a
    program (CB = 1, SPLIT = 1) for a broadcast of its statistics: 16388 shared-memory stores and a 41 s compile
    (session 25). Index and mask vectors are left out: triton 3.9 converts the dx kernel's 64-bit offsets and masks
    (1×4096) between layouts without shared memory, where 3.6 does not convert them at all. The layouts are the
    installed Triton's: session 25's two cases show under 3.6 (the GPU machine's; HEAD's kernel then fails 10
    specializations), not under 3.9, so run the gate with 3.6 on the path before measuring on the GPU."""
    for shape, dtype in re.findall(r"ttg\.convert_layout [^\n]*?: tensor<([0-9x]+)x(\w+)", ttgir):
        if dtype.startswith(("f", "bf")) and math.prod(int(d) for d in shape.split("x")) > limit:
            raise RuntimeError(f"a tensor<{shape}x{dtype}> converted between layouts (more than {limit} elements)")


def _readable_by_torch_compile(ttir: str) -> None:
    """Fail a kernel of the norms' ``triton_op``s whose Triton IR holds impure inline assembly: torch.compile's
    analysis of which tensors a traced kernel writes gives up on it and takes every input as written, and a traced
    backward then fails on its leaf inputs (``torch._higher_order_ops.triton_kernel_wrap``; NOTES.md, session 41)."""
    impure = re.findall(r'tt\.elementwise_inline_asm "([^"]*)" \{[^}]*pure = false', ttir)
    if impure:
        raise RuntimeError(f"impure inline assembly, which torch.compile cannot analyse: {sorted(set(impure))}")


def _front_end(src, target, opts):
    """Triton's first compile stage alone (``ASTSource.make_ir``), as ``triton.compile`` sets it up -> its module."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(target)
    options = backend.parse_options(opts)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    return src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(),
                       context)


def main() -> int:
    t0 = time.time()
    only = os.environ.get("FASTNORM_COMPILE_ONLY")  # a kernel name (part of one): compile those alone
    jobs = [j for j in record_launches() if not only or only in j[1]]
    seen: set[str] = set()
    work = []
    for job in jobs:  # one full compile per kernel, constexprs and options; the front end for the rest
        key = _full_key(job)
        work.append((job, key not in seen))
        seen.add(key)
    by_kernel: dict[str, int] = {}
    for job in jobs:
        by_kernel[job[1]] = by_kernel.get(job[1], 0) + 1
    print(f"recorded {len(jobs)} distinct specializations ({len(seen)} compiled in full) in {time.time() - t0:.1f}s: "
          f"{by_kernel}", flush=True)
    workers = int(os.environ.get("FASTNORM_COMPILE_WORKERS", os.cpu_count() or 1))
    failed = 0
    with ProcessPoolExecutor(workers) as pool:
        for r in pool.map(compile_job, work, chunksize=8):
            failed += not r["ok"]
            if not r["ok"]:
                print(json.dumps(r), flush=True)
    print(f"SUMMARY {len(jobs) - failed}/{len(jobs)} specializations compiled for sm_90 "
          f"({len(seen)} to a cubin, the rest through the front end) in {time.time() - t0:.0f}s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
