"""LayerNorm and RMSNorm (functional, custom ops, modules) against the float64 NumPy reference.

Runs the Triton kernels on CUDA when there is a GPU, else through Triton's interpreter on the CPU
(few rows per case: the interpreter is slow). Every output of every launch is poisoned with NaN
first (``torch.empty`` returns NaN-filled tensors inside these tests), so an element a kernel fails
to write shows up as an error.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fastnorm
import fastnorm.nn
import fastnorm.ops.layer_norm as ops
from fastnorm import reference as R
from fastnorm.kernels import config as C
from fastnorm.kernels import layer_norm as K
from helpers import assert_close, sum_terms_scale, to_np64, watch_replays

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
BASE_NS = [1, 2, 3, 7, 31, 64, 65, 127, 128, 129, 255, 1000, 1023, 1025]
# One past every block-size or strategy boundary of the dispatch (tracks the config), by element size: the measured
# tables differ between 16-bit and float32 inputs.
BOUNDARY_NS = {size: [n for n in C.norm_strategy_boundaries(size) if n not in BASE_NS] for size in (2, 4)}


@pytest.fixture(autouse=True)
def poison_empty(monkeypatch, request):
    """Inside these tests torch.empty returns NaN-filled floating tensors (so unwritten outputs show).

    Not under torch.compile, whose tracing needs torch.empty to stay a pure allocation."""
    if "compile" in request.node.name:
        return
    real_empty = torch.empty

    def empty(*size, dtype=None, device=None, **kw):
        t = real_empty(*size, dtype=dtype, device=device, **kw)
        if t.is_floating_point():
            t.fill_(float("nan"))
        return t

    monkeypatch.setattr(torch, "empty", empty)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _rand(shape, dtype, device, seed, scale=1.0, offset=0.0):
    return (torch.randn(shape, generator=_gen(seed), dtype=torch.float64) * scale + offset).to(dtype).to(device)


def _reference(is_rms, x, w, b, eps, dy, nd=1):
    """(y, dx, dw, db) from the float64 reference on the exact values of the given tensors."""
    x64, dy64 = to_np64(x), to_np64(dy)
    w64 = None if w is None else to_np64(w)
    if is_rms:
        y, rstd = R.rms_norm_forward(x64, w64, eps, nd)
        dx, dw = R.rms_norm_backward(dy64, x64, w64, rstd, nd)
        return y, dx, dw, None
    y, mean, rstd = R.layer_norm_forward(x64, w64, None if b is None else to_np64(b), eps, nd)
    dx, dw, db = R.layer_norm_backward(dy64, x64, w64, mean, rstd, nd, has_bias=b is not None)
    return y, dx, dw, db


def _run(is_rms, x, shape, w, b, eps, dy, **kw):
    """fastnorm forward and backward: (y, dx, dw, db) (None where a tensor is absent)."""
    x = x.detach().clone().requires_grad_()
    params = [p.detach().clone().requires_grad_() if p is not None else None for p in (w, b)]
    if is_rms:
        y = fastnorm.rms_norm(x, shape, params[0], eps, **kw)
    else:
        y = fastnorm.layer_norm(x, shape, params[0], params[1], eps, **kw)
    inputs = [x] + [p for p in params if p is not None]
    grads = list(torch.autograd.grad(y, inputs, dy))
    dx = grads.pop(0)
    dw = grads.pop(0) if params[0] is not None else None
    db = grads.pop(0) if params[1] is not None else None
    return y, dx, dw, db


def _check_all(is_rms, x, shape, w, b, eps, dy, nd=1):
    dtype = x.dtype
    y, dx, dw, db = _run(is_rms, x, shape, w, b, eps, dy)
    ry, rdx, rdw, rdb = _reference(is_rms, x, w, b, eps, dy, nd)
    assert y.dtype == dtype and y.shape == x.shape
    assert_close("y", y, ry, dtype)
    assert_close("dx", dx, rdx, dtype)
    # dγ and dβ sum over the rows: with few columns (N = 1) one can cancel to near zero, so the error is also measured
    # against the size of its terms.
    x64, dy64 = to_np64(x), to_np64(dy)
    rows = tuple(range(x.dim() - nd))
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    xhat = R.rms_norm_forward(x64, None, eps, nd)[0] if is_rms else R.layer_norm_forward(x64, None, None, eps, nd)[0]
    if w is not None:
        assert dw.dtype == w.dtype
        assert_close("dweight", dw, rdw, w.dtype, param_grad=True, terms_scale=sum_terms_scale(dy64 * xhat, rows))
    if b is not None:
        assert_close("dbias", db, rdb, b.dtype, param_grad=True, terms_scale=sum_terms_scale(dy64, rows))


# ----------------------------------------------------------------------------- against the reference

CASES = [(n, dtype) for n in BASE_NS for dtype in DTYPES] + [
    (n, dtype) for dtype in (torch.float32, torch.bfloat16) for n in BOUNDARY_NS[dtype.itemsize]]


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("n", "dtype"), CASES, ids=[f"{n}-{str(d)[6:]}" for n, d in CASES])
def test_matches_reference(device, is_rms, n, dtype):
    m = (1, 3, 4)[(n + len(str(dtype))) % 3] if n <= 4096 else (1, 2)[n % 2]
    seed = n * 7 + DTYPES.index(dtype)
    x = _rand((m, n), dtype, device, seed, scale=2.0, offset=0.5)
    w = _rand((n,), dtype, device, seed + 1, scale=0.5, offset=1.0)
    b = None if is_rms else _rand((n,), dtype, device, seed + 2, scale=0.5)
    # With N = 1 (RMS) or 2 (LN) the exact dx is O(eps · |dy|): scale dy so it stays a normal fp16 number.
    dy = _rand((m, n), dtype, device, seed + 3, scale=1e3 if n <= 2 and dtype == torch.float16 else 1.0)
    eps = 1e-5 if not is_rms else torch.finfo(dtype).eps
    _check_all(is_rms, x, n, w, b, eps, dy)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [1, 2, 129, 1000])
def test_float64(device, is_rms, n):
    x = _rand((3, n), torch.float64, device, n, scale=3.0, offset=-1.0)
    w = _rand((n,), torch.float64, device, n + 1)
    b = None if is_rms else _rand((n,), torch.float64, device, n + 2)
    dy = _rand((3, n), torch.float64, device, n + 3)
    # eps = 2^-17 is exact in float32 too: Triton's interpreter passes float scalars as float32, and the
    # degenerate rows (N = 1, 2) have dx proportional to eps.
    _check_all(is_rms, x, n, w, b, 2.0**-17, dy)


def test_long_rows(device):
    """N = 262144 (the longest row the issue asks for; many chunks), bf16, one row."""
    n = 262144
    x = _rand((1, n), torch.bfloat16, device, 5, offset=0.25)
    w = _rand((n,), torch.bfloat16, device, 6, scale=0.2, offset=1.0)
    b = _rand((n,), torch.bfloat16, device, 7)
    dy = _rand((1, n), torch.bfloat16, device, 8)
    _check_all(False, x, n, w, b, 1e-5, dy)


def _check_config(device, is_rms, m, n, cfg, fwd_cfg="same"):
    """Forward and backward with ``cfg`` overriding the launch heuristic (the forward with ``fwd_cfg`` if given,
    None: the heuristic's), fp32, with the fused residual (and its gradient) and a constant row (exact zeros, then
    y = b), against the reference."""
    x = _rand((m, n), torch.float32, device, n, scale=2.0, offset=3.0)
    x[1] = 7.25
    r = _rand((m, n), torch.float32, device, n + 4)
    r[1] = 0.5
    w = _rand((n,), torch.float32, device, n + 1)
    b = None if is_rms else _rand((n,), torch.float32, device, n + 2)
    dy = _rand((m, n), torch.float32, device, n + 3)
    ds = _rand((m, n), torch.float32, device, n + 5)
    y, s, mean, rstd = K.norm_fwd(x, w, b, r, 1e-5, 0.0, is_rms, None, True, config=cfg if fwd_cfg == "same" else
                                  fwd_cfg)
    assert torch.equal(s, x + r)
    dx, dr, dw, db = K.norm_bwd(dy, s, w, b is not None, mean, rstd, ds, x.dtype, r.dtype, 1e-5, 0.0, is_rms,
                                bias_dtype=None if b is None else b.dtype, config=cfg)
    ry, rdx, rdw, rdb = _reference(is_rms, s, w, b, 1e-5, dy)
    assert_close("y", y, ry, torch.float32)
    if not is_rms:
        assert torch.equal(y[1], b)
    assert_close("dx", dx, rdx + to_np64(ds), torch.float32)
    assert torch.equal(dx, dr)
    assert_close("dweight", dw, rdw, torch.float32, param_grad=True)
    if b is not None:
        assert_close("dbias", db, rdb, torch.float32, param_grad=True)


def test_wide_rows_rule():
    """The whole-row backward forms 64-bit offsets exactly where the furthest offset its tiles form (masked rows of
    the last tile and masked columns included) reaches 2**31, and wherever the sizes are not plain ints."""
    assert not K._wide_rows(1 << 20, 32, (256, 256, 0, 256, 256), 256)
    assert K._wide_rows((1 << 31) // 4096 + 3, 1, (4096, 4096, 0, 4096, 4096), 4096)
    rows = 1 << 21  # rows · 1024 = 2**31: the last row's offset is 2**31 - 1024
    assert not K._wide_rows(rows, 1, (1024,), 1024) and K._wide_rows(rows, 1, (1024,), 1025)
    assert K._wide_rows(rows + 1, 1, (1024,), 1)
    assert not K._wide_rows(rows - 1, 1, (1024,), 1025) and K._wide_rows(rows - 1, 2, (1024,), 1025)  # tile padding
    assert not K._wide_rows(rows + 1, 1, (8, 0), 1) and K._wide_rows(rows + 1, 1, (8, 1024, 0), 1)  # the largest
    assert K._wide_rows(3.0, 1, (4,), 4)  # not a plain int (a traced size stands for one): 64 bits


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (7, 64, C.NormConfig(2, 64, False, 2, programs=2)),  # 4 tiles, the last of one row
    (5, 100, C.NormConfig(2, 128, False, 2, 3, programs=3)),  # columns masked past N, prefetched
    (6, 48, C.NormConfig(1, 64, False, 2, programs=4, w_in_loop=True)),  # the weight re-read
    (9, 64, C.NormConfig(2, 64, False, 2, 3, programs=2)),  # prefetched rows filling the tile: N a constant
])
def test_backward_row_offsets_in_32_or_64_bits(monkeypatch, device, is_rms, m, n, cfg):
    """The whole-row backward's results with 32-bit element offsets and with 64-bit ones: each against the reference
    (with the fused residual), and bitwise the same."""
    outs = []
    for wide in (False, True):
        monkeypatch.setattr(K, "_wide_rows", lambda *args, wide=wide: wide)
        _check_config(device, is_rms, m, n, cfg, fwd_cfg=None)
        x = _rand((m, n), torch.bfloat16, device, n, offset=1.5)
        w = _rand((n,), torch.bfloat16, device, n + 1, offset=1.0)
        b = None if is_rms else _rand((n,), torch.bfloat16, device, n + 2)
        dy = _rand((m, n), torch.bfloat16, device, n + 3)
        _, _, mean, rstd = K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True)
        outs.append(K.norm_bwd(dy, x, w, b is not None, mean, rstd, None, x.dtype, None, 1e-5, 0.0, is_rms,
                               bias_dtype=None if b is None else b.dtype, config=cfg))
    for got, want in zip(*outs, strict=True):
        assert (got is None and want is None) or torch.equal(got, want)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (3, 300, C.NormConfig(2, 64, True, 4, programs=2)),
    (5, 520, C.NormConfig(1, 128, True, 4, programs=3)),
    (4, 65, C.NormConfig(4, 64, True, 4, programs=1)),
    (3, 256, C.NormConfig(2, 64, True, 4, programs=2)),  # chunks tile N (LN folds the column mask), a partial row tile
])
def test_chunked_path_small(device, is_rms, m, n, cfg):
    """The chunked strategy (Chan merge, partial rows in memory, fused residual re-read from residual_out)
    on small rows, by overriding the config."""
    _check_config(device, is_rms, m, n, cfg)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (3, 300, C.NormConfig(1, 64, True, 2, evict=True, unroll=2)),  # 5 chunks: the unrolled loop and its remainder
    (4, 520, C.NormConfig(1, 128, True, 4, evict=True, unroll=4)),  # 5 chunks, the last one partial
    (5, 256, C.NormConfig(1, 64, True, 2, unroll=8)),  # 4 chunks: the remainder loop alone
    (2, 65, C.NormConfig(1, 128, True, 4, evict=True, unroll=2)),  # one partial chunk
])
def test_looped_forward(device, is_rms, m, n, cfg):
    """The forward's chunked rows of one program per row (the measured configs of session 16): L2 eviction hints
    and chunk loops unrolled past, up to and short of the chunk count, with the fused residual; the backward on
    its own heuristic."""
    _check_config(device, is_rms, m, n, None, fwd_cfg=cfg)


def test_x_l2_only_rows(device):
    """x_l2_only (x loaded ``.cg`` in the chunked forward) and params_l2_only (the weight and bias so loaded in its
    second pass) change where the loads are cached, not what they read:
    bf16 rows, 16-byte aligned (so on a GPU also widened: 256 columns for 4 warps), give bitwise the output and
    statistics of the same config without it, and match the reference."""
    n = 1032  # four chunks of 256 and a ragged one
    x = _rand((5, n), torch.bfloat16, device, n)
    w = _rand((n,), torch.bfloat16, device, n + 1)
    b = _rand((n,), torch.bfloat16, device, n + 2)
    cfg = C.NormConfig(1, 256, True, 4, evict=True, unroll=2)
    plain, *l2s = (K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=c)
                   for c in (cfg, cfg._replace(x_l2_only=True), cfg._replace(params_l2_only=True)))
    ry, _, _, _ = _reference(False, x, w, b, 1e-5, torch.zeros_like(x))
    for l2 in l2s:
        for got, want in zip(l2, plain, strict=True):
            assert (got is None and want is None) or torch.equal(got, want)
        assert_close("y", l2[0], ry, torch.bfloat16)


def test_looped_forward_hints(monkeypatch):
    """``evict``'s L2 hints serve the second pass's re-read of x: with a residual that pass re-reads residual_out and
    the hints are off; x_l2_only loads x ``.cg`` in both passes, without them (the weight and bias keep theirs), where
    x is 16-byte aligned and has no residual; params_l2_only loads the weight and bias ``.cg`` without theirs;
    evict, x_l2_only, params_l2_only and unroll are refused outside the forward's chunked rows."""
    seen = []
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, *rest, **kw: seen.append(meta))
    cfg = C.NormConfig(1, 64, True, 2, evict=True, unroll=2)
    x = torch.randn(3, 100)
    K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=cfg)
    K.norm_fwd(x, None, None, torch.randn(3, 100), 1e-5, 0.0, True, None, True, config=cfg)
    K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=cfg._replace(x_l2_only=True))
    K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=cfg._replace(params_l2_only=True))
    # x_l2_only does not apply to rows not 16-byte aligned, an address 4 bytes in, or with a residual
    for other, res in ((torch.randn(3, 101)[:, :99], None), (torch.randn(301)[1:].view(3, 100), None),
                       (x, torch.randn(3, 100))):
        K.norm_fwd(other, None, None, res, 1e-5, 0.0, True, None, True, config=cfg._replace(x_l2_only=True))
    metas = [(m["KEEP_POLICY"], m["X_KEEP_POLICY"], m["RELEASE_POLICY"], m["X_CACHE"], m["P_CACHE"], m["UNROLL"])
             for m in seen]
    assert metas == [
        ("evict_last", "evict_last", "evict_first", "", "", 2), ("", "", "", "", "", 2),
        ("evict_last", "", "", ".cg", "", 2), ("", "evict_last", "evict_first", "", ".cg", 2),
        ("evict_last", "evict_last", "evict_first", "", "", 2), ("evict_last", "evict_last", "evict_first", "", "", 2),
        ("", "", "", "", "", 2)]
    for bad in (cfg._replace(chunked=False), cfg._replace(evict=False, unroll=0),
                cfg._replace(chunked=False, evict=False, unroll=1, x_l2_only=True),
                cfg._replace(chunked=False, evict=False, unroll=1, params_l2_only=True)):
        with pytest.raises(ValueError, match="chunked rows only"):
            K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=bad)


