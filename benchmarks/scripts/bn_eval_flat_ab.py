"""BatchNorm evaluation forward as a flat pointwise kernel (torch.compile's form) against fastnorm's tiled apply kernel.

torch.compile's float32 evaluation forward (a flat kernel: 1024 elements and 4 warps a program, the channel of
element i computed as (i // S) % C, or i % C in channels-last, with S and C compiled in, the per-channel values
gathered per element) reached 95-96% of copy on the H200 where fastnorm's tiled apply kernel reached 90-95
(session 17's suite). This script times a flat kernel computing fastnorm's own arithmetic — y = ((x - mean[c]) ·
scale[c]) + beta[c], per-channel values gathered per element — at several block sizes (and in one launch from the
running variance, invstd per element exact or approximate) beside ``fastnorm.batch_norm(training=False)`` and
torch.compile's kernel, checks y against fastnorm's, and prints % of copy (do_bench, L2 flushed; evaluation bytes).
The per-channel values of the block-size variants are computed before the timing (the library's kernel forms them
per program: ``_bn_apply_flat_kernel``).

    PYTHONPATH=src python3 benchmarks/scripts/bn_eval_flat_ab.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

import fastnorm
from fastnorm.bench.common import Timer, batch_norm_bytes, copy_bandwidth

CASES = [((256, 64, 56, 56), torch.float32, False), ((256, 256, 28, 28), torch.float32, False),
         ((256, 1024, 14, 14), torch.float32, False), ((8, 256, 128, 128), torch.float32, False),
         ((128, 2048, 7, 7), torch.float32, False),
         ((256, 64, 56, 56), torch.float32, True), ((256, 256, 28, 28), torch.float32, True),
         ((8, 256, 128, 128), torch.float32, True),
         ((256, 64, 56, 56), torch.bfloat16, False), ((256, 1024, 14, 14), torch.bfloat16, False),
         ((256, 64, 56, 56), torch.bfloat16, True)]
BLOCKS = ((1024, 4), (2048, 4), (4096, 8))


@triton.jit
def _block(numel, S: tl.constexpr, C: tl.constexpr, CL: tl.constexpr, BLOCK: tl.constexpr):
    """This program's elements, their mask and their channels."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    return i, i < numel, i % C if CL else (i // S) % C


@triton.jit
def flat_eval(x_ptr, y_ptr, mean_ptr, scale_ptr, beta_ptr, numel, S: tl.constexpr, C: tl.constexpr,
              CL: tl.constexpr, BLOCK: tl.constexpr):
    i, m, c = _block(numel, S, C, CL, BLOCK)
    mean = tl.load(mean_ptr + c, mask=m, other=0.0)
    scale = tl.load(scale_ptr + c, mask=m, other=0.0)
    beta = tl.load(beta_ptr + c, mask=m, other=0.0)
    xv = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + i, ((xv - mean) * scale + beta).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def flat_eval_var(x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, numel, eps, S: tl.constexpr, C: tl.constexpr,
                  CL: tl.constexpr, BLOCK: tl.constexpr, EXACT: tl.constexpr):
    """One launch from the running statistics: invstd per element from the gathered variance (EXACT: correctly
    rounded sqrt and division, fastnorm's; else the approximate rsqrt, torch.compile's)."""
    i, m, c = _block(numel, S, C, CL, BLOCK)
    mean = tl.load(mean_ptr + c, mask=m, other=0.0)
    var = tl.load(var_ptr + c, mask=m, other=1.0)
    w = tl.load(w_ptr + c, mask=m, other=0.0)
    beta = tl.load(b_ptr + c, mask=m, other=0.0)
    if EXACT:
        rstd = 1.0 / tl.sqrt_rn(var + eps)
    else:
        rstd = tl.math.rsqrt(var + eps)
    xv = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + i, ((xv - mean) * (w * rstd) + beta).to(y_ptr.dtype.element_ty), mask=m)


def measure(shape, dtype, cl: bool, timer: Timer, copy: float) -> tuple[str, list]:
    """One case's cells: (name, % of copy, error against fastnorm's y)."""
    dev, c, s = torch.device("cuda"), shape[1], shape[2] * shape[3]
    fmt = torch.channels_last if cl else torch.contiguous_format
    x = torch.randn(shape, device=dev, dtype=dtype).contiguous(memory_format=fmt)
    rm, rv = torch.randn(c, device=dev), torch.rand(c, device=dev) + 0.5
    w, b = torch.randn(c, device=dev), torch.randn(c, device=dev)
    scale = w * torch.rsqrt(rv + 1e-5)
    y = torch.empty_like(x)
    nbytes = batch_norm_bytes("eval_fwd", x.numel(), c, x.element_size(), 4)
    ref = fastnorm.batch_norm(x, rm, rv, w, b, False).float()
    cells = [("fastnorm", timer(lambda: fastnorm.batch_norm(x, rm, rv, w, b, False)), 0.0)]
    for block, warps in BLOCKS:
        def run(block=block, warps=warps):
            flat_eval[(triton.cdiv(x.numel(), block),)](x, y, rm, scale, b, x.numel(), S=s, C=c, CL=cl, BLOCK=block,
                                                         num_warps=warps)
        run()
        cells.append((f"flat {block}/w{warps}", timer(run), float((y.float() - ref).abs().max() / ref.abs().max())))
    for exact in (True, False):
        def run_var(exact=exact):
            flat_eval_var[(triton.cdiv(x.numel(), 1024),)](x, y, rm, rv, w, b, x.numel(), 1e-5, S=s, C=c, CL=cl,
                                                           BLOCK=1024, EXACT=exact, num_warps=4)
        run_var()
        err = float((y.float() - ref).abs().max() / ref.abs().max())
        cells.append((f"flat 1024 var {'exact' if exact else 'rsqrt'}", timer(run_var), err))
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: F.batch_norm(t, rm, rv, w, b, False))
    compiled(x)
    cells.append(("compile", timer(lambda: compiled(x)), 0.0))
    label = f"{'bf16' if dtype == torch.bfloat16 else 'fp32'} {'CL' if cl else 'NCHW'} {'x'.join(map(str, shape))}"
    return label, [(name, nbytes / (ms * 1e-3) / 1e9 / copy * 100, err) for name, ms, err in cells]


def main() -> None:
    dev = torch.device("cuda")
    timer = Timer(dev)
    copy = copy_bandwidth(dev, timer)["gbps"]
    print(f"device {torch.cuda.get_device_name()}, copy {copy:.0f} GB/s")
    rows = []
    for shape, dtype, cl in CASES:
        rows.append(measure(shape, dtype, cl, timer, copy))
        torch.cuda.empty_cache()
    names = [name for name, _, _ in rows[0][1]]
    print("\n% of copy (evaluation bytes); err: max |y - fastnorm's| / max |y|")
    print("| case | " + " | ".join(names) + " | worst err |")
    for label, cells in rows:
        worst = max(e for _, _, e in cells)
        print(f"| {label} | " + " | ".join(f"{p:5.1f}" for _, p, _ in cells) + f" | {worst:.1e} |")


if __name__ == "__main__":
    main()
