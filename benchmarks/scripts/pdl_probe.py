"""What programmatic dependent launch (PDL) saves between two kernels on one stream (GPU machine, sm_90)::

    PYTHONPATH=src python benchmarks/scripts/pdl_probe.py

A primary kernel that streams S bytes (torch's copy, which knows nothing of PDL, or a persistent Triton copy that
lets its dependents start at once or not) followed by a small secondary kernel (a deterministic column sum of a
[G, N] fp32 buffer, like the norms' partial-sum launch) launched plain or with PDL (it waits before any load).
Each pair is timed as the suites time calls: eager (``do_bench`` median, L2 flushed) and as one CUDA-graph replay
(GPU time alone). Prints µs per pair, and each kernel alone.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from fastnorm.bench.common import Timer


@triton.jit
def wait_prior(ON: tl.constexpr):
    """With ON (launched with PDL): wait until the kernels before this one on the stream have completed."""
    if ON:
        gdc_wait()


@triton.jit
def release_next(ON: tl.constexpr):
    """With ON: let the next kernel on the stream, if launched with PDL, start now."""
    if ON:
        gdc_launch_dependents()


@triton.jit
def _stream(X, Y, n, BLOCK: tl.constexpr, RELEASE: tl.constexpr):
    release_next(RELEASE)
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(Y + offs, tl.load(X + offs, mask=m), mask=m)


@triton.jit
def _col_sum(P, OUT, G, N, BLOCK_G: tl.constexpr, BLOCK_C: tl.constexpr, WAIT: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    wait_prior(WAIT)
    acc = tl.zeros([BLOCK_G, BLOCK_C], tl.float32)
    for g0 in range(0, G, BLOCK_G):
        g = g0 + tl.arange(0, BLOCK_G)
        m = (g < G)[:, None] & (cols < N)[None, :]
        acc += tl.load(P + g[:, None] * N + cols[None, :], mask=m, other=0.0)
    tl.store(OUT + cols, tl.sum(acc, axis=0), mask=cols < N)


def main() -> None:
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    timer = Timer(dev)
    G, N = sms * 2, 1024
    part = torch.randn(G, N, device=dev)
    out = torch.empty(N, device=dev)

    def secondary(pdl: bool):
        kw = {"launch_pdl": True} if pdl else {}
        _col_sum[(triton.cdiv(N, 128),)](part, out, G, N, BLOCK_G=32, BLOCK_C=128, WAIT=pdl, num_warps=4, **kw)

    rows = []
    for mb in (8, 64, 256):
        n = mb * 2**20 // 2
        x = torch.randn(n, device=dev, dtype=torch.bfloat16)
        y = torch.empty_like(x)

        def torch_copy(x=x, y=y):
            y.copy_(x)

        def triton_copy(release: bool, x=x, y=y, n=n):
            _stream[(sms * 4,)](x, y, n, BLOCK=4096, RELEASE=release, num_warps=8)

        primaries = {"torch copy": torch_copy, "triton copy": lambda: triton_copy(False),
                     "triton copy, released": lambda: triton_copy(True)}
        for pname, prim in primaries.items():
            for pdl in (False, True):
                def pair(prim=prim, pdl=pdl):
                    prim()
                    secondary(pdl)
                pair()
                torch.cuda.synchronize()
                eager = timer(pair) * 1e3
                graph = timer.graph_ms(lambda pair=pair: pair) * 1e3
                rows.append((f"{mb} MB", pname, "pdl" if pdl else "plain", eager, graph))
        for pname, prim in primaries.items():
            rows.append((f"{mb} MB", pname, "alone", timer(prim) * 1e3, timer.graph_ms(lambda p=prim: p) * 1e3))
    for pdl in (False, True):
        rows.append(("-", "secondary alone", "pdl" if pdl else "plain", timer(lambda p=pdl: secondary(p)) * 1e3,
                     timer.graph_ms(lambda p=pdl: (lambda: secondary(p))) * 1e3))
    # correctness of the PDL secondary after a primary that writes its input
    for _ in range(3):
        src = torch.randn_like(part)
        _stream[(sms * 4,)](src.view(-1), part.view(-1), part.numel(), BLOCK=4096, RELEASE=True, num_warps=8)
        secondary(True)
        torch.cuda.synchronize()
        assert torch.allclose(out, src.sum(0), rtol=1e-5, atol=1e-4), "PDL secondary read stale data"
    print(f"{'size':>7} | {'primary':<22} | {'second':<6} | {'eager µs':>9} | {'graph µs':>9}")
    for r in rows:
        print(f"{r[0]:>7} | {r[1]:<22} | {r[2]:<6} | {r[3]:9.2f} | {r[4]:9.2f}")


if __name__ == "__main__":
    main()