def test_widen_rule():
    """bf16 loads are widened by inline assembly two to a register (``_widen``) only where every thread holds an even
    number of a tile's elements: bf16, rows and addresses 16-byte aligned, pieces (all the rows of a whole-row tile)
    of at least 2 elements a thread."""
    cfg = C.NormConfig(1, 4096, True, 16)
    assert C.norm_widens(cfg, torch.bfloat16, 8, True)
    assert not C.norm_widens(cfg, torch.float16, 8, True)
    assert not C.norm_widens(cfg, torch.float32, 16, True)
    assert not C.norm_widens(cfg, torch.bfloat16, 4, True)  # rows 8-byte aligned
    assert not C.norm_widens(cfg, torch.bfloat16, 8, False)  # an address off 16 bytes
    assert not C.norm_widens(C.NormConfig(1, 512, False, 16), torch.bfloat16, 16, True)  # one element a thread
    assert C.norm_widens(C.NormConfig(1, 8192, False, 16, block_n2=4096), torch.bfloat16, 16, True)
    assert not C.norm_widens(C.NormConfig(1, 4096, False, 4, block_n2=128), torch.bfloat16, 16, True)
    assert C.norm_widens(C.NormConfig(32, 256, False, 16), torch.bfloat16, 16, True)  # 16 elements a thread, 2 rows
    assert not C.norm_widens(C.NormConfig(2, 128, False, 16), torch.bfloat16, 16, True)  # half an element a thread
    assert not C.norm_widens(C.NormConfig(4, 256, True, 8), torch.bfloat16, 16, True)  # chunks: their columns alone


def test_widen_at_launch(monkeypatch):
    """The launchers pass WIDEN as the rule says for the tensors given: an aligned bf16 row, not a view 2 bytes in,
    not float32, not when traced (torch.compile: the addresses are not known then)."""
    seen = []
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, *rest, **kw: seen.append(meta["WIDEN"]))
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, *rest, **kw: seen.append(meta["WIDEN"]))
    cfg = C.NormConfig(1, 1024, False, 4)
    base = torch.randn(3, 1024 + 8, dtype=torch.bfloat16)
    for x in (base[:, :1024], base[:, 1:1025], base[:, :1024].float()):
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=cfg)
    K.norm_fwd(base[:, :1024], None, None, None, 1e-5, 0.0, True, None, True, traceable=True, config=cfg)
    rstd = torch.ones(3)
    dy = torch.randn(3, 1024, dtype=torch.bfloat16)
    K.norm_bwd(dy, base[:, :1024], None, False, None, rstd, None, torch.bfloat16, None, 1e-5, 0.0, True,
               config=C.NormConfig(1, 1024, False, 4, programs=1))
    assert seen == [True, False, False, False, True]


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (5, 40, C.NormConfig(1, 32, False, 2, block_n2=8)),  # 32 + 8: both pieces full
    (7, 100, C.NormConfig(4, 64, False, 2, block_n2=64)),  # the second piece masked past N
    (6, 33, C.NormConfig(2, 32, False, 1, block_n2=1)),
    (9, 96, C.NormConfig(2, 64, False, 2, 2, 3, block_n2=32)),  # persistent, prefetching
    (8, 80, C.NormConfig(1, 64, False, 2, 1, 3, True, block_n2=16)),  # backward: weight re-read per row block
])
def test_two_piece_rows(device, is_rms, m, n, cfg):
    """Rows held as two pieces (BLOCK_N + BLOCK_N2 columns, no power-of-two padding), forward and backward, by
    overriding the config; a config whose pieces do not cover N is refused, as is its first piece alone (whose rows
    read 0.75-1.3 off at N = 49151, session 39) and chunked rows with a second piece."""
    _check_config(device, is_rms, m, n, cfg)
    x = torch.ones(2, cfg.block_n + cfg.block_n2 + 1, device=device)
    with pytest.raises(ValueError, match="holds rows of"):
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, is_rms, None, True, config=cfg)
    one_piece = cfg._replace(block_n2=0)
    with pytest.raises(ValueError, match="whole rows of at most"):
        K.norm_fwd(x[:, :n], None, None, None, 1e-5, 0.0, is_rms, None, True, config=one_piece)
    with pytest.raises(ValueError, match="whole rows of at most"):
        K.norm_bwd(x[:, :n], x[:, :n], None, False, None, torch.ones(2, device=device), None, x.dtype, None, 1e-5,
                   0.0, is_rms, config=one_piece._replace(programs=1))
    chunked = C.NormConfig(1, cfg.block_n, True, cfg.num_warps, block_n2=cfg.block_n2)
    with pytest.raises(ValueError, match="no second piece"):  # it would fold the column compare away past N
        K.norm_fwd(x[:, :n], None, None, None, 1e-5, 0.0, is_rms, None, True, config=chunked)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("dtype", "m", "n", "fwd", "bwd"), [
    # bf16 256 as 128 + 128 (16 lanes a row): the forward one program a tile, the backward persistent, prefetching
    (torch.bfloat16, 37, 256, C.NormConfig(8, 128, False, 2, block_n2=128),
     C.NormConfig(32, 128, False, 16, 3, 2, block_n2=128)),
    (torch.bfloat16, 19, 200, C.NormConfig(4, 128, False, 2, block_n2=128),  # the second piece masked past N
     C.NormConfig(8, 128, False, 4, 3, 3, block_n2=128)),
    (torch.float16, 9, 256, C.NormConfig(2, 128, False, 1, 2, 3, block_n2=128),  # both persistent
     C.NormConfig(4, 128, False, 2, 1, 3, True, block_n2=128)),  # the weight re-read per row block
    (torch.float32, 11, 128, C.NormConfig(4, 64, False, 2, block_n2=64), C.NormConfig(4, 64, False, 2, 3, 2,
                                                                                        block_n2=64)),
    # pieces wider than NORM_JOINT_PIECES_MAX: a reduction a piece; the second masked past N
    (torch.bfloat16, 3, 3001, C.NormConfig(1, 2048, False, 4, block_n2=2048),
     C.NormConfig(1, 2048, False, 4, 3, 2, block_n2=2048)),
])
def test_equal_pieces(device, is_rms, dtype, m, n, fwd, bwd):
    """Rows held as two pieces of one width, whose row sums are one reduction of the pieces' element-wise sums where
    the pieces are narrow (``norm_joint_pieces``; the forward's mean and variance alike), else one a piece: forward
    and backward against the reference, and within rounding of the same rows as one padded piece."""
    seed = n + m
    x = _rand((m, n), dtype, device, seed, scale=2.0, offset=0.5)
    x[1] = 3.25  # a constant row: exact zeros (LN)
    w = _rand((n,), dtype, device, seed + 1, scale=0.5, offset=1.0)
    b = None if is_rms else _rand((n,), dtype, device, seed + 2, scale=0.5)
    dy = _rand((m, n), dtype, device, seed + 3, offset=0.5)  # rows of dy·w far from zero mean: Σg matters in dx,
    dy[:, bwd.block_n:] -= 1.0  # and each piece's share of it differs
    eps = 1e-5
    results = []
    one = 1 << (n - 1).bit_length()  # one piece, padded to a power of two
    for f, g in ((fwd, bwd), (fwd._replace(block_n=one, block_n2=0), bwd._replace(block_n=one, block_n2=0))):
        y, _, mean, rstd = K.norm_fwd(x, w, b, None, eps, 0.0, is_rms, None, True, config=f)
        dx, _, dw, db = K.norm_bwd(dy, x, w, b is not None, mean, rstd, None, x.dtype, None, eps, 0.0, is_rms,
                                   bias_dtype=None if b is None else b.dtype, config=g)
        results.append((y, dx, dw, db))
    ry, rdx, rdw, rdb = _reference(is_rms, x, w, b, eps, dy)
    y, dx, dw, db = results[0]
    assert_close("y", y, ry, dtype)
    assert_close("dx", dx, rdx, dtype)
    assert_close("dweight", dw, rdw, dtype, param_grad=True)
    if not is_rms:
        assert torch.equal(y[1], b)
        assert_close("dbias", db, rdb, dtype, param_grad=True)
    for name, a, c in zip(("y", "dx", "dweight", "dbias"), results[1], results[0], strict=True):
        _same_as(device, dtype, name, a, c, bitwise=False)  # other sums, other statistics: not bitwise


def test_joint_pieces_rule(monkeypatch):
    """Two pieces of one width are reduced jointly up to NORM_JOINT_PIECES_MAX columns a piece, and the launchers
    pass the rule's answer to the kernels."""
    assert C.norm_joint_pieces(C.NormConfig(4, 128, False, 1, block_n2=128))
    assert C.norm_joint_pieces(C.NormConfig(1, 1024, False, 2, block_n2=1024))
    assert not C.norm_joint_pieces(C.NormConfig(1, 8192, False, 8, block_n2=8192))  # measured: lost, session 52
    assert not C.norm_joint_pieces(C.NormConfig(2, 512, False, 1, block_n2=256))  # unequal pieces
    assert not C.norm_joint_pieces(C.NormConfig(2, 512, False, 1))  # one piece
    seen = []
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, *rest, **kw: seen.append(meta["JOINT_PIECES"]))
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, *rest, **kw: seen.append(meta["JOINT_PIECES"]))
    x = torch.randn(2, 256, dtype=torch.bfloat16)
    for bn in (128, 256):
        cfg = C.NormConfig(1, bn, False, 1, block_n2=256 - bn)
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=cfg)
        K.norm_bwd(x, x, None, False, None, torch.ones(2), None, x.dtype, None, 1e-5, 0.0, True,
                   config=cfg._replace(programs=1))
    assert seen == [True, True, False, False]


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("dtype", "m", "n", "cfg", "via_scratch"), [
    (torch.bfloat16, 37, 256, C.NormConfig(32, 256, False, 16, 3, 2), True),  # warps split rows; a partial tile
    (torch.bfloat16, 19, 200, C.NormConfig(8, 128, False, 4, 3, 3, block_n2=128), True),  # two pieces, 2nd masked
    (torch.float32, 11, 100, C.NormConfig(4, 128, False, 2, 1, 2), True),  # no prefetch, columns masked
    (torch.float32, 1, 64, C.NormConfig(4, 64, False, 2, 1, 2), True),  # one row of a 4-row tile
    (torch.float64, 9, 64, C.NormConfig(2, 64, False, 2, 1, 3), True),
    (torch.float32, 5, 1024, C.NormConfig(2, 1024, False, 2, 1, 2), False),  # warps along the row: tl.sum
    (torch.float32, 130, 16, C.NormConfig(128, 16, False, 4, 1, 2), False),  # past NORM_SCRATCH_SUM_MAX_ROWS
])
def test_sums_via_scratch(device, monkeypatch, is_rms, dtype, m, n, cfg, via_scratch):
    """dw and db summed over a tile's rows through the program's scratch where the warps split the rows
    (``norm_bwd_sums_via_scratch``): against the reference, and within rounding of ``tl.sum``'s order."""
    assert C.norm_bwd_sums_via_scratch(cfg, dtype.itemsize) == via_scratch
    seed = m * n
    x = _rand((m, n), dtype, device, seed, scale=2.0, offset=0.5)
    w = _rand((n,), dtype, device, seed + 1, scale=0.5, offset=1.0)
    b = None if is_rms else _rand((n,), dtype, device, seed + 2, scale=0.5)
    dy = _rand((m, n), dtype, device, seed + 3, offset=0.5)
    eps = 1e-5
    _, _, mean, rstd = K.norm_fwd(x, w, b, None, eps, 0.0, is_rms, None, True)
    results = []
    for scratch_on in (True, False):
        monkeypatch.setattr(K, "norm_bwd_sums_via_scratch", lambda c, e, on=scratch_on: on and via_scratch)
        results.append(K.norm_bwd(dy, x, w, b is not None, mean, rstd, None, x.dtype, None, eps, 0.0, is_rms,
                                  bias_dtype=None if b is None else b.dtype, config=cfg))
    _, rdx, rdw, rdb = _reference(is_rms, x, w, b, eps, dy)
    dx, _, dw, db = results[0]
    assert_close("dx", dx, rdx, dtype)
    assert_close("dweight", dw, rdw, dtype, param_grad=True)
    if not is_rms:
        assert_close("dbias", db, rdb, dtype, param_grad=True)
    for name, a, c in zip(("dx", "dres", "dweight", "dbias"), results[1], results[0], strict=True):
        _same_as(device, dtype, name, a, c, bitwise=name in ("dx", "dres") or not via_scratch)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (5, 64, C.NormConfig(1, 64, False, 2, 3, 2)),  # one-row tiles, N fills the tile, the shift read as a pair
    (7, 128, C.NormConfig(2, 128, False, 2, 3, 3)),  # two-row tiles, the last one partial
    (5, 48, C.NormConfig(1, 64, False, 2, 3, 2)),  # columns masked, rows 16-element aligned: the pair
    (4, 40, C.NormConfig(1, 64, False, 2, 3, 2)),  # rows not 16-element aligned: the lone load
])
def test_prefetched_backward_small(device, is_rms, m, n, cfg):
    """The whole-row backward whose loop prefetches: its masks as constants (all columns where N fills the tile,
    all rows of one-row tiles) and LayerNorm's row shift read as the pair x[row, 0:2]; on small rows by overriding
    the config."""
    _check_config(device, is_rms, m, n, cfg)


def test_row_alignment_reaches_the_kernels(monkeypatch):
    """Row lengths and strides reach the kernels divided by the largest power of two up to 16 that divides them all
    (ROW_ALIGN, multiplied back in the kernel): N = 9000 (16-bit rows 16-byte aligned) by 8, 1025 by 1, 4096 by 16, a
    residual's stride of 9004 takes the forward to 4; symbolic sizes by 1."""
    seen = []
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, *rest, **kw: seen.append(
        ("fwd", meta["ROW_ALIGN"], args[9], args[11:15])))  # N, then x's, the residual's, y's, residual_out's strides
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, *rest, **kw: seen.append(
        ("bwd", meta["ROW_ALIGN"], args[11], args[13:18])))  # N, then dy's, x's, dres_out's, dx's, dres's
    monkeypatch.setattr(K, "_sum_partials", lambda *a: None)
    for n in (9000, 1025, 4096):
        x = torch.randn(3, n)
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True, config=C.NormConfig(1, 16384, False, 4))
        K.norm_bwd(x, x, None, False, None, torch.ones(3), None, x.dtype, None, 1e-5, 0.0, True,
                   config=C.NormConfig(1, 16384, False, 4, 1, 2))
    r = torch.randn(3, 9004)[:, :9000]
    K.norm_fwd(torch.randn(3, 9000), None, None, r, 1e-5, 0.0, True, None, True,
               config=C.NormConfig(1, 16384, False, 4))
    assert seen == [("fwd", 8, 1125, (1125, 0, 1125, 1125)), ("bwd", 8, 1125, (1125, 1125, 0, 1125, 1125)),
                    ("fwd", 1, 1025, (1025, 0, 1025, 1025)), ("bwd", 1, 1025, (1025, 1025, 0, 1025, 1025)),
                    ("fwd", 16, 256, (256, 0, 256, 256)), ("bwd", 16, 256, (256, 256, 0, 256, 256)),
                    ("fwd", 4, 2250, (2250, 2251, 2250, 2250))]
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    assert K._row_align(9000, ShapeEnv().create_unbacked_symint()) == 1


def test_prefetched_backward_flags(monkeypatch):
    """EVEN_N and K_PAIR are taken by whole rows whose loop prefetches (num_stages > 1), K_PAIR by LayerNorm rows
    of N >= 2 that are 16-element aligned."""
    seen = []
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, *rest, **kw: seen.append((meta["EVEN_N"], meta["K_PAIR"])))
    monkeypatch.setattr(K, "_sum_partials", lambda *a: None)
    for n, is_rms, stages, width in ((64, False, 3, 64), (64, True, 3, 64), (64, False, 1, 64), (48, False, 3, 64),
                                     (40, False, 3, 64)):
        x = torch.randn(3, n)
        cfg = C.NormConfig(1, width, False, 2, stages, 2)
        K.norm_bwd(x, x, None, False, None if is_rms else torch.zeros(3), torch.ones(3), None, x.dtype, None, 1e-5,
                   0.0, is_rms, config=cfg)
    assert seen == [(True, True), (True, False), (False, False), (False, True), (False, False)]


