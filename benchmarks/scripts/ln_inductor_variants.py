"""Why torch.compile's bf16 LayerNorm forward at N = 16384 beats fastnorm's on the H200 (98 against 93% of copy):
its kernel (``results/session16/inductor_code.tgz``, written here as Inductor generated it: one program per row,
2048-column chunks, 16 warps, Welford per element position, N and M compiled in) against variants of itself —
``runtime_n`` (N a run-time argument: the chunk loop's trip count and the row offset no longer constants) and
``shifted`` (runtime_n plus fastnorm's row shift k = x[row, 0], subtracted before the Welford update), the row
stride alone at run time, and N constant with the shift (row stride constant or not), the shift loaded or taken
from the first chunk's column 0 (a reduction over the loaded chunk) or from one fixed address (x[0, 0] for every row,
wrong results: what the shift costs when its load hits L2) — and
fastnorm's own forward (its table's entry, and its looped rows at 2048 × 16 warps). Kernels only, do_bench
(L2 flushed), % of copy on the fewest bytes.

    PYTHONPATH=src python3 benchmarks/scripts/ln_inductor_variants.py
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers
from torch._inductor.runtime.triton_helpers import libdevice

from fastnorm.bench.common import Timer, copy_bandwidth, layer_norm_bytes
from fastnorm.kernels import config as C
from fastnorm.kernels import layer_norm as K

M, N = 49152, 16384


@triton.jit
def inductor_kernel(rstd_ptr, x_ptr, w_ptr, b_ptr, mean_ptr, y_ptr, xnumel, r0_numel, stride, XBLOCK: tl.constexpr,
                    R0_BLOCK: tl.constexpr, RUNTIME_N: tl.constexpr, SHIFT: tl.constexpr, RUNTIME_STRIDE: tl.constexpr):
    if not RUNTIME_N:
        r0_numel = 16384
    if not RUNTIME_STRIDE:
        stride = r0_numel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    m_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    m_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    m_w = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    k = 0.0
    start = 0
    if SHIFT == 1:  # k = x[row, 0] by its own load
        k = tl.load(x_ptr + stride * x0).to(tl.float32)
    if SHIFT == 3:  # a shift from one fixed address (L2-hot after the first program): the load's latency, not its use
        k = tl.load(x_ptr + x0 * 0).to(tl.float32)
    if SHIFT == 2:  # k from the first chunk's column 0 (a reduction, no second global load); chunk 0 peeled
        r0_mask = r0_base < r0_numel
        v0 = tl.load(x_ptr + (r0_base + stride * x0), r0_mask, eviction_policy="evict_last", other=0.0).to(tl.float32)
        k = tl.sum(tl.where(r0_base == 0, v0, 0.0), axis=1)[:, None]
        m_mean, m_m2, m_w = triton_helpers.welford_reduce(tl.broadcast_to(v0 - k, [XBLOCK, R0_BLOCK]), m_mean, m_m2,
                                                          m_w, True)
        start = R0_BLOCK
    for r0_offset in tl.range(start, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        v1 = tl.load(x_ptr + (r0_index + stride * x0), r0_mask, eviction_policy="evict_last", other=0.0)
        v1 = tl.broadcast_to(v1.to(tl.float32) - k, [XBLOCK, R0_BLOCK])
        nm, nm2, nw = triton_helpers.welford_reduce(v1, m_mean, m_m2, m_w, r0_offset == 0)
        m_mean = tl.where(r0_mask, nm, m_mean)
        m_m2 = tl.where(r0_mask, nm2, m_m2)
        m_w = tl.where(r0_mask, nw, m_w)
    mean, m2, _ = triton_helpers.welford(m_mean, m_m2, m_w, 1)
    mean = mean[:, None]
    rstd = libdevice.rsqrt(m2[:, None] / r0_numel + 1e-05)
    tl.store(mean_ptr + x0, mean + k, None)
    tl.debug_barrier()
    tl.store(rstd_ptr + x0, rstd, None)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        v = tl.load(x_ptr + (r0_index + stride * x0), r0_mask, eviction_policy="evict_first", other=0.0)
        wv = tl.load(w_ptr + r0_index, r0_mask, eviction_policy="evict_last", other=0.0).to(tl.float32)
        bv = tl.load(b_ptr + r0_index, r0_mask, eviction_policy="evict_last", other=0.0).to(tl.float32)
        yv = ((v.to(tl.float32) - k) - mean) * rstd * wv + bv
        tl.store(y_ptr + (r0_index + stride * x0), yv, r0_mask)


def main() -> None:
    dev = torch.device("cuda")
    timer = Timer(dev)
    copy = copy_bandwidth(dev, timer)["gbps"]
    x = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
    w = torch.randn(N, device=dev, dtype=torch.bfloat16)
    b = torch.randn(N, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    mean = torch.empty(M, device=dev)
    rstd = torch.empty(M, device=dev)
    nbytes = layer_norm_bytes("fwd", M, N, 2, 2)
    ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
    print(f"device {torch.cuda.get_device_name()}, copy {copy:.0f} GB/s")
    rows = []
    for name, runtime_n, shift, runtime_stride in (
            ("inductor", False, 0, False), ("runtime_n", True, 0, False), ("shifted", True, 1, False),
            ("runtime stride only", False, 0, True), ("constant N, shifted", False, 1, False),
            ("constant N, shifted, run-time stride", False, 1, True), ("constant N, k from chunk 0", False, 2, False),
            ("constant N, k from chunk 0, run-time stride", False, 2, True),
            ("constant N, k from a fixed address", False, 3, False)):
        def run(runtime_n=runtime_n, shift=shift, runtime_stride=runtime_stride):
            inductor_kernel[(M,)](rstd, x, w, b, mean, y, M, N, N, XBLOCK=1, R0_BLOCK=2048, RUNTIME_N=runtime_n,
                                  SHIFT=shift, RUNTIME_STRIDE=runtime_stride, num_warps=16, num_stages=1)
        run()
        err = float((y.float() - ref).abs().max())
        rows.append((name, timer(run), err))
    for name, cfg in (("fastnorm entry", C.norm_fwd_config(N, 2, 0)),
                      ("fastnorm looped 2048 w16", C.NormConfig(1, 2048, True, 16, evict=True)),
                      ("fastnorm looped 2048 w16 u8", C.NormConfig(1, 2048, True, 16, evict=True, unroll=8))):
        def run(cfg=cfg):
            K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=cfg)
        out = K.norm_fwd(x, w, b, None, 1e-5, 0.0, False, None, True, config=cfg)[0]
        rows.append((name, timer(run), float((out.float() - ref).abs().max())))
    print(f"\n| {'kernel':44} | {'% of copy':>9} | {'max err':>8} |")
    for name, ms, err in rows:
        print(f"| {name:44} | {nbytes / (ms * 1e-3) / 1e9 / copy * 100:9.1f} | {err:8.1e} |")


if __name__ == "__main__":
    main()