def _same_as(device, dtype, name, a, b, bitwise=True):
    """``b`` is ``a`` (bitwise in the interpreter; compiled, the compiler may contract another product into an FMA:
    within ``dtype``'s tolerance; not ``bitwise``: within it everywhere)."""
    assert (a is None) == (b is None), name
    if a is not None and device == "cpu" and bitwise:
        assert torch.equal(a, b), name
    elif a is not None:
        assert_close(name, b, to_np64(a), dtype, param_grad=name in ("dweight", "dbias"))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (5, 64, C.NormConfig(1, 64, False, 2, 3, 2, True, hold_loaded=True)),  # prefetched, weight re-read, N fills
    (7, 100, C.NormConfig(2, 64, False, 2, 1, 3, block_n2=64, hold_loaded=True)),  # two pieces, weight held
    (4, 48, C.NormConfig(1, 64, False, 2, 3, 2, True, block_n2=0, hold_loaded=True)),  # columns masked
    (4, 2, C.NormConfig(2, 2, False, 1, 1, 2, True, hold_loaded=True)),  # the degenerate N <= 2 branch
    (5, 100, C.NormConfig(1, 128, False, 2, hold_loaded=True)),  # one program per row (the forward), padded
])
def test_hold_loaded(device, dtype, is_rms, m, n, cfg):
    """Whole rows that hold x (and dy, the re-read weight) as loaded across the row reductions and form the fp32
    values again after them (``hold_loaded``): the forward's y and statistics and the backward's dw/db are those of
    the same config without it, with a weight offset and without parameters, and its dx (and the residual's
    gradient) equal up to rounding (formed straight from the loads: ``_dx_from_loads``; bitwise in the degenerate
    N <= 2 rows); against the reference in fp32 (``_check_config``: with a residual, which the forward's hold does
    not take); refused for chunked or split rows and float64."""
    if dtype == torch.float32:
        _check_config(device, is_rms, m, n, cfg)
    x = _rand((m, n), dtype, device, n, scale=2.0, offset=3.0)
    x[1] = 7.25  # a constant row: exact zeros either way
    w = _rand((n,), dtype, device, n + 1)
    b = None if is_rms else _rand((n,), dtype, device, n + 2)
    dy = _rand((m, n), dtype, device, n + 3)
    ds = _rand((m, n), dtype, device, n + 5)
    plain = cfg._replace(hold_loaded=False)
    for weight, bias, offset in ((w, b, 0.0), (w, None, 1.0), (None, None, 0.0)):
        (y0, _, mean, rstd), (y1, _, mean1, rstd1) = (
            K.norm_fwd(x, weight, bias, None, 1e-5, offset, is_rms, None, True, config=c) for c in (plain, cfg))
        for name, a, c in (("y", y0, y1), ("mean", mean, mean1), ("rstd", rstd, rstd1)):
            _same_as(device, dtype if name == "y" else torch.float32, name, a, c)
        if not is_rms:
            assert torch.equal(y1[1], torch.zeros_like(y1[1]) if bias is None else bias)
        got, held = (K.norm_bwd(dy, x, weight, bias is not None, mean, rstd, ds, x.dtype, None, 1e-5, offset,
                                is_rms, config=c) for c in (plain, cfg))
        for name, a, c in zip(("dx", "dres", "dweight", "dbias"), got, held, strict=True):
            _same_as(device, dtype, name, a, c, bitwise=name not in ("dx", "dres") or n <= (1 if is_rms else 2))
    for bad in (C.NormConfig(1, 64, True, 2, programs=2, hold_loaded=True),
                C.NormConfig(1, 32, False, 4, programs=8, split=True, hold_loaded=True)):
        with pytest.raises(ValueError, match="whole rows only"):
            K.norm_bwd(dy, x, None, False, mean, rstd, None, x.dtype, None, 1e-5, 0.0, is_rms, config=bad)
    x64 = x.double()
    with pytest.raises(ValueError, match="not float64"):
        K.norm_fwd(x64, None, None, None, 1e-5, 0.0, is_rms, None, True, config=cfg)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(("n", "cfg"), [
    (100, C.NormConfig(2, 128, False, 2, one_round=True)),  # one padded piece, two rows a tile
    (256, C.NormConfig(2, 128, False, 1, block_n2=128, one_round=True)),  # two equal pieces
    (300, C.NormConfig(1, 256, False, 2, block_n2=64, one_round=True)),  # unequal pieces, the second masked
    (256, C.NormConfig(2, 256, False, 2, hold_loaded=True, one_round=True)),  # x held as loaded
    (300, C.NormConfig(1, 256, False, 2, block_n2=64, hold_loaded=True, one_round=True)),  # held, two pieces
])
def test_one_round_statistics(device, dtype, n, cfg):
    """LayerNorm's forward with the row statistics in one pair reduction (``one_round``: var = E[d²] - E[d]² of the
    shifted row d) against the reference and the two-round kernel: a row whose first element (the shift) lies far
    outside a tight cluster takes the second round, so its rstd is the two-round one; an offset row; a constant row
    gives y = b exactly; a NaN stays in its row; in fp32 also with a fused residual, against the reference
    (``_check_config``). Refused for chunked rows and the backward."""
    if dtype == torch.float32:
        _check_config(device, False, 5, n, cfg._replace(one_round=False, programs=1), fwd_cfg=cfg)
    m = 6
    x = _rand((m, n), torch.float64, device, n, scale=2.0, offset=3.0)
    x[1] = _rand((n,), torch.float64, device, n + 6, scale=0.01)
    x[1, 0] = 64.0  # the shift 64 from a mean near 0.2, the rest within ±0.05: E[d]² ≫ var
    x[2] += 300.0 if dtype == torch.float32 else 30.0
    x[3] = 7.25
    x[5, n // 2] = float("nan")
    x = x.to(dtype)
    w = _rand((n,), dtype, device, n + 1)
    b = _rand((n,), dtype, device, n + 2)
    plain = cfg._replace(one_round=False)
    (y0, _, mean0, rstd0), (y1, _, mean1, rstd1) = (
        K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=c) for c in (plain, cfg))
    ry, _, rstd = R.layer_norm_forward(to_np64(x[:5]), to_np64(w), to_np64(b), 1e-5, 1)
    assert_close("y", y1[:5], ry, dtype)
    assert_close("y", y1[:5], to_np64(y0[:5]), dtype)
    # The one-round rstd: a few ulp of E[d²] (the interpreter adds a pair reduction's terms in one chain: larger).
    np.testing.assert_allclose(to_np64(rstd1[:5]), rstd, rtol=2e-5)
    np.testing.assert_allclose(to_np64(mean1[:5]), to_np64(mean0[:5]), rtol=1e-6, atol=1e-6)  # Σd / N either way
    np.testing.assert_allclose(to_np64(rstd1[1]), rstd[1], rtol=1e-6)  # the outlier row: the second round's rstd
    assert torch.equal(y1[3], b)
    assert torch.isnan(y1[5]).all() and torch.isnan(rstd1[5])
    for bad in (C.NormConfig(1, 64, True, 2, one_round=True),):
        with pytest.raises(ValueError, match="one_round"):
            K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=bad)
    rstd = torch.ones(m)
    with pytest.raises(ValueError, match="one_round"):
        K.norm_bwd(x, x, None, False, mean0, rstd, None, x.dtype, None, 1e-5, 0.0, False,
                   config=C.NormConfig(1, 512, False, 2, programs=1, one_round=True))


def test_forward_register_cap(monkeypatch, device):
    """``maxnreg`` reaches the forward's launch (0: no cap), the capped kernel gives the uncapped one's y, and a cap
    below 24 registers, or on the backward, is refused."""
    x = _rand((3, 200), torch.bfloat16, device, 7)
    w = _rand((200,), torch.bfloat16, device, 8)
    cfg = C.NormConfig(1, 256, False, 2, maxnreg=64)
    y0 = K.norm_fwd(x, w, None, None, 1e-5, 0.0, False, None, False, config=cfg._replace(maxnreg=0))[0]
    y1 = K.norm_fwd(x, w, None, None, 1e-5, 0.0, False, None, False, config=cfg)[0]
    assert torch.equal(y0, y1)
    with pytest.raises(ValueError, match="maxnreg"):
        K.norm_fwd(x, w, None, None, 1e-5, 0.0, False, None, False, config=cfg._replace(maxnreg=16))
    with pytest.raises(ValueError, match="maxnreg"):
        K.norm_bwd(x, x, None, False, None, torch.ones(3), None, x.dtype, None, 1e-5, 0.0, True,
                   config=C.NormConfig(1, 256, False, 2, programs=1, maxnreg=64))
    seen = []
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, warps, stages, traceable, maxnreg=None: seen.append(
        (traceable, maxnreg, meta["BLOCK_N"], meta["CHUNKED"])))
    K.norm_fwd(x, w, None, None, 1e-5, 0.0, False, None, False, config=cfg)
    K.norm_fwd(x, w, None, None, 1e-5, 0.0, False, None, False, config=cfg._replace(maxnreg=0))
    assert seen == [(False, 64, 256, False), (False, None, 256, False)]


def test_uncapped_launches_keep_their_entries(monkeypatch):
    """A forward entry that caps the registers serves launches that can take the cap; a traced launch (torch.compile:
    no ``maxnreg`` through torch's kernel wrapper) takes NORM_TUNED_UNCAPPED's entry instead, by exact N, else by
    key."""
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H200")
    C.norm_fwd_config.cache_clear()
    capped = C.norm_fwd_config(32768, 2, 0, False)
    assert capped.maxnreg == 64 and capped.one_round and capped.hold_loaded
    assert C.norm_fwd_config(28000, 2, 0, False) == capped
    assert C.norm_fwd_config(32768, 2, 0, False, capped=False) == C.NormConfig(1, 4096, True, 16, 1, 0, evict=True,
                                                                               unroll=8)
    assert C.norm_fwd_config(28000, 2, 0, False, capped=False) == C.NormConfig(1, 32768, False, 32, 1, 0)
    assert C.norm_fwd_config(16384, 2, 0, False, capped=False) == C.norm_fwd_config(16384, 2, 0, False)  # no cap
    seen = []
    monkeypatch.setattr(K, "device_index", lambda t: 0)
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, warps, stages, traceable, maxnreg=None: seen.append(
        (traceable, maxnreg, meta["BLOCK_N"], meta["CHUNKED"])))
    x = torch.randn(2, 28000, dtype=torch.bfloat16)
    for traceable in (False, True):
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, False, None, True, traceable=traceable)
    assert seen == [(False, 64, 16384, False), (True, None, 32768, False)]
    C.norm_fwd_config.cache_clear()


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg", "affine"), [
    (3, 300, C.NormConfig(2, 512, False, 4, 1, 2, True), True),
    (7, 129, C.NormConfig(1, 256, False, 2, 3, 3, True), True),
    (5, 64, C.NormConfig(4, 64, False, 4, 1, 1, True), False),
    (4, 1, C.NormConfig(2, 1, False, 1, 1, 2, True), True),
    (4, 2, C.NormConfig(2, 2, False, 1, 1, 2, True), True),
])
def test_weight_in_loop_backward_small(device, is_rms, m, n, cfg, affine):
    """The whole-row backward that re-reads the weight per row block (``w_in_loop``, the configs of N >= 16384), on
    small rows by overriding the config; with a fused residual, without parameters, and at the degenerate N = 1, 2
    (a constexpr branch of its own)."""
    x = _rand((m, n), torch.float32, device, n, scale=2.0, offset=3.0)
    r = _rand((m, n), torch.float32, device, n + 4)
    w = _rand((n,), torch.float32, device, n + 1) if affine else None
    b = _rand((n,), torch.float32, device, n + 2) if affine and not is_rms else None
    dy = _rand((m, n), torch.float32, device, n + 3)
    ds = _rand((m, n), torch.float32, device, n + 5)
    _, s, mean, rstd = K.norm_fwd(x, w, b, r, 1e-5, 0.0, is_rms, None, True)
    dx, dr, dw, db = K.norm_bwd(dy, s, w, b is not None, mean, rstd, ds, x.dtype, r.dtype, 1e-5, 0.0, is_rms,
                                bias_dtype=None if b is None else b.dtype, config=cfg)
    _, rdx, rdw, rdb = _reference(is_rms, s, w, b, 1e-5, dy)
    assert_close("dx", dx, rdx + to_np64(ds), torch.float32)
    assert torch.equal(dx, dr)
    if affine:
        assert_close("dweight", dw, rdw, torch.float32, param_grad=True)
    if b is not None:
        assert_close("dbias", db, rdb, torch.float32, param_grad=True)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("m", "n", "cfg"), [
    (7, 100, C.NormConfig(1, 32, False, 4, programs=8, split=True)),  # 4 pieces (last 4 columns), 2 slots
    (5, 33, C.NormConfig(1, 16, False, 2, programs=4, split=True)),  # 3 pieces, the last one column; 1 slot
    (9, 64, C.NormConfig(1, 32, False, 2, programs=5, split=True)),  # 2 full pieces, 2 slots of 5 and 4 rows
    (2, 129, C.NormConfig(1, 64, False, 4, programs=12, split=True)),  # fewer rows than slots could take
])
@pytest.mark.parametrize("early", [False, True], ids=["slack", "early"])
def test_split_rows_small(device, is_rms, m, n, cfg, early):
    """The backward's rows split across programs (partials exchanged per row, two rows deep, several rounds per
    slot; the next row's partial published before the wait, or after it with ``early_loads``) on small rows, by
    overriding the config: fused residual, constant row, against the reference."""
    _check_config(device, is_rms, m, n, cfg._replace(early_loads=early), fwd_cfg=None)


def test_split_config_checks_and_choice(device):
    """A given split config must be the backward's and cut rows into 2 to ``programs`` pieces (n > 2, not
    float64), fewer to the next power of two than its threads (more fail to compile); the heuristic splits 16-bit
    and float32 rows where NORM_SPLIT_TUNED(_FP32) has an entry (rows past its longest key take that entry; a None
    entry keeps that key's rows whole), unless asked not to (traced launches) or the pieces cannot all be
    resident."""
    x = _rand((2, 100), torch.float32, device, 1)
    y, _, _, rstd = K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True)
    with pytest.raises(ValueError, match="only the backward"):
        K.norm_fwd(x, None, None, None, 1e-5, 0.0, True, None, True,
                   config=C.NormConfig(1, 32, False, 4, programs=8, split=True))
    for bad in (C.NormConfig(1, 128, False, 4, programs=8, split=True),  # one piece
                C.NormConfig(1, 8, False, 4, programs=8, split=True),  # 13 pieces, 8 programs
                C.NormConfig(1, 4, False, 1, programs=64, split=True)):  # 25 pieces (to 32): not below 32 threads
        with pytest.raises(ValueError, match="splits rows"):
            K.norm_bwd(x, x, None, False, None, rstd, None, x.dtype, None, 1e-5, 0.0, True, config=bad)
    with pytest.raises(ValueError, match="float64"):
        K.norm_bwd(x.double(), x.double(), None, False, None, rstd.double(), None, torch.float64, None, 1e-5, 0.0,
                   True, config=C.NormConfig(1, 32, False, 4, programs=8, split=True))
    tables = ((2, C.NORM_SPLIT_TUNED), (4, C.NORM_SPLIT_TUNED_FP32))

    def first_row(table, is_rms, key):  # the first row of an entry: past 2P/3 for a 3P/4 key, else past its 3P/4 key's
        if key & (key - 1):
            return key * 2 // 3 + 1
        return key * 3 // 4 + 1 if (is_rms, key * 3 // 4) in table else key // 2 + 1

    for size, table in tables:
        for (is_rms, key), entry in table.items():
            for n in (first_row(table, is_rms, key), key):
                if entry is None:  # measured: whole rows
                    assert not C.norm_bwd_config(n, size, None, is_rms).split
                    continue
                block_n, _, per_sm, w_in_loop, early_loads = entry
                resident = per_sm * C.multiprocessor_count(None)
                cfg = C.norm_bwd_config(n, size, None, is_rms)
                assert cfg.split == (-(-n // block_n) <= resident)
                if cfg.split:
                    assert (cfg.block_n, cfg.w_in_loop, cfg.early_loads) == (block_n, w_in_loop, early_loads)
                assert not C.norm_bwd_config(n, size, None, is_rms, False).split
                assert not C.norm_bwd_config(n, 8, None, is_rms).split  # float64: never split
    with pytest.MonkeyPatch.context() as mp:  # a device of many SMs: every tuned size splits, and longer rows too
        mp.setattr(C, "multiprocessor_count", lambda device: 1024)
        for size, table in tables:
            for (is_rms, key), entry in table.items():
                split = entry is not None
                assert C.norm_bwd_config(first_row(table, is_rms, key), size, None, is_rms).split == split
                assert C.norm_bwd_config(key, size, None, is_rms).split == split
            longest = max(k for _, k in table)
            assert C.norm_bwd_config(4 * longest, size, None, True).split
            assert not C.norm_bwd_config(12288, size, None, True).split  # whole rows


def _check_split_backward(device, is_rms, m, cfg, seed, bias):
    """A backward of rows of 100 with ``cfg`` (the forward by the heuristic) against the reference."""
    x = _rand((m, 100), torch.float32, device, seed)
    w = _rand((100,), torch.float32, device, seed + 1)
    b = _rand((100,), torch.float32, device, seed + 4) if bias else None
    dy = _rand((m, 100), torch.float32, device, seed + 2)
    _, _, mean, rstd = K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True)
    dx, _, dw, db = K.norm_bwd(dy, x, w, b is not None, mean, rstd, None, x.dtype, None, 1e-5, 0.0, is_rms,
                               bias_dtype=None if b is None else b.dtype, config=cfg)
    _, rdx, rdw, rdb = _reference(is_rms, x, w, b, 1e-5, dy)
    assert_close("dx", dx, rdx, torch.float32)
    assert_close("dweight", dw, rdw, torch.float32, param_grad=True)
    if b is not None:
        assert_close("dbias", db, rdb, torch.float32, param_grad=True)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_split_orders_agree(monkeypatch, device, is_rms):
    """Both orders of a split row's exchange (the next row's partial published before or after the wait) reach the
    kernel and give bitwise the same dx, d residual, dweight and dbias, over many rounds, with residual_out's
    gradient."""
    real = K._bwd_split
    seen = []

    def launch(grid, args, meta, *rest, **kwargs):
        seen.append(meta["EARLY_LOADS"])
        return real(grid, args, meta, *rest, **kwargs)

    monkeypatch.setattr(K, "_bwd_split", launch)
    m, n = 41, 100  # 4 pieces of 32 columns, 2 slots: 21 and 20 rounds
    x = _rand((m, n), torch.float32, device, 11, offset=0.5)
    w = _rand((n,), torch.float32, device, 12, offset=1.0)
    b = None if is_rms else _rand((n,), torch.float32, device, 13)
    dy = _rand((m, n), torch.float32, device, 14)
    ds = _rand((m, n), torch.float32, device, 15)
    _, _, mean, rstd = K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True)
    outs = [K.norm_bwd(dy, x, w, b is not None, mean, rstd, ds, x.dtype, x.dtype, 1e-5, 0.0, is_rms,
                       bias_dtype=None if b is None else b.dtype,
                       config=C.NormConfig(1, 32, False, 4, programs=8, split=True, early_loads=early))
            for early in (False, True)]
    assert seen == [False, True]
    for slow, early in zip(*outs, strict=True):
        assert (slow is None) == (early is None)
        if slow is not None:
            assert torch.equal(slow, early)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_split_refused_falls_back(monkeypatch, device, is_rms):
    """A grid CUDA cannot hold at once (it refuses the cooperative launch before anything runs) is launched again on
    half the programs, as long as a row's pieces fit (the partials summed over the slots that ran), else the rows
    take the unsplit kernel; what fitted is kept per (launcher, device, config, dtype); other launch errors
    propagate."""
    cfg = C.NormConfig(1, 32, False, 4, programs=16, split=True)  # rows of 100: 4 pieces, 4 slots of 16 programs
    real = K._bwd_split
    for fits, slots in ((8, 2), (2, 0)):
        calls = []
        monkeypatch.setattr(K, "_SPLIT_FIT", {})

        def launch(grid, *args, calls=calls, fits=fits, **kwargs):
            calls.append(grid[0])
            if grid[0] > fits:
                raise RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch")
            return real(grid, *args, **kwargs)

        monkeypatch.setattr(K, "_bwd_split", launch)
        for seed in (1, 2):
            _check_split_backward(device, is_rms, 5, cfg, seed, bias=not is_rms)
        # The first call: 16 programs refused, then 8 accepted (fits = 8), or 8 and 4 refused too and the unsplit
        # kernel (fits = 2: a slot needs 4); the second call starts from what fitted.
        assert calls == ([16, 8, 8] if slots else [16, 8, 4]), calls
        assert set(K._SPLIT_FIT.values()) == {4 * slots}

    def fail(*args, **kwargs):
        raise RuntimeError("an unrelated launch failure")

    monkeypatch.setattr(K, "_bwd_split", fail)
    monkeypatch.setattr(K, "_SPLIT_FIT", {})
    with pytest.raises(RuntimeError, match="unrelated"):
        _check_split_backward(device, is_rms, 5, cfg, 3, bias=False)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_split_rows_tag_epoch(monkeypatch, device, is_rms):
    """The tag words kept across launches (as on a CUDA stream): a launch's tags run from its epoch + 1, its last
    program moves the epoch past them (by cdiv(M, slots) + 1), and near 2^30 zeroes the words and starts from 0;
    the interpreter checks every collected partial's tag."""
    words = torch.zeros(4096, dtype=torch.int64, device=device)
    monkeypatch.setattr(K, "tag_words", lambda n, dev: words)
    cfg = C.NormConfig(1, 32, False, 4, programs=8, split=True)  # rows of 100: 4 pieces, 2 slots of 4 and 3 rows
    expected = [5, 10, 0, 5]
    for step, epoch in enumerate(expected):
        if epoch == 0:
            words[0] = (1 << 30) - 3
            words[1:] = 12345  # old words (tag 0): zeroed by the wrap
        _check_split_backward(device, is_rms, 7, cfg, step, bias=False)
        assert words[0].item() == epoch
        if epoch == 0:
            assert not words[1:].any()


@pytest.mark.gpu
def test_split_rows_gpu(monkeypatch):
    """The backward's split rows at full size through the public functions with the launch heuristic (many rounds
    per slot, launch after launch on fresh data sharing the stream's buffers — a launch reading another's partials,
    or a round reading the wrong buffer, would show — the first shape's later calls replayed), the fused residual by
    explicit configs (the next row's partial published before or after the wait); the counters back at 0, the tag
    epoch wrapped near its limit."""
    from fastnorm.kernels._exchange import SYNC_BUFFERS

    replays = watch_replays(monkeypatch)
    cases = [(True, 3001, 32768)] * 3 + [(True, 1000, 65536), (True, 777, 20000),
                                        (False, 2001, 20480), (False, 500, 65536), (False, 64, 262144)]
    for seed, (is_rms, m, n) in enumerate(cases):
        assert C.norm_bwd_config(n, 2, 0, is_rms).split
        x = _rand((m, n), torch.bfloat16, "cuda", seed, offset=0.5)
        w = _rand((n,), torch.bfloat16, "cuda", seed + 1, offset=1.0)
        b = None if is_rms else _rand((n,), torch.bfloat16, "cuda", seed + 2)
        dy = _rand((m, n), torch.bfloat16, "cuda", seed + 3)
        _check_all(is_rms, x, n, w, b, 1e-5, dy)
    split = C.NormConfig(1, 8192, False, 16, 1, C.multiprocessor_count(0), True, split=True)
    for is_rms in (False, True):
        for early in (False, True):
            _check_config("cuda", is_rms, 1501, 40000, split._replace(early_loads=early), fwd_cfg=None)
    torch.cuda.synchronize()
    assert all(K._SPLIT_FIT.values()) and len(replays) >= 2
    assert all(not buf.any() for key, buf in SYNC_BUFFERS.items() if key[2] == "counters")
    tags = SYNC_BUFFERS[(0, torch.cuda.current_stream().cuda_stream, "split rows")]
    assert 0 < tags[0].item() < 1 << 30 and tags[1:].any()
    tags[0] = (1 << 30) - 5  # the launch's last program zeroes the tag words and starts again from 0
    # A shape not called before: its first call takes the stream's current tag buffer, and its replay the same one
    # (a call recorded before a larger buffer replaced it keeps the buffer it was recorded with).
    for seed in (7, 8):
        x = _rand((2999, 32768), torch.bfloat16, "cuda", seed)
        w = _rand((32768,), torch.bfloat16, "cuda", seed + 1, offset=1.0)
        dy = _rand((2999, 32768), torch.bfloat16, "cuda", seed + 3)
        _check_all(True, x, 32768, w, None, 1e-5, dy)
    torch.cuda.synchronize()
    assert 0 < tags[0].item() < 10000


@pytest.mark.gpu
@pytest.mark.parametrize("is_rms,n", [(True, 32768), (False, 20480)])
def test_split_rows_cuda_graph(is_rms, n):
    """The backward's split rows captured in a CUDA graph with the forward: every replay on new inputs gives
    bitwise the eager result on the same inputs (the cooperative launch is captured; the tag epoch and the counters
    live on the device, so each replay advances them as an eager launch does)."""
    m = 1001
    assert C.norm_bwd_config(n, 2, 0, is_rms).split
    w = _rand((n,), torch.bfloat16, "cuda", 1, offset=1.0).requires_grad_(True)
    b = None if is_rms else _rand((n,), torch.bfloat16, "cuda", 2).requires_grad_(True)
    params = [w] if b is None else [w, b]

    def step(x, dy):
        y = fastnorm.rms_norm(x, (n,), w, 1e-5) if is_rms else fastnorm.layer_norm(x, (n,), w, b, 1e-5)
        return (y, *torch.autograd.grad(y, [x, *params], dy))

    static_x = _rand((m, n), torch.bfloat16, "cuda", 3).requires_grad_(True)
    static_dy = _rand((m, n), torch.bfloat16, "cuda", 4)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # compile and warm up outside the capture
            step(static_x, static_dy)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = step(static_x, static_dy)
    for r in range(3):
        x = _rand((m, n), torch.bfloat16, "cuda", 10 + r).requires_grad_(True)
        dy = _rand((m, n), torch.bfloat16, "cuda", 20 + r)
        with torch.no_grad():
            static_x.copy_(x)
            static_dy.copy_(dy)
        graph.replay()
        eager = step(x, dy)
        for name, got, want in zip(("y", "dx", "dweight", "dbias")[:len(eager)], static_out, eager, strict=True):
            assert torch.equal(got, want), f"replay {r}: {name} differs from the eager result"
    assert all(K._SPLIT_FIT.values())  # no launch, captured or eager, was refused


def test_multi_dim_normalized_shape(device):
    x = _rand((2, 3, 4, 5), torch.float32, device, 1)
    w = _rand((4, 5), torch.float32, device, 2)
    b = _rand((4, 5), torch.float32, device, 3)
    dy = _rand((2, 3, 4, 5), torch.float32, device, 4)
    _check_all(False, x, (4, 5), w, b, 1e-5, dy, nd=2)
    _check_all(True, x, [3, 4, 5], _rand((3, 4, 5), torch.float32, device, 5), None, 1e-6, dy, nd=3)


@pytest.mark.parametrize("is_rms", [False, True])
def test_two_dim_input_normalized_over_both_dims(device, is_rms):
    """A 2-D input is one row of rows·cols elements here, not ``rows`` rows (a 2-D fast path must check n)."""
    x = _rand((3, 4), torch.float32, device, 1)
    w = _rand((3, 4), torch.float32, device, 2)
    dy = _rand((3, 4), torch.float32, device, 4)
    _check_all(is_rms, x, (3, 4), w, None if is_rms else _rand((3, 4), torch.float32, device, 3), 1e-5, dy, nd=2)


def test_fp32_weight_with_bf16_input(device):
    n = 129
    x = _rand((3, n), torch.bfloat16, device, 1)
    w = _rand((n,), torch.float32, device, 2, offset=1.0)
    b = _rand((n,), torch.float32, device, 3)
    dy = _rand((3, n), torch.bfloat16, device, 4)
    y, dx, dw, db = _run(False, x, n, w, b, 1e-5, dy)
    ry, rdx, rdw, rdb = _reference(False, x, w, b, 1e-5, dy)
    assert y.dtype == torch.bfloat16 and dw.dtype == torch.float32 and db.dtype == torch.float32
    assert_close("y", y, ry, torch.bfloat16)
    assert_close("dx", dx, rdx, torch.bfloat16)
    assert_close("dweight", dw, rdw, torch.float32, param_grad=True)
    assert_close("dbias", db, rdb, torch.float32, param_grad=True)


# ----------------------------------------------------------------------------- numerics


@pytest.mark.parametrize("n", [7, 1000, 40000])
def test_constant_rows_give_exact_zero(device, n):
    x = torch.full((3, n), 0.1, dtype=torch.float32, device=device)
    x[1] = -7.3
    x[2] = 1e4 / 3
    y = fastnorm.layer_norm(x, n)
    assert torch.equal(y, torch.zeros_like(y))
    w = torch.full((n,), 2.0, device=device)
    y = fastnorm.layer_norm(x.to(torch.bfloat16), n, w.to(torch.bfloat16))
    assert torch.equal(y.float(), torch.zeros((3, n), device=device))
    assert torch.equal(fastnorm.rms_norm(torch.zeros(2, n, device=device), n), torch.zeros(2, n, device=device))


def test_constant_rows_chunked_exact_zero(device):
    x = torch.full((2, 300), 0.37, device=device)
    y, _, _, _ = K.norm_fwd(x, None, None, None, 1e-5, 0.0, False, None, False,
                            config=C.NormConfig(1, 64, True, 4))
    assert torch.equal(y, torch.zeros_like(y))


@pytest.mark.parametrize("case", ["outlier_first", "first_chunk_apart", "offset"])
def test_chunked_forward_hard_rows(device, case):
    """The chunked LayerNorm forward (per-position Welford on x - x[0], Chan's merge) on fp32 rows that defeat a
    plain shifted sum: an outlier at x[0] (a shift by it alone loses ~N·ε of the variance: 2.5e-4 here), a first
    chunk apart from the rest, 1e4 + randn. rstd and the saved mean (of s - x[0]) against float64, y against the
    reference. (Shifted sums by x[0] plus the first chunk's mean, session 37, passed this too and were not faster.)"""
    n = 4100  # 16 chunks of 256 and a ragged one
    x = _rand((3, n), torch.float32, device, n)
    if case == "outlier_first":
        x[:, 0] += 1e4
    elif case == "first_chunk_apart":
        x[:, :256] += 30.0
    else:
        x += 1e4
    w = _rand((n,), torch.float32, device, n + 1)
    b = _rand((n,), torch.float32, device, n + 2)
    y, _, mean, rstd = K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=C.NormConfig(1, 256, True, 4))
    ry, _, _, _ = _reference(False, x, w, b, 1e-5, torch.zeros_like(x))
    assert_close("y", y, ry, torch.float32)
    x64 = x.double()
    std = x64.std(dim=1, unbiased=False)
    torch.testing.assert_close(rstd.double(), (std**2 + 1e-5).rsqrt(), rtol=2e-6, atol=0.0)
    torch.testing.assert_close(mean.double(), x64.mean(dim=1) - x64[:, 0], rtol=1e-6, atol=1e-6 * float(std.max()))


@pytest.mark.parametrize("n", [100, 5000])
def test_large_offset_rows_fp32(device, n):
    """Rows of 1e4 + randn keep fp32 accuracy (no cancellation from E[x²] - E[x]²)."""
    x = _rand((2, n), torch.float32, device, n, offset=1e4)
    w = _rand((n,), torch.float32, device, n + 1)
    b = _rand((n,), torch.float32, device, n + 2)
    dy = _rand((2, n), torch.float32, device, n + 3)
    _check_all(False, x, n, w, b, 1e-5, dy)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_fp16_sum_of_squares_past_fp16_max(device, is_rms):
    n = 1024
    x = _rand((2, n), torch.float16, device, 3, scale=300.0)  # Σx² ≈ 9e7 >> 65504
    assert float((x.double() ** 2).sum(dim=1).min()) > 65504
    dy = _rand((2, n), torch.float16, device, 4)
    y, dx, _, _ = _run(is_rms, x, n, None, None, 1e-5, dy)
    assert torch.isfinite(y).all() and torch.isfinite(dx).all()
    ry, rdx, _, _ = _reference(is_rms, x, None, None, 1e-5, dy)
    assert_close("y", y, ry, torch.float16)
    assert_close("dx", dx, rdx, torch.float16)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [33, 20000])
def test_nan_stays_in_its_row(device, is_rms, n):
    x = _rand((4, n), torch.float32, device, n)
    x[2, n // 2] = float("nan")
    w = _rand((n,), torch.float32, device, n + 1)
    dy = _rand((4, n), torch.float32, device, n + 2)
    y, dx, dw, _ = _run(is_rms, x, n, w, None, 1e-5, dy)
    assert torch.isnan(y[2]).all() and torch.isnan(dx[2]).all()
    keep = [0, 1, 3]
    assert torch.isfinite(y[keep]).all() and torch.isfinite(dx[keep]).all()
    ry, rdx, _, _ = _reference(is_rms, x[keep], w, None, 1e-5, dy[keep])
    assert_close("y", y[keep], ry, torch.float32)
    assert_close("dx", dx[keep], rdx, torch.float32)
    assert torch.isnan(dw).all()  # every column sums row 2's NaN


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("shape", [(0, 16), (2, 0, 16)])
def test_empty_input(device, is_rms, shape):
    n = shape[-1]
    x = torch.randn(shape, device=device, requires_grad=True)
    w = torch.randn(n, device=device, requires_grad=True)
    b = None if is_rms else torch.randn(n, device=device, requires_grad=True)
    y = fastnorm.rms_norm(x, n, w) if is_rms else fastnorm.layer_norm(x, n, w, b)
    assert y.shape == x.shape
    grads = torch.autograd.grad(y, [x, w] + ([] if is_rms else [b]), torch.ones_like(y))
    assert grads[0].shape == x.shape
    for g in grads[1:]:
        assert torch.equal(g, torch.zeros(n, device=device))


def test_empty_normalized_dim(device):
    x = torch.randn(3, 0, device=device)
    assert fastnorm.layer_norm(x, 0).shape == (3, 0)
    assert fastnorm.rms_norm(x, (0,)).shape == (3, 0)


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("dtype", "rdtype", "residual_dtype"), [
    (torch.float32, torch.float32, None),
    (torch.bfloat16, torch.bfloat16, None),
    (torch.bfloat16, torch.float32, torch.float32),
    (torch.float16, torch.float16, torch.float32),
])
@pytest.mark.parametrize("n", [100, 3000])
def test_residual(device, is_rms, dtype, rdtype, residual_dtype, n):
    m = 2
    x = _rand((m, n), dtype, device, n).requires_grad_()
    r = _rand((m, n), rdtype, device, n + 1).requires_grad_()
    w = _rand((n,), dtype, device, n + 2, offset=1.0).requires_grad_()
    b = None if is_rms else _rand((n,), dtype, device, n + 3).requires_grad_()
    kw = {"residual": r, "residual_dtype": residual_dtype}
    y, s = fastnorm.rms_norm(x, n, w, 1e-5, **kw) if is_rms else fastnorm.layer_norm(x, n, w, b, **kw)
    out_dtype = residual_dtype or dtype
    assert y.dtype == dtype and s.dtype == out_dtype
    expected_s = (x.detach().float() + r.detach().float()).to(out_dtype)
    if device == "cpu" and out_dtype == torch.bfloat16:
        # Triton 3.6's interpreter truncates fp32 -> bf16 (the GPU rounds to nearest even): one bf16 ulp.
        assert_close("residual_out", s, to_np64(expected_s), torch.bfloat16)
    else:
        assert torch.equal(s, expected_s)
    expected_s = s.detach()
    dy = _rand((m, n), dtype, device, n + 4)
    ds = _rand((m, n), out_dtype, device, n + 5)
    params = [x, r, w] + ([] if is_rms else [b])
    grads = torch.autograd.grad([y, s], params, [dy, ds])
    ry, rdx, rdw, rdb = _reference(is_rms, expected_s, w, b, 1e-5, dy)
    rdx = rdx + to_np64(ds)
    tol_dtype = dtype if dtype != torch.float32 else torch.float32
    assert_close("y", y, ry, tol_dtype)
    assert grads[0].dtype == dtype and grads[1].dtype == rdtype
    assert_close("dx", grads[0], rdx, tol_dtype)
    assert_close("dresidual", grads[1], rdx, tol_dtype)
    assert_close("dweight", grads[2], rdw, dtype, param_grad=True)
    if b is not None:
        assert_close("dbias", grads[3], rdb, dtype, param_grad=True)


def test_residual_output_only_used(device):
    """Only residual_out flows into the loss: the gradient of x and of the residual is ds."""
    x = torch.randn(2, 50, device=device, requires_grad=True)
    r = torch.randn(2, 50, device=device, requires_grad=True)
    _, s = fastnorm.layer_norm(x, 50, residual=r)
    gx, gr = torch.autograd.grad(s.sum(), [x, r])
    assert torch.equal(gx, torch.ones_like(gx)) and torch.equal(gr, torch.ones_like(gr))


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_weight_offset(device, is_rms, dtype):
    n = 200
    x = _rand((3, n), dtype, device, 1)
    w0 = _rand((n,), dtype, device, 2, scale=0.1)  # zero-centred weights
    b = None if is_rms else _rand((n,), dtype, device, 3)
    dy = _rand((3, n), dtype, device, 4)
    y, dx, dw, db = _run(is_rms, x, n, w0, b, 1e-5, dy, weight_offset=1.0)
    w_eff = (w0.double() + 1.0)
    ry, rdx, rdw, rdb = _reference(is_rms, x, w_eff, b, 1e-5, dy)
    assert_close("y", y, ry, dtype)
    assert_close("dx", dx, rdx, dtype)
    assert_close("dweight", dw, rdw, dtype, param_grad=True)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_no_weight_no_bias(device, is_rms):
    n = 77
    x = _rand((4, n), torch.float32, device, 1)
    dy = _rand((4, n), torch.float32, device, 2)
    y, dx, _, _ = _run(is_rms, x, n, None, None, 1e-5, dy)
    ry, rdx, _, _ = _reference(is_rms, x, None, None, 1e-5, dy)
    assert_close("y", y, ry, torch.float32)
    assert_close("dx", dx, rdx, torch.float32)
    if not is_rms:  # weight without bias
        w = _rand((n,), torch.float32, device, 3)
        _check_all(False, x, n, w, None, 1e-5, dy)


def test_rms_eps_default_is_dtype_eps(device):
    x = _rand((2, 64), torch.bfloat16, device, 1, scale=0.01)
    y = fastnorm.rms_norm(x, 64)
    ry, _ = R.rms_norm_forward(to_np64(x), None, float(torch.finfo(torch.bfloat16).eps))
    assert_close("y", y, ry, torch.bfloat16)


# ----------------------------------------------------------------------------- second order


def _second_order_case(is_rms, case, device, dtype=torch.float64):
    """(fn, inputs) of a double-backward case: fn(*inputs) returns y, or (y, s) with a residual."""
    shape = (2, 3) if case == "2d" else (5,)
    n = int(np.prod(shape))
    x = _rand((3, *shape), dtype, device, n, scale=2.0, offset=0.5).requires_grad_()
    w = _rand(shape, dtype, device, n + 1, scale=0.5, offset=1.0).requires_grad_()
    b = None if is_rms else _rand(shape, dtype, device, n + 2).requires_grad_()
    r = _rand((3, *shape), dtype, device, n + 3).requires_grad_()
    eps = 2.0**-17  # exact in float32 too: the interpreter passes float scalars as float32

    def norm(x, w=None, b=None, r=None):
        kw = {} if r is None else {"residual": r, "weight_offset": 0.5}
        return fastnorm.rms_norm(x, shape, w, eps, **kw) if is_rms else fastnorm.layer_norm(x, shape, w, b, eps, **kw)

    if case == "plain":
        return norm, (x,)
    params = (w,) if is_rms else (w, b)
    if case == "op":  # the custom op called eagerly: its registered autograd (what torch.compile differentiates)
        return (lambda x, w, b=None: torch.ops.fastnorm.norm_fwd(x, w, b, None, 1, eps, 0.0, is_rms, None)[0]), \
            (x, *params)
    if case == "residual":
        return (lambda x, *p: norm(x, *p[:-1], r=p[-1])), (x, *params, r)
    return norm, (x, *params)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("case", ["affine", "plain", "residual", "2d", "op"])
def test_double_backward_gradgradcheck(device, is_rms, case):
    """Gradients taken with create_graph=True are differentiable again (a gradient penalty, a Hessian-vector
    product), as torch's are: gradgradcheck in float64 compares their autograd derivatives with finite differences of
    them, each forward run again, so a statistic the backward took as a constant (the saved mean, rstd) fails. That
    the gradients themselves are right: ``test_create_graph_keeps_the_first_order_gradients``. Weight and bias, none,
    a residual with a weight offset (both outputs), a two-dimensional normalized shape, the custom op itself."""
    fn, inputs = _second_order_case(is_rms, case, device)
    assert torch.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_gradient_penalty_matches_torch(device, is_rms):
    """A loss of the output and of its own input gradient (create_graph=True), differentiated once more in float64:
    the same gradients as torch's LayerNorm/RMSNorm. Before fastnorm's backward took part in the second derivative,
    its share was dropped silently here (the y term keeps the loss differentiable without it)."""
    x = _rand((4, 6), torch.float64, device, 1, scale=2.0, offset=0.5)
    w = _rand((6,), torch.float64, device, 2, offset=1.0)
    b = _rand((6,), torch.float64, device, 3)
    c = _rand((4, 6), torch.float64, device, 4)

    def grads(norm):
        xs, ws, bs = (t.detach().clone().requires_grad_() for t in (x, w, b))
        y = norm(xs, ws, bs)
        (gx,) = torch.autograd.grad((y * c).square().sum(), xs, create_graph=True)
        return torch.autograd.grad(gx.square().sum() + y.sum(), (xs, ws) if is_rms else (xs, ws, bs))

    if is_rms:
        ours = grads(lambda x, w, b: fastnorm.rms_norm(x, 6, w, 1e-5))
        theirs = grads(lambda x, w, b: F.rms_norm(x, (6,), w, 1e-5))
    else:
        ours = grads(lambda x, w, b: fastnorm.layer_norm(x, 6, w, b))
        theirs = grads(lambda x, w, b: F.layer_norm(x, (6,), w, b))
    for name, a, e in zip(("x", "weight", "bias"), ours, theirs, strict=False):
        assert_close(f"second-order d{name}", a, to_np64(e), torch.float64, param_grad=name != "x")


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_create_graph_keeps_the_first_order_gradients(device, is_rms, dtype):
    """The backward that create_graph=True takes gives the kernels' gradients (against the reference, the
    tolerances of the dtype), dx, dresidual and dweight with a grad_fn (dbias = Σdy depends on no input); with a
    residual in float32 and a weight offset."""
    n = 33
    x = _rand((4, n), dtype, device, 1).requires_grad_()
    r = _rand((4, n), dtype, device, 2).requires_grad_()
    w = _rand((n,), dtype, device, 3, scale=0.1).requires_grad_()
    b = None if is_rms else _rand((n,), dtype, device, 4).requires_grad_()
    kw = {"residual": r, "residual_dtype": torch.float32, "weight_offset": 1.0}
    y, s = fastnorm.rms_norm(x, n, w, 1e-5, **kw) if is_rms else fastnorm.layer_norm(x, n, w, b, **kw)
    dy = _rand((4, n), dtype, device, 5)
    ds = _rand((4, n), torch.float32, device, 6)
    params = [x, r, w] + ([] if is_rms else [b])
    grads = torch.autograd.grad([y, s], params, [dy, ds], create_graph=True)
    assert all(g.grad_fn is not None for g in grads[:3])
    assert [g.dtype for g in grads] == [p.dtype for p in params]
    ry, rdx, rdw, rdb = _reference(is_rms, s.detach(), (w.detach().double() + 1.0), b, 1e-5, dy)
    rdx = rdx + to_np64(ds)
    assert_close("dx", grads[0], rdx, dtype)
    assert_close("dresidual", grads[1], rdx, dtype)
    assert_close("dweight", grads[2], rdw, dtype, param_grad=True)
    if b is not None:
        assert_close("dbias", grads[3], rdb, dtype, param_grad=True)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
def test_forward_ad_matches_torch(device, is_rms, residual):
    """Forward-mode AD (``torch.autograd.forward_ad``): the tangents of y (and of the residual sum) from tangents of
    x, the weight, the bias and the residual, all together and one at a time, equal torch's in float64 (a weight
    offset with the residual); with and without grad mode."""
    import torch.autograd.forward_ad as fwad

    n = 7
    x, w, b, r = (_rand(shape, torch.float64, device, k) for k, shape in enumerate(((4, n), (n,), (n,), (4, n))))
    gen = torch.Generator().manual_seed(21)
    tangents = [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(device) for t in (x, w, b, r)]
    offset = 0.5 if residual else 0.0

    def ours(x, w, b, r):
        kw = {"residual": r, "weight_offset": offset} if residual else {}
        return fastnorm.rms_norm(x, n, w, 1e-5, **kw) if is_rms else fastnorm.layer_norm(x, n, w, b, **kw)

    def theirs(x, w, b, r):
        s = x + r if residual else x
        y = F.rms_norm(s, (n,), w + offset, 1e-5) if is_rms else F.layer_norm(s, (n,), w + offset, b)
        return (y, s) if residual else y

    def tangents_of(fn, which):
        with fwad.dual_level():
            duals = [fwad.make_dual(p, t) if k in which else p for k, (p, t) in
                     enumerate(zip((x, w, b, r), tangents, strict=True))]
            out = fn(*duals)
            return [fwad.unpack_dual(o).tangent for o in (out if residual else (out,))]

    cases = [(0, 1, 2, 3), (0,), (1,)] + ([] if is_rms else [(2,)]) + ([(3,)] if residual else [])
    for which in cases:
        for grad_mode in (True, False):
            with torch.set_grad_enabled(grad_mode):
                got = tangents_of(ours, which)
            for name, a, e in zip(("y", "residual sum")[:len(got)], got, tangents_of(theirs, which), strict=True):
                if e is None:  # a tangent that torch leaves undefined (no input it depends on has one)
                    assert a is None or not a.any(), name
                    continue
                assert_close(f"tangent of {name} (inputs {which})", a, to_np64(e), torch.float64)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_forward_over_reverse_matches_torch(device, is_rms):
    """A backward (create_graph=False) of an output made from a dual x: the gradients carry tangents, torch's in
    float64 (before the backward took PyTorch operations there, the kernels' gradients dropped them)."""
    import torch.autograd.forward_ad as fwad

    n = 6
    x0, w0, tx, v = (_rand(shape, torch.float64, device, 30 + k) for k, shape in
                     enumerate(((3, n), (n,), (3, n), (3, n))))

    def tangents(norm, x0, w0, tx, v):
        with fwad.dual_level():
            x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
            gx, gw = torch.autograd.grad(norm(fwad.make_dual(x, tx), w), (x, w), v)
            return fwad.unpack_dual(gx).tangent, fwad.unpack_dual(gw).tangent

    ours = tangents(lambda x, w: fastnorm.rms_norm(x, n, w, 1e-5) if is_rms else fastnorm.layer_norm(x, n, w),
                    x0, w0, tx, v)
    # torch's on the CPU: its CUDA RMSNorm backward (aten::_fused_rms_norm_backward) has no forward-AD formula
    theirs = tangents(lambda x, w: F.rms_norm(x, (n,), w, 1e-5) if is_rms else F.layer_norm(x, (n,), w),
                      *(t.cpu() for t in (x0, w0, tx, v)))
    for name, a, e in zip(("dx", "dweight"), ours, theirs, strict=True):
        assert a is not None, f"the tangent of {name} was dropped"
        assert_close(f"tangent of {name}", a, to_np64(e), torch.float64)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorized_jacobian_matches_torch(device, is_rms, strategy):
    """``torch.autograd.functional.jacobian(..., vectorize=True)`` vmaps the backward (reverse mode) or the tangents
    (forward mode): both give torch's Jacobian in float64 (batched gradients have no storage for the kernels, so that
    backward takes PyTorch operations)."""
    x, w = _rand((2, 5), torch.float64, device, 50), _rand((5,), torch.float64, device, 51)

    def jac(norm):
        return torch.autograd.functional.jacobian(norm, x, vectorize=True, strategy=strategy)

    ours = jac(lambda x: fastnorm.rms_norm(x, 5, w, 1e-5) if is_rms else fastnorm.layer_norm(x, 5, w))
    theirs = jac(lambda x: F.rms_norm(x, (5,), w, 1e-5) if is_rms else F.layer_norm(x, (5,), w))
    assert_close("Jacobian", ours, to_np64(theirs), torch.float64)


def test_forward_ad_residual_sum_in_float32(device):
    """bf16 x and residual summed into float32 (residual_dtype): the sum's tangent is added in float32 too, exactly
    ẋ + ṙ, not rounded to bf16 first."""
    import torch.autograd.forward_ad as fwad

    x, r, tx, tr = (_rand((2, 16), torch.bfloat16, device, 40 + k) for k in range(4))
    with fwad.dual_level():
        _, s = fastnorm.layer_norm(fwad.make_dual(x, tx), 16, residual=fwad.make_dual(r, tr),
                                   residual_dtype=torch.float32)
        ts = fwad.unpack_dual(s).tangent
    assert ts.dtype == torch.float32 and torch.equal(ts, tx.float() + tr.float())


# ----------------------------------------------------------------------------- layout


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_non_contiguous_equals_contiguous(device, is_rms):
    base = _rand((6, 5, 300), torch.float32, device, 1)
    fn = (lambda t: fastnorm.rms_norm(t, t.shape[-1])) if is_rms else (lambda t: fastnorm.layer_norm(t, t.shape[-1]))
    views = [
        base[:, :, 10:110],  # strided rows, unit column stride: no copy
        base.transpose(0, 1)[:, :, :64],  # rows not expressible by one stride: one copy
        base[:, :, ::3],  # non-unit column stride: one copy
    ]
    for v in views:
        assert not v.is_contiguous()
        assert torch.equal(fn(v), fn(v.contiguous()))
    # gradients through a strided view, and with a non-contiguous dy, equal the contiguous ones
    leaf = base.clone().requires_grad_()
    dy = _rand((6, 5, 100), torch.float32, device, 2)
    g1 = torch.autograd.grad(fn(leaf[:, :, 10:110]), leaf, dy)[0][:, :, 10:110]
    c = base[:, :, 10:110].contiguous().requires_grad_()
    g2 = torch.autograd.grad(fn(c), c, dy)[0]
    g3 = torch.autograd.grad(fn(c), c, dy.transpose(0, 1).contiguous().transpose(0, 1))[0]
    assert torch.equal(g1, g2) and torch.equal(g2, g3)


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [64, 3000, 20000])
def test_backward_is_bitwise_deterministic(device, is_rms, n):
    m = {64: 64, 3000: 8, 20000: 3}[n]  # several programs, each with several rows (the interpreter has 4 SMs)
    x = _rand((m, n), torch.float32, device, n)
    w = _rand((n,), torch.float32, device, n + 1)
    b = None if is_rms else _rand((n,), torch.float32, device, n + 2)
    dy = _rand((m, n), torch.float32, device, n + 3)
    r1 = _run(is_rms, x, n, w, b, 1e-5, dy)
    r2 = _run(is_rms, x, n, w, b, 1e-5, dy)
    for a, c in zip(r1, r2, strict=True):
        if a is not None:
            assert torch.equal(a, c)


# ----------------------------------------------------------------------------- errors


def test_errors(device):
    x = torch.randn(2, 5, device=device)
    with pytest.raises(ValueError, match=r"normalized_shape=\[4\].*\[2, 5\]"):
        fastnorm.layer_norm(x, 4)
    with pytest.raises(ValueError, match=r"normalized_shape=\[3, 2, 5\]"):
        fastnorm.rms_norm(x, (3, 2, 5))
    with pytest.raises(ValueError, match="weight must have shape"):
        fastnorm.layer_norm(x, 5, torch.ones(4, device=device))
    with pytest.raises(ValueError, match="bias must have shape"):
        fastnorm.layer_norm(x, 5, torch.ones(5, device=device), torch.ones(6, device=device))
    with pytest.raises(TypeError, match="x must have a floating dtype"):
        fastnorm.layer_norm(torch.ones(2, 5, dtype=torch.int32, device=device), 5)
    with pytest.raises(TypeError, match="x must have a floating dtype"):
        fastnorm.rms_norm(torch.ones(2, 5, dtype=torch.complex64, device=device), 5)
    with pytest.raises(TypeError, match="weight must have a floating dtype"):
        fastnorm.rms_norm(x, 5, torch.ones(5, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match="weight is on meta"):
        fastnorm.layer_norm(x, 5, torch.ones(5, device="meta"))
    with pytest.raises(ValueError, match="eps must be"):
        fastnorm.layer_norm(x, 5, eps=-1e-5)
    with pytest.raises(ValueError, match="eps must be"):
        fastnorm.rms_norm(x, 5, eps=float("nan"))
    with pytest.raises(ValueError, match="residual must have"):
        fastnorm.layer_norm(x, 5, residual=torch.ones(2, 4, device=device))
    with pytest.raises(ValueError, match="residual_dtype is given but residual is None"):
        fastnorm.layer_norm(x, 5, residual_dtype=torch.float32)
    with pytest.raises(TypeError, match="residual_dtype must be a floating dtype"):
        fastnorm.layer_norm(x, 5, residual=x, residual_dtype=torch.int32)
    with pytest.raises(ValueError, match="weight is None"):
        fastnorm.rms_norm(x, 5, weight_offset=1.0)
    with pytest.raises(TypeError, match="normalized_shape must be"):
        fastnorm.layer_norm(x, "5")


# ----------------------------------------------------------------------------- modules


@pytest.mark.parametrize(("kwargs", "keys"), [
    ({}, {"weight", "bias"}),
    ({"bias": False}, {"weight"}),
    ({"elementwise_affine": False}, set()),
])
def test_layer_norm_module_state_dict_both_ways(device, kwargs, keys):
    ours = fastnorm.nn.LayerNorm((3, 8), eps=1e-6, device=device, **kwargs)
    theirs = torch.nn.LayerNorm((3, 8), eps=1e-6, device=device, **kwargs)
    assert set(ours.state_dict()) == set(theirs.state_dict()) == keys
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn_like(p))
    ours.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(4, 3, 8, device=device)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)
    theirs2 = torch.nn.LayerNorm((3, 8), eps=1e-6, device=device, **kwargs)
    theirs2.load_state_dict(ours.state_dict(), strict=True)
    torch.testing.assert_close(theirs2(x), theirs(x))
    assert ours.normalized_shape == theirs.normalized_shape == (3, 8)
    text = repr(ours)
    assert text.startswith("LayerNorm((3, 8), eps=1e-06, elementwise_affine=") and "bias=" in text


@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm_module_state_dict_both_ways(device, affine):
    ours = fastnorm.nn.RMSNorm(16, elementwise_affine=affine, device=device)
    theirs = torch.nn.RMSNorm(16, elementwise_affine=affine, device=device)
    assert set(ours.state_dict()) == set(theirs.state_dict())
    if affine:
        with torch.no_grad():
            theirs.weight.copy_(torch.randn(16))
    ours.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(5, 16, device=device)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)
    theirs2 = torch.nn.RMSNorm(16, elementwise_affine=affine, device=device)
    theirs2.load_state_dict(ours.state_dict(), strict=True)
    torch.testing.assert_close(theirs2(x), theirs(x))
    assert repr(ours) == f"RMSNorm((16,), eps=None, elementwise_affine={affine})"


def test_modules_train_step(device):
    ln = fastnorm.nn.LayerNorm(32, device=device)
    rms = fastnorm.nn.RMSNorm(32, eps=1e-6, device=device, dtype=torch.float64)
    x = torch.randn(3, 32, device=device)
    ln(x).square().sum().backward()
    assert ln.weight.grad is not None and ln.bias.grad is not None
    rms(x.double()).square().sum().backward()
    assert rms.weight.grad is not None and rms.weight.grad.dtype == torch.float64
    ln.reset_parameters()
    assert torch.equal(ln.weight, torch.ones(32, device=device))
    assert torch.equal(ln.bias, torch.zeros(32, device=device))


# ----------------------------------------------------------------------------- entry points


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_custom_op_autograd_matches(device, is_rms):
    """The registered op (what torch.compile sees) and its autograd give the eager path's results."""
    n = 96
    x = _rand((3, n), torch.float32, device, 1).requires_grad_()
    r = _rand((3, n), torch.float32, device, 2).requires_grad_()
    w = _rand((n,), torch.float32, device, 3).requires_grad_()
    b = None if is_rms else _rand((n,), torch.float32, device, 4).requires_grad_()
    y, s, mean, rstd = torch.ops.fastnorm.norm_fwd(x, w, b, r, 1, 1e-5, 0.5, is_rms, None)
    assert (mean.numel() == 0) == is_rms and rstd.shape == (3,)
    dy = _rand((3, n), torch.float32, device, 5)
    params = [x, r, w] + ([] if is_rms else [b])
    g_op = torch.autograd.grad([y, s], params, [dy, dy])
    kw = {"residual": r, "weight_offset": 0.5}
    y2, s2 = fastnorm.rms_norm(x, n, w, 1e-5, **kw) if is_rms else fastnorm.layer_norm(x, n, w, b, **kw)
    g_eager = torch.autograd.grad([y2, s2], params, [dy, dy])
    assert torch.equal(y, y2) and torch.equal(s, s2)
    for a, c in zip(g_op, g_eager, strict=True):
        assert torch.equal(a, c)


def test_torch_fallback_path(monkeypatch):
    """CPU tensors without the interpreter go through PyTorch's ops with the same semantics."""
    monkeypatch.setattr(ops, "uses_triton", lambda t: False)
    n = 40
    x = _rand((3, n), torch.bfloat16, "cpu", 1)
    r = _rand((3, n), torch.float32, "cpu", 2)
    w = _rand((n,), torch.float32, "cpu", 3, scale=0.1)
    b = _rand((n,), torch.float32, "cpu", 4)
    y, s = fastnorm.layer_norm(x, n, w, b, residual=r, residual_dtype=torch.float32, weight_offset=1.0)
    assert y.dtype == torch.bfloat16 and torch.equal(s, x.float() + r)
    ry, _, _ = R.layer_norm_forward(to_np64(s), to_np64(w) + 1.0, to_np64(b), 1e-5)
    assert_close("y", y, ry, torch.bfloat16)
    x32 = _rand((3, n), torch.float32, "cpu", 5).requires_grad_()
    y = fastnorm.rms_norm(x32, n)
    torch.testing.assert_close(y, F.rms_norm(x32, (n,)))
    y.sum().backward()
    assert x32.grad is not None
    yl = fastnorm.layer_norm(x32.detach(), n, w, b)
    ry, _, _ = R.layer_norm_forward(to_np64(x32), to_np64(w), to_np64(b), 1e-5)
    assert_close("y", yl, ry, torch.float32)


# ----------------------------------------------------------------------------- GPU only


@pytest.mark.gpu
@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_torch_compile_fullgraph(is_rms):
    n = 512
    x = torch.randn(64, n, device="cuda", requires_grad=True)
    r = torch.randn(64, n, device="cuda", requires_grad=True)
    w = torch.randn(n, device="cuda", requires_grad=True)
    b = None if is_rms else torch.randn(n, device="cuda", requires_grad=True)

    def f(x, r, w, b):
        if is_rms:
            y, s = fastnorm.rms_norm(x * 2, n, w, 1e-5, residual=r)
        else:
            y, s = fastnorm.layer_norm(x * 2, n, w, b, residual=r)
        return (y * s).sum()

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    params = [x, r, w] + ([] if is_rms else [b])
    out_c = compiled(x, r, w, b)
    g_c = torch.autograd.grad(out_c, params)
    out_e = f(x, r, w, b)
    g_e = torch.autograd.grad(out_e, params)
    torch.testing.assert_close(out_c, out_e, rtol=1e-5, atol=1e-3)
    for a, c in zip(g_c, g_e, strict=True):
        torch.testing.assert_close(a, c, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [16384, 20000])
def test_torch_compile_held_rows(is_rms, n):
    """Rows whose kernels hold their loads across the row reductions (``hold_loaded``: the 16384 key's LayerNorm
    backward, the 24576 key's forward) compile with fullgraph=True over leaf inputs and give the eager results: their
    inline assembly is pure, so torch.compile can tell which tensors the kernels write (it took every input as
    written before, and the traced backward failed on the leaf x: session 41)."""
    fwd, bwd = C.norm_fwd_config(n, 2, 0, is_rms), C.norm_bwd_config(n, 2, 0, is_rms, split=False)
    if not (fwd.hold_loaded or bwd.hold_loaded):
        pytest.skip("this device's configs hold no loads at this N")
    x = torch.randn(16, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = None if is_rms else torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(16, n, device="cuda", dtype=torch.bfloat16)
    params = [x, w] + ([] if is_rms else [b])

    def f(x, w, b):
        return fastnorm.rms_norm(x, n, w, 1e-5) if is_rms else fastnorm.layer_norm(x, n, w, b)

    torch._dynamo.reset()
    y_c = torch.compile(f, fullgraph=True)(x, w, b)
    g_c = torch.autograd.grad(y_c, params, dy)
    y_e = f(x, w, b)
    g_e = torch.autograd.grad(y_e, params, dy)
    torch.testing.assert_close(y_c, y_e, rtol=1e-2, atol=1e-2)
    for a, c in zip(g_c, g_e, strict=True):
        torch.testing.assert_close(a, c, rtol=2e-2, atol=2e-2)


@pytest.mark.gpu
def test_more_than_2_pow_31_elements():
    """64-bit offsets: 2^31 + a few rows of elements (bf16, ~4.3 GB), checked on the last rows."""
    n = 4096
    m = (1 << 31) // n + 3
    x = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    x[-8:].normal_()
    x[:-8].fill_(1.0)
    y = fastnorm.layer_norm(x, n)
    torch.testing.assert_close(y[-8:], F.layer_norm(x[-8:], (n,)), rtol=2e-2, atol=2e-2)
    assert torch.equal(y[0], torch.zeros(n, dtype=torch.bfloat16, device="cuda"))
    del y
    dy = torch.ones_like(x)
    xg = x.requires_grad_()
    yy = fastnorm.rms_norm(xg, n)
    (gx,) = torch.autograd.grad(yy, xg, dy)
    xs = x[-8:].detach().float().requires_grad_()
    (gref,) = torch.autograd.grad(F.rms_norm(xs, (n,)), xs, dy[-8:].float())
    torch.testing.assert_close(gx[-8:].float(), gref, rtol=2e-2, atol=2e-2)


LARGE_GPU_CASES = [(128, torch.bfloat16), (256, torch.float16), (512, torch.bfloat16), (3073, torch.bfloat16),
                   (4096, torch.bfloat16), (8704, torch.bfloat16), (12289, torch.bfloat16), (14336, torch.bfloat16),
                   (16385, torch.bfloat16), (16386, torch.bfloat16), (18432, torch.bfloat16), (20000, torch.bfloat16),
                   (24576, torch.bfloat16), (21000, torch.float16), (26000, torch.bfloat16), (32768, torch.bfloat16),
                   (41000, torch.float16), (45000, torch.bfloat16), (49152, torch.bfloat16), (57344, torch.bfloat16),
                   (65536, torch.bfloat16)]


@pytest.mark.gpu
@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize(("n", "dt"), LARGE_GPU_CASES, ids=[f"{n}-{str(d)[6:]}" for n, d in LARGE_GPU_CASES])
def test_eager_matches_reference_large_gpu(is_rms, n, dt):
    """Full-size 16-bit cases on the GPU (many programs per SM, multi-wave persistent backward), through the tuned
    entries: LayerNorm's backward at 256 (fp16) and 512 (persistent tiles, the next ones prefetched); the 24576 key's
    rows — RMSNorm's held 16384 + 8192 columns at its first even row (two columns into the second piece), LayerNorm's
    vector rows' chunks there and at 18432 (on the H200; the H100's own entry holds them as 16384 + 8192), both held
    past that at 20000, 21000 (fp16) and 24576; the scalar rows' chunks and split rows at its first row (odd: 16385) and
    below (3073, 12289); the 12288 keys' least second piece (8704: 8192 + 2048) and LN's 16384 key's two pieces of 8192
    (14336); the 32768 key's rows (26000, 32768: LayerNorm's 16384 + 16384 held, its statistics in one round, at most 64
    registers; RMSNorm's chunks); the 49152 key's rows: RMSNorm's held 32768 + 16384 (NORM_FWD_VECTOR_ROWS, on the H200;
    fp16 at 41000), LayerNorm's chunks (41000, 45000) and exact persistent grid (49152); the 65536 key's rows (57344:
    both held as 32768 + 32768, LayerNorm's in one round); the exact 65536 entry's persistent grid (512 rows on the
    SMs' programs, the weight and bias L2-only)."""
    m = 8192 if n <= 4096 else 512
    x = _rand((m, n), dt, "cuda", n, offset=0.3)
    w = _rand((n,), dt, "cuda", n + 1, offset=1.0)
    b = None if is_rms else _rand((n,), dt, "cuda", n + 2)
    dy = _rand((m, n), dt, "cuda", n + 3)
    _check_all(is_rms, x, n, w, b, 1e-5, dy)


def test_reference_sanity_of_helper():
    """The test's own reference wrapper agrees with torch in float64 (guards the harness itself)."""
    x = torch.randn(3, 9, dtype=torch.float64)
    w = torch.randn(9, dtype=torch.float64)
    b = torch.randn(9, dtype=torch.float64)
    y, _, _, _ = _reference(False, x, w, b, 1e-5, torch.ones_like(x))
    np.testing.assert_allclose(y, F.layer_norm(x, (9,), w, b).numpy(), rtol=1e-12, atol=1e-12)


def test_as_rows_reads_in_place_only_what_compiles_like_the_dense_rows():
    """Strided rows are used in place only when the kernels' specialization (row stride 1 / multiple of 16,
    16-byte base) equals that of the dense rows; else one copy (bitwise the contiguous result on GPU)."""
    dense = torch.randn(4, 9)
    assert K.as_rows(dense, 9) is dense
    wide = torch.randn(4, 27)
    assert K.as_rows(wide[:, :9], 9).data_ptr() == wide.data_ptr()  # stride 27: same class as 9
    assert K.as_rows(torch.randn(4, 16)[:, :9], 9).stride(0) == 9  # stride 16 vs 9: copied
    assert K.as_rows(torch.randn(4, 27)[:, :10], 10).stride(0) == 10  # 2-element rows on an odd stride: copied
    assert K.as_rows(torch.randn(4, 32)[:, :16], 16).stride(0) == 32  # both multiples of 16: in place
    assert K.as_rows(torch.randn(1, 9).expand(4, 9), 9).stride(0) == 9  # stride 0 vs 9: copied
    assert K.as_rows(torch.randn(1, 16).expand(4, 16), 16).stride(0) == 0  # 0 and 16: in place
    unaligned = torch.randn(4 * 27 + 1)[1:].view(4, 27)[:, :9]  # base 4 bytes past an aligned one
    assert K.as_rows(unaligned, 9).stride(0) == 9
    one = torch.randn(1, 9).expand(1, 9)
    assert K.as_rows(one.as_strided((1, 9), (0, 1)), 9).stride() == (9, 1)
    x3 = torch.randn(2, 3, 9)
    assert K.as_rows(x3, 9).shape == (6, 9) and K.as_rows(x3, 9).data_ptr() == x3.data_ptr()
    assert K.as_rows(x3.transpose(0, 1), 9).is_contiguous()


def test_as_rows_copies_strided_rows_of_a_traced_tensor():
    """Under torch.compile the kernels' body sees fake tensors, whose alignment is unknown: strided rows are
    copied (dense rows pass through)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        assert K.as_rows(torch.empty(4, 27)[:, :9], 9).stride() == (9, 1)
        dense = torch.empty(4, 9)
        assert K.as_rows(dense, 9) is dense


def test_tuned_key_buckets(monkeypatch):
    """Rows of N look up NORM_TUNED (16-bit) or NORM_TUNED_FP32 under P = next_pow2(N), or under 3P/4 when N fills
    at most three quarters of P; a 3P/4 key without an entry falls back to P's."""
    for n in [*range(1, 5000, 7), 5120, 6144, 6145, 12288, 12289, 65536]:
        p = 1 << (n - 1).bit_length()
        key = C.norm_tuned_key(n)
        assert key == (p * 3 // 4 if p >= 4 and 4 * n <= 3 * p else p), n
        assert n <= key <= p and (key == p or n > p // 2)
    monkeypatch.setattr(C, "NORM_TUNED", {("fwd", False, 4096): (1, 4096, False, 4, 1, 0),
                                          ("fwd", False, 3072): (2, 4096, False, 8, 1, 0)})
    monkeypatch.setattr(C, "NORM_TUNED_FP32", {("fwd", False, 4096): (1, 4096, False, 16, 1, 0)})
    assert C.norm_fwd_config(3000, 2).block_m == 2 and C.norm_fwd_config(3073, 2).block_m == 1
    assert C.norm_fwd_config(3000, 4).num_warps == 16  # float32's table, by P's key
    assert C.norm_fwd_config(3000, 2, None, True) == C.norm_fwd_config(3000, 8, None, True)  # untuned: the rules


def test_held_two_piece_entries_fix_their_second_piece(monkeypatch):
    """An entry that holds 16-bit loads as loaded and may split rows into two pieces names its second piece
    (``block_n2``) or its least (``least_n2``), at least 2 elements a thread: held loads pass through assembly two to
    a register (``_unmerged``), which does not compile for a piece of one element a thread, as next_pow2(N -
    block_n) would give just past block_n (N = 16385: 1). The piece serves every row of its key that reaches the
    entry (its shortest two, and the key), rows read one element a load too (whose least pieces otherwise give way to
    next_pow2); the row tables and the exact entries, which take some of its rows first (odd rows, on the H200
    LayerNorm's 16385-18432 and RMSNorm's 65536), are emptied here so that every row reaches it. The tables stay as
    written."""
    monkeypatch.setattr(C, "NORM_FWD_VECTOR_ROWS", {})
    monkeypatch.setattr(C, "NORM_FWD_SCALAR_ROWS", {False: (), True: ()})
    monkeypatch.setattr(C, "NORM_TUNED_EXACT", {})
    tables = [("H200", C.NORM_TUNED)] + [(part, t[2]) for part, t in C.NORM_TUNED_BY_DEVICE.items() if 2 in t]
    held = [(part, key, e) for part, t in tables for key, e in t.items()
            if isinstance(e[-1], dict) and e[-1].get("hold_loaded") and not e[2] and e[1] < key[2]]
    assert len(held) == 6  # LN's and RMS's 24576, 65536, LN's 32768 forward entries, the H100's LN 24576 one
    for part, (kind, is_rms, key), entry in held:
        monkeypatch.setattr(C, "device_name", lambda index, part=part: f"NVIDIA {part}")
        piece = entry[-1].get("block_n2") or entry[-1].get("least_n2")
        assert piece >= 2 * 32 * entry[3], (kind, is_rms, key)
        before = dict(entry[-1])
        first = next(n for n in (entry[1] + 1, key * 3 // 4 + 1) if C.norm_tuned_key(n) == key)
        assert first in (16385, 24577, 49153), key  # the key's rows: 16385-24576, 24577-32768, 49153-65536
        for n in (first, first + 1, key):
            for scalar in (False, True):
                pick = C.norm_fwd_config if kind == "fwd" else C.norm_bwd_config
                cfg = pick(n, 2, 0, is_rms, scalar_loads=scalar)
                expected = entry[-1].get("block_n2") or max(piece, C._next_pow2(n - entry[1]))
                assert cfg.block_n2 == expected and cfg.hold_loaded, (part, kind, is_rms, n, scalar, cfg)
                assert cfg.block_n < n <= cfg.block_n + cfg.block_n2 and cfg.block_n2 <= cfg.block_n, (n, cfg)
                assert C.norm_pieces_in_pairs(cfg), (kind, is_rms, n, cfg)
        assert entry[-1] == before


def _config(kind, n, is_rms, elem_size=2, scalar=False, residual=False):
    """The config an H200-like device (device 0) picks for rows of ``n``, forward or backward (unsplit: as traced)."""
    if kind == "fwd":
        return C.norm_fwd_config(n, elem_size, 0, is_rms, residual, scalar)
    return C.norm_bwd_config(n, elem_size, 0, is_rms, False, scalar, residual)


def test_least_second_piece(monkeypatch):
    """An entry's ``least_n2``: rows read in 16-byte vectors take a second piece of at least that many columns (a
    short one measured slow), longer where next_pow2(N - block_n) is; rows read one element a load (an odd N) keep
    next_pow2(N - block_n), measured faster there (session 41; an entry that holds its loads keeps its least there:
    ``test_held_two_piece_entries_fix_their_second_piece``). Both directions, both norms, every such entry."""
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H200")
    least = [(esize, key, e) for esize, table in ((2, C.NORM_TUNED), (4, C.NORM_TUNED_FP32))
             for key, e in table.items() if isinstance(e[-1], dict) and "least_n2" in e[-1]]
    assert len(least) >= 13  # the 768 ... 24576 keys' two-piece entries, 16-bit and float32

    for esize, (kind, is_rms, key), entry in least:
        block_n, piece = entry[1], entry[-1]["least_n2"]
        for n in (block_n + 2, block_n + piece // 2, key):  # the key's first rows, a short piece, the key's own row
            if kind == "fwd" and C._row_range(C.NORM_FWD_VECTOR_ROWS.get((esize, is_rms), ()), n):
                continue  # a vector rows' range: test_vector_rows_select_by_range
            derived = C._next_pow2(n - block_n)
            cfg = _config(kind, n, is_rms, esize, scalar=False)
            assert (cfg.block_n, cfg.block_n2) == (block_n, max(piece, derived)), (kind, is_rms, n, cfg)
            assert C.norm_pieces_in_pairs(cfg), (kind, is_rms, n, cfg)
            odd = _config(kind, n + 1, is_rms, esize, scalar=True)  # the next (odd) row, when the tables serve it
            if odd.block_n == block_n and not odd.chunked and not odd.split:
                held = entry[-1].get("hold_loaded")  # its least serves every row: see the held entries' test
                odd_piece = C._next_pow2(n + 1 - block_n)
                assert odd.block_n2 == (max(piece, odd_piece) if held else odd_piece), (kind, is_rms, n + 1, odd)
    assert _config("fwd", 8448, False).block_n2 == 2048 and _config("fwd", 8449, False, scalar=True).block_n2 == 512
    # LayerNorm's held 24576 entry past its vector rows' range (next_pow2 gives 4096 there too), and its least as the
    # entry itself gives it (on the H200 its rows of 16385-18432 go to the row tables: test_vector_rows...)
    assert _config("fwd", 18440, False).block_n2 == 4096 and C._tuned("fwd", False, 16392, 2, 0).block_n2 == 4096
    # With a fused residual (its gradient in the backward) odd rows skip the scalar rows' tables, not the rule
    for kind in ("fwd", "bwd"):
        assert _config(kind, 4097, False, scalar=True, residual=True).block_n2 == 1, kind


def test_least_second_piece_at_launch(monkeypatch):
    """The backward's launcher asks for the second piece of the rows it reads: odd rows (read one element a load) keep
    next_pow2(N - block_n), with a fused residual's gradient too; aligned rows take the entry's least piece."""
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H200")
    seen = []
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, *rest, **kw: seen.append(meta["BLOCK_N2"]))
    for n in (4097, 4352):  # LayerNorm's 6144 key: 4096 + next_pow2(N - 4096), at least 1024 on aligned rows
        dy, x = torch.randn(2, n, dtype=torch.bfloat16), torch.randn(2, n, dtype=torch.bfloat16)
        for dres_out in (None, torch.randn(2, n, dtype=torch.bfloat16)):
            K.norm_bwd(dy, x, None, False, torch.zeros(2), torch.ones(2), dres_out, torch.bfloat16, None, 1e-5, 0.0,
                       False, traceable=True)
    assert seen == [1, 1, 1024, 1024]


def test_exact_entries(monkeypatch):
    """NORM_TUNED_EXACT serves 16-bit rows of exactly its N, before the key's entry and after a device's own:
    LayerNorm's forward at 32768 keeps the chunks (its key's other rows take the whole row), 49152 and 65536 take the
    persistent grid (65536 with the weight and bias L2-only), RMSNorm's forward at 4096 its chunk (the key's other rows
    the whole row), LayerNorm's backward at 16384 its held whole row (the key's other rows two pieces, split or not);
    rows one shorter, the forward with a fused residual, float32 and the H100 (its own 49152 / 65536 entries) do
    not."""
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H200")

    fp32 = {key: _config(key[0], key[2], key[1], 4) for key in C.NORM_TUNED_EXACT}
    for (kind, is_rms, n), entry in C.NORM_TUNED_EXACT.items():
        cfg = _config(kind, n, is_rms)
        assert cfg[:4] == entry[:4], (kind, n, is_rms, cfg)
        if cfg.chunked:
            assert kind == "fwd" and n % cfg.block_n == 0 and n // cfg.block_n == cfg.unroll  # one round of the loop
        other = _config(kind, n - 1, is_rms)
        assert other != cfg and C.norm_tuned_key(n - 1) == n, (kind, n, is_rms, other)
        assert C.norm_bwd_config(n, 2, 0, is_rms) == cfg or kind == "fwd"  # split rows do not take it over
        if kind == "fwd":  # with a fused residual: the key's entry (at 65536 held, so the rules)
            assert _config(kind, n, is_rms, residual=True) == _config(kind, n - 1, is_rms, residual=True), (n, is_rms)
    assert C.norm_fwd_config(65536, 2, 0, False).params_l2_only and C.norm_fwd_config(65536, 2, 0, False).programs
    assert _config("bwd", 16384, False).hold_loaded and _config("bwd", 16383, False).block_n2 == 8192
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H100 80GB HBM3")  # its own entries come first
    for is_rms in (False, True):
        assert C.norm_fwd_config(65536, 2, 0, is_rms) == C.norm_fwd_config(60000, 2, 0, is_rms)
        assert C.norm_fwd_config(65536, 2, 0, is_rms).hold_loaded and not C.norm_fwd_config(65536, 2, 0, is_rms).chunked
    assert C.norm_fwd_config(32768, 2, 0, False) == C.NormConfig(1, 32768, False, 32, 1, 0)
    assert C.norm_fwd_config(49152, 2, 0, False) == C.norm_fwd_config(45000, 2, 0, False)
    assert not C.norm_fwd_config(49152, 2, 0, False).programs
    monkeypatch.setattr(C, "device_name", lambda index: "NVIDIA H200")
    monkeypatch.setattr(C, "NORM_TUNED_EXACT", {})  # float32 rows never took them
    assert fp32 == {key: _config(key[0], key[2], key[1], 4) for key in fp32}


def test_vector_rows_select_by_range(monkeypatch):
    """The forward's rows read in vectors take NORM_FWD_VECTOR_ROWS' config in its ranges (at the first aligned row
    and the last; a two-piece config's second piece at least its block_n2, longer where the rest's power of two is),
    and the tables' choice just outside them; rows read one element a load, a fused residual, the backward, and a
    device with an entry of its own for the key keep the tables' choice."""
    monkeypatch.setattr(C, "multiprocessor_count", lambda index: 132)
    ranges = dict(C.NORM_FWD_VECTOR_ROWS)
    assert ranges  # LayerNorm bf16 16385-18432, RMSNorm bf16 40961-49152 and float32 8193-10752
    exact = [(is_rms, n) for kind, is_rms, n in C.NORM_TUNED_EXACT if kind == "fwd"]  # looked up after the ranges
    assert not [e for e in exact if C._row_range(ranges.get((2, e[0]), ()), e[1])]
    ends = [(esize, is_rms, n) for (esize, is_rms), table in ranges.items() for rows in table
            for n in (rows.low - 8, C._aligned_row(rows.low), rows.high, C._aligned_row(rows.high + 1))]
    cases = [(*end, scalar, residual, device) for end in ends
             for scalar, residual in ((False, False), (True, False), (False, True))
             for device in ("NVIDIA H200", "NVIDIA H100 80GB HBM3")]

    def picks():
        out = {}
        for esize, is_rms, n, scalar, residual, device in cases:
            monkeypatch.setattr(C, "device_name", lambda index, device=device: device)
            out[(esize, is_rms, n, scalar, residual, device)] = (
                _config("fwd", n, is_rms, esize, scalar, residual), C.norm_bwd_config(n, esize, 0, is_rms))
        return out

    with_ranges = picks()
    monkeypatch.setattr(C, "NORM_FWD_VECTOR_ROWS", {})
    without = picks()
    taken = 0
    for case, (fwd, bwd) in with_ranges.items():
        esize, is_rms, n, scalar, residual, device = case
        rows = C._row_range(ranges[(esize, is_rms)], n)
        monkeypatch.setattr(C, "device_name", lambda index, device=device: device)
        own = C._device_entry("fwd", is_rms, n, esize, 0) is not None
        taking = None
        if rows:
            piece = rows.config.block_n2 and max(rows.config.block_n2, C._next_pow2(n - rows.config.block_n))
            taking = rows.config._replace(block_n2=piece)
        expected = taking if rows and not scalar and not residual and not own else without[case][0]
        assert fwd == expected, case
        assert bwd == without[case][1], case
        if rows and fwd == taking:
            K._check_pieces(fwd, n, False, backward=False)  # the range's config holds its rows
            assert not fwd.hold_loaded or C.norm_pieces_in_pairs(fwd), case
            taken += 1
    assert taken == 8  # each range at its two ends on the H200 (and float32's on the H100, which has no entry)


def test_selected_configs_hold_their_rows(monkeypatch):
    """Every config the tables pick holds its rows (``_check_pieces``, the check a given config passes: whole rows
    of at least N columns, or two pieces that cover N with the first alone short of it), and a held
    16-bit one gives each piece 2 elements a thread, at every strategy boundary row (each key's and range's edges and
    first aligned rows), on the devices the tables name and an unknown one: both norms, the forward with and without
    a residual, read in vectors or one element a load, the backward split or not."""
    monkeypatch.setattr(C, "multiprocessor_count", lambda index: 132)
    checked = 0
    for device in ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA unnamed"):
        monkeypatch.setattr(C, "device_name", lambda index, device=device: device)
        for esize in (2, 4):
            for n in C.norm_strategy_boundaries(esize):
                for is_rms in (False, True):
                    for residual in (False, True):
                        for scalar in (False, True):
                            cfg = C.norm_fwd_config(n, esize, 0, is_rms, residual, scalar)
                            K._check_pieces(cfg, n, False, backward=False)
                            assert not (cfg.hold_loaded and esize == 2) or C.norm_pieces_in_pairs(cfg), (n, cfg)
                            for split in (False, True):
                                cfg = C.norm_bwd_config(n, esize, 0, is_rms, split, scalar, residual)
                                K._check_pieces(cfg, n, False, backward=True)
                            checked += 1
    assert checked > 1000  # (1848 when written)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_scalar_rows_select_by_range(is_rms, monkeypatch):
    """16-bit rows read one element a load take their range's config at both odd ends of every range, forward and
    backward (an H200's 132 SMs; so each range's split rows fit, and compile, at its longest row); the forward's
    two-piece entries keep their rows below 16385 but LayerNorm's 12289-16384 (LN 4099: 4096 + 4, the second piece
    next_pow2(N - 4096), not the entry's least for rows read in vectors); unsplit (traced) backward launches of LN's
    12289-16384 take their own whole row; rows outside the ranges and float32 keep the tables' choice (with the
    second piece of next_pow2(N - block_n))."""
    monkeypatch.setattr(C, "multiprocessor_count", lambda index: 132)  # (the config module drops its cached configs)
    def fwd(n, scalar=True, esize=2):
        return C.norm_fwd_config(n, esize, None, is_rms, False, scalar)

    def bwd(n, scalar=True, esize=2, split=True):
        return C.norm_bwd_config(n, esize, None, is_rms, split, scalar)

    def scalar_pieces(cfg, n):  # a table's config as rows read one element a load take it
        return cfg._replace(block_n2=C._next_pow2(n - cfg.block_n)) if cfg.block_n2 else cfg

    for rows in C.NORM_FWD_SCALAR_ROWS[is_rms]:
        for n in rows.odd_ends():
            table = scalar_pieces(fwd(n, False), n)
            assert fwd(n) == (table if rows.two_pieces_stay and table.block_n2 else rows.config), (n, rows)
            assert fwd(n, esize=4) == fwd(n, False, 4)
    assert fwd(4099).block_n2 == 4 and fwd(4099, False).block_n2 == 1024  # two pieces: measured faster
    assert fwd(14337) == C.NORM_FWD_SCALAR_ROWS[is_rms][2].config and (fwd(14337, False).block_n2 > 0) != is_rms
    assert fwd(6145) == C.NORM_FWD_SCALAR_ROWS[is_rms][1].config != fwd(6145, False)  # one piece: the scalar rows
    for rows in C.NORM_BWD_SCALAR_ROWS[is_rms]:
        for n in rows.odd_ends():
            assert bwd(n) == rows.config._replace(programs=rows.config.programs * 132), (n, rows)
            assert bwd(n, esize=4) == bwd(n, False, 4)
    # Traced launches take no split rows: LN's 12289-16384 a whole row of 32 warps, the weight re-read per row (the
    # 16384 key's held row spilled on such rows, session 40); elsewhere the tables' choice.
    whole_row = C.NormConfig(1, 16384, False, 32, 1, 132, True)
    for n in (12289, 16383):
        assert bwd(n, split=False) == (scalar_pieces(bwd(n, False, split=False), n) if is_rms else whole_row), n
    for n in (3073, 8195, 12287, 16385, 24577):
        assert bwd(n, split=False) == scalar_pieces(bwd(n, False, split=False), n), n
    monkeypatch.setattr(C, "multiprocessor_count", lambda index: 3)  # 24 programs: 25 pieces of 512 do not fit
    assert bwd(12289) == (bwd(12289, False) if is_rms else whole_row._replace(programs=3))
    # Measured faster in the tables' configs: LN's two pieces one past a power of two, RMS's whole rows of 4096 and
    # 8192 and its 4096 + 1 and + 4; below and past the ranges, and RMS's 2049-2304, unmeasured.
    for n in [2047, 40003] + ([2049, 2303, 3073, 4097, 4099, 7169] if is_rms else [4097, 8193]):
        assert bwd(n) == scalar_pieces(bwd(n, False), n), n
    for n in (2047, 65537):
        assert fwd(n) == scalar_pieces(fwd(n, False), n), n


def test_traced_backward_of_odd_rows_takes_its_whole_row(device, monkeypatch):
    """A traced backward (torch.compile: no split rows) of LN's odd rows of 12289-16384 launches
    NORM_BWD_SCALAR_ROWS_UNSPLIT's whole row of 32 warps and matches the reference."""
    n, eps = 12289, 1e-5
    warps = []
    launch = K._bwd
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, w, *rest: (warps.append(w), launch(grid, args, meta, w,
                                                                                                *rest))[1])
    x = _rand((2, n), torch.bfloat16, device, 21, offset=0.3)
    w = _rand((n,), torch.bfloat16, device, 22, offset=1.0)
    b = _rand((n,), torch.bfloat16, device, 23)
    dy = _rand((2, n), torch.bfloat16, device, 24)
    _, _, mean, rstd = K.norm_fwd(x, w, b, None, eps, 0.0, False, None, True)
    dx, _, dw, db = K.norm_bwd(dy, x, w, True, mean, rstd, None, torch.bfloat16, None, eps, 0.0, False,
                               torch.bfloat16, traceable=True)
    assert warps == [C.NORM_BWD_SCALAR_ROWS_UNSPLIT[False][0].config.num_warps] == [32]
    _, rdx, rdw, rdb = _reference(False, x, w, b, eps, dy, 1)
    assert_close("dx", dx, rdx, torch.bfloat16)
    assert_close("dweight", dw, rdw, torch.bfloat16, param_grad=True)
    assert_close("dbias", db, rdb, torch.bfloat16, param_grad=True)


@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
@pytest.mark.parametrize("n", [3073, 16385])
def test_scalar_rows_take_their_config(device, is_rms, n, monkeypatch):
    """Odd rows of the scalar rows' ranges launch their configs and match the reference: 3073 (256-column chunks;
    LN's backward in 512-column split rows, RMS's in the tables' whole rows), 16385 (1024-column chunks, split rows
    of 2048). The backward's split rows launch where a row's pieces fit on the programs: here 5 SMs (10 programs of
    2048 columns for 9 pieces); one row, as the interpreter forms every piece's partial in every program. A fused
    residual keeps the tables' split rows; an odd row stride takes the scalar rows as an odd N does."""
    fwd_rows = C._row_range(C.NORM_FWD_SCALAR_ROWS[is_rms], n)
    bwd_rows = C._row_range(C.NORM_BWD_SCALAR_ROWS[is_rms], n)
    seen, split = [], []
    launch, launch_split = K._fwd, K._launch_split
    monkeypatch.setattr(K, "_fwd", lambda grid, args, meta, warps, *rest, **kw: (
        seen.append((meta["BLOCK_N"], meta["UNROLL"], warps)), launch(grid, args, meta, warps, *rest))[1])

    def spy(kernel, cfg, *rest):
        split.append((cfg, launch_split(kernel, cfg, *rest)))  # the config and the slots it ran
        return split[-1][1]

    monkeypatch.setattr(K, "_launch_split", spy)
    monkeypatch.setattr(C, "multiprocessor_count", lambda index: 5)  # (the config module drops its cached configs)
    x = _rand((1, n), torch.bfloat16, device, 7, offset=0.3)
    w = _rand((n,), torch.bfloat16, device, 8, offset=1.0)
    b = None if is_rms else _rand((n,), torch.bfloat16, device, 9)
    _check_all(is_rms, x, n, w, b, 1e-5, _rand((1, n), torch.bfloat16, device, 10))
    scalar = fwd_rows.config
    assert seen[0] == (scalar.block_n, scalar.unroll, scalar.num_warps)
    if bwd_rows is None:  # RMS 3073: the tables' whole rows
        assert not split and is_rms and n == 3073
    else:
        bwd_scalar = bwd_rows.config._replace(programs=bwd_rows.config.programs * 5)
        assert split == [(bwd_scalar, 1)] and bwd_scalar.split
        split.clear()  # with a fused residual's gradient: the tables' choice
        dy = _rand((1, n), torch.bfloat16, device, 12)
        K.norm_bwd(dy, x, w, b is not None, None, torch.ones(1, device=device), dy, torch.bfloat16, None, 1e-5, 0.0,
                   is_rms)
        assert not split or split[0][0] != bwd_scalar, split
    wide = _rand((2, n + 16), torch.bfloat16, device, 11)  # a row stride of n + 16, odd
    for rows, scalar_loads in ((wide[:, :n + 1], True), (wide[:, :n + 1].contiguous(), False)):  # stride odd, even
        seen.clear()
        K.norm_fwd(rows, None, None, None, 1e-5, 0.0, is_rms, None, True)
        assert (seen[0] == (scalar.block_n, scalar.unroll, scalar.num_warps)) == scalar_loads, (rows.stride(), seen)
    if n == 16385:
        monkeypatch.setattr(C, "multiprocessor_count", lambda index: 4)  # 8 programs: 9 pieces do not fit
        assert C.norm_bwd_config(n, 2, None, is_rms, True, True) == C.norm_bwd_config(n, 2, None, is_rms, True)


def test_device_entries_serve_their_own_keys_only(monkeypatch):
    """On a device NORM_TUNED_BY_DEVICE names (the longest of its parts found in the device's name), its entries replace
    the tables' at their own key; rows of a 3P/4 key without one keep the tables' choice (never the device's P entry);
    other devices, and no device, keep the tables."""
    entry = {("fwd", True, 32768): (1, 32768, False, 32, 1, 0)}
    # "H100" also matches the H100 80GB's name: the longer part wins there, its empty table elsewhere.
    monkeypatch.setattr(C, "NORM_TUNED_BY_DEVICE", {"H100": {2: {}}, "H100 80GB": {2: entry}})
    monkeypatch.setattr(C, "device_name", lambda index: "")  # the tables alone (on any machine, GPU or not)
    cases = [(20000, 2, True), (24577, 2, True), (32768, 2, True), (32768, 2, False), (32768, 4, True)]
    base = {case: C.norm_fwd_config(case[0], case[1], 0, case[2]) for case in cases}
    for name, applies in (("NVIDIA H100 80GB HBM3", True), ("NVIDIA H100 PCIe", False), ("NVIDIA H200", False),
                          ("", False)):
        monkeypatch.setattr(C, "device_name", lambda index, name=name: name)
        for n in (24577, 32768):  # key 32768
            cfg = C.norm_fwd_config(n, 2, 0, True)
            assert (cfg == C.NormConfig(1, 32768, False, 32, 1, 0)) == applies, (name, n, cfg)
            assert applies or cfg == base[(n, 2, True)]
        # key 24576 (the tables' entry, or the rules), LayerNorm's 32768 and float32's: no entry of the device's
        for case in ((20000, 2, True), (32768, 2, False), (32768, 4, True)):
            assert C.norm_fwd_config(case[0], case[1], 0, case[2]) == base[case], (name, case)


@pytest.mark.gpu
def test_device_entries_gpu():
    """This GPU's own entries (NORM_TUNED_BY_DEVICE, when its name matches one) against the float64 reference, at the
    first and the last row of each entry's key, forward and backward, and the forward with a fused residual (which
    the entries were not measured with); skipped on a device without entries."""
    parts = [part for part in C.NORM_TUNED_BY_DEVICE if part in C.device_name(0)]
    entries = C.NORM_TUNED_BY_DEVICE[max(parts, key=len)] if parts else None
    if not entries:
        pytest.skip(f"no device entries for {C.device_name(0)!r}")
    dtypes = {2: torch.bfloat16, 4: torch.float32}
    for seed, (size, (kind, is_rms, key)) in enumerate((s, k) for s, table in entries.items() for k in table):
        first = 3 * key // 4 + 1 if key & (key - 1) == 0 else 2 * key // 3 + 1
        for n in (first, key):
            assert C.norm_tuned_key(n) == key and C._device_entry(kind, is_rms, n, size, 0) is not None
            dt = dtypes[size]
            x, r, dy = (_rand((61, n), dt, "cuda", seed + k, offset=0.5) for k in (0, 4, 3))
            w = _rand((n,), dt, "cuda", seed + 1, offset=1.0)
            b = None if is_rms else _rand((n,), dt, "cuda", seed + 2)
            _check_all(is_rms, x, n, w, b, 1e-5, dy)
            if is_rms:
                y, h = fastnorm.rms_norm(x, (n,), w, eps=1e-5, residual=r)
            else:
                y, h = fastnorm.layer_norm(x, (n,), w, b, eps=1e-5, residual=r)
            assert torch.equal(h, x + r)
            assert_close("y", y, _reference(is_rms, h, w, b, 1e-5, dy)[0], dt)


def test_held_forward_entries_and_a_residual():
    """A measured forward entry that holds x as loaded (bf16 49153-65535: one whole row per program) gives way to the
    rules' chunks with a fused residual, whose s = x + r it would hold in fp32; entries that do not hold stay."""
    for is_rms in (False, True):
        held = C.norm_fwd_config(60000, 2, None, is_rms)
        assert held.hold_loaded and not held.chunked
        rules = C.norm_fwd_config(60000, 2, None, is_rms, True)
        assert rules.chunked and not rules.hold_loaded and rules.block_n == C.NORM_FWD_CHUNK[4]
        assert C.norm_fwd_config(16384, 2, None, is_rms, True) == C.norm_fwd_config(16384, 2, None, is_rms)


def test_prefetch_fits_shared_memory_with_a_residual(monkeypatch, device):
    """The tuned entries were measured without a residual; with one, the tiles the loops prefetch of every streamed
    tensor (num_stages - 1 of each) must still fit in a block's shared memory (the sm_90 compile gate checks the
    compiled sizes): the depth is lowered only where they would not."""
    cfg = C.NormConfig(1, 8192, False, 32, 3, 132, True)  # the float32 RMS backward's entry at 6144
    assert C.norm_fit_prefetch(cfg, 4 + 4) == cfg  # dy and x: 2 buffers of 2 x 32 KiB fit
    assert C.norm_fit_prefetch(cfg, 4 + 4 + 4 + 4).num_stages == 2  # and dres_out, the weight: 1 buffer of 4 x 32 KiB
    two = C.NormConfig(1, 8192, False, 16, 3, 132, block_n2=4096)  # bf16 rows as two pieces
    assert C.norm_fit_prefetch(two, 2 + 2 + 2).num_stages == 3  # 2 x 72 KiB
    assert C.norm_fit_prefetch(two, 4 + 4 + 4).num_stages == 2
    assert C.norm_fit_prefetch(two, 20).num_stages == 1
    # Through norm_bwd: a float32 entry of 3 stages re-reading the weight, on a budget that holds 2 buffers of dy, x
    # and the weight but only 1 with residual_out's gradient (16 x 128 bytes each, 4096 of scratch).
    monkeypatch.setattr(C, "NORM_TUNED_FP32", {("bwd", True, 128): (1, 128, False, 1, 3, 1, True)})
    monkeypatch.setattr(C, "SMEM_BYTES_PER_BLOCK", 7000)
    stages = []
    real = K._bwd
    monkeypatch.setattr(K, "_bwd", lambda grid, args, meta, warps, st, traceable=False: (
        stages.append(st), real(grid, args, meta, warps, st, traceable)))
    x, dy, dres_out = (_rand((5, 100), torch.float32, device, seed) for seed in (1, 2, 3))
    w = _rand((100,), torch.float32, device, 4)
    _, _, _, rstd = K.norm_fwd(x, w, None, None, 1e-5, 0.0, True, None, True)
    K.norm_bwd(dy, x, w, False, None, rstd, None, x.dtype, None, 1e-5, 0.0, True)
    dx, _, dw, _ = K.norm_bwd(dy, x, w, False, None, rstd, dres_out, x.dtype, None, 1e-5, 0.0, True)
    assert stages == [3, 2]
    _, rdx, rdw, _ = _reference(True, x, w, None, 1e-5, dy)
    assert_close("dx", dx, rdx + to_np64(dres_out), torch.float32)
    assert_close("dweight", dw, rdw, torch.float32, param_grad=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="replays serve eager CUDA launches only")
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("is_rms", [False, True], ids=["ln", "rms"])
def test_replayed_calls_match_the_reference(monkeypatch, is_rms, residual):
    """One signature called again on fresh data (a 3-D x, read as rows through a view): from the third call on,
    the forward and backward launches are replayed (``kernels._replay``), and every call matches the reference."""
    replays = watch_replays(monkeypatch)
    n = 1000
    for seed in (2, 3, 4, 5):
        x = _rand((2, 3, n), torch.bfloat16, "cuda", seed)
        w = _rand((n,), torch.bfloat16, "cuda", seed + 10, offset=1.0)
        b = None if is_rms else _rand((n,), torch.bfloat16, "cuda", seed + 20)
        dy = _rand((2, 3, n), torch.bfloat16, "cuda", seed + 30)
        if not residual:
            _check_all(is_rms, x, n, w, b, 1e-5, dy)
            continue
        r = _rand((2, 3, n), torch.bfloat16, "cuda", seed + 40).requires_grad_()
        xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
        kw = {"residual": r, "residual_dtype": torch.float32}
        y, s = (fastnorm.rms_norm(xg, n, wg, 1e-5, **kw) if is_rms else fastnorm.layer_norm(xg, n, wg, b, **kw))
        assert torch.equal(s, x.float() + r.detach().float())
        dx, dr, dw = torch.autograd.grad(y, (xg, r, wg), dy)
        ry, rdx, rdw, _ = _reference(is_rms, s.detach(), w, b, 1e-5, dy)
        assert_close("y", y, ry, torch.bfloat16)
        assert_close("dx", dx, rdx, torch.bfloat16)
        assert_close("dresidual", dr, rdx, torch.bfloat16)
        assert_close("dweight", dw, rdw, torch.bfloat16, param_grad=True)
    assert len(replays) >= 4  # forward and backward of the last two calls
