"""What torch.compile generates where it beats fastnorm: Inductor's Triton source and chosen launch config per case,
timed beside fastnorm's kernel (and, for LayerNorm/RMSNorm where liger-kernel imports, Liger's) in the same process.

    PYTHONPATH=src python3 benchmarks/scripts/inductor_peek.py [--out DIR] [CASE ...]

CASE names one of ``CASES`` (default: all). For each case the script compiles torch's function (``F.layer_norm``,
``F.rms_norm`` or eval-mode ``F.batch_norm``, inputs requiring grad where the suite's do, so the forward saves what
the suite's saves), writes Inductor's output code to ``DIR/<case>.py``, prints every Triton kernel's autotuned
config (block sizes, warps, stages), and times the compiled forward and fastnorm's forward (``do_bench``, median,
L2 flushed; CUDA-graph replays: GPU time alone) as % of copy on the fewest bytes.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tune_batchnorm as tb  # noqa: E402

import fastnorm  # noqa: E402

#: name -> (op, dtype, shape, channels_last)
CASES = {
    "ln_bf16_16384": ("layernorm", torch.bfloat16, (49152, 16384), False),
    "ln_bf16_32768": ("layernorm", torch.bfloat16, (16384, 32768), False),
    "ln_bf16_256": ("layernorm", torch.bfloat16, (49152, 256), False),
    "ln_bf16_1024": ("layernorm", torch.bfloat16, (49152, 1024), False),
    "rms_bf16_128": ("rmsnorm", torch.bfloat16, (49152, 128), False),
    "rms_bf16_256": ("rmsnorm", torch.bfloat16, (49152, 256), False),
    "rms_bf16_1024": ("rmsnorm", torch.bfloat16, (49152, 1024), False),
    "ln_fp32_4096": ("layernorm", torch.float32, (49152, 4096), False),
    "ln_fp32_16384": ("layernorm", torch.float32, (49152, 16384), False),
    "rms_fp32_4096": ("rmsnorm", torch.float32, (49152, 4096), False),
    "bn_eval_fp32_nchw_14": ("batchnorm", torch.float32, (256, 1024, 14, 14), False),
    "bn_eval_fp32_nchw_28": ("batchnorm", torch.float32, (256, 256, 28, 28), False),
    "bn_eval_fp32_cl_56": ("batchnorm", torch.float32, (256, 64, 56, 56), True),
    "bn_eval_bf16_nchw_14": ("batchnorm", torch.bfloat16, (256, 1024, 14, 14), False),
}


def make(op, dtype, shape, cl):
    """(torch fn, fastnorm fn, args, fewest bytes)."""
    x = torch.randn(shape, device="cuda", dtype=dtype)
    if op == "batchnorm":
        if cl:
            x = x.contiguous(memory_format=torch.channels_last)
        c = shape[1]
        f32 = dict(device="cuda", dtype=torch.float32)
        rm, rv = torch.randn(c, **f32), torch.rand(c, **f32) + 0.5
        w, b = torch.randn(c, **f32), torch.randn(c, **f32)

        def ref(x, rm, rv, w, b):
            return F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-5)

        def ours(x, rm, rv, w, b):
            return fastnorm.batch_norm(x, rm, rv, w, b, training=False, eps=1e-5)

        return ref, ours, (x, rm, rv, w, b), 2 * x.numel() * x.element_size()
    n = shape[-1]
    x.requires_grad_(True)
    w = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
    if op == "layernorm":
        b = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
        return (lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5),
                lambda x, w, b: fastnorm.layer_norm(x, (n,), w, b, 1e-5), (x, w, b), 2 * x.numel() * x.element_size())
    return (lambda x, w: F.rms_norm(x, (n,), w, 1e-6), lambda x, w: fastnorm.rms_norm(x, (n,), w, 1e-6), (x, w),
            2 * x.numel() * x.element_size())


def autotuned_configs(seen: set) -> list[str]:
    """The config each loaded Inductor kernel's autotuner settled on (kernels not in ``seen``, which is updated)."""
    from torch._inductor.codecache import PyCodeCache

    lines = []
    for mod in PyCodeCache.modules:  # the loaded output-code modules (a list in torch 2.11-2.13)
        for name in dir(mod):
            obj = getattr(mod, name)
            launchers = getattr(obj, "launchers", None)
            if not launchers or id(obj) in seen:
                continue
            seen.add(id(obj))
            for launcher in launchers:
                cfg = getattr(launcher, "config", None)
                if cfg is not None:
                    lines.append(f"  {name}: {cfg.kwargs} warps={cfg.num_warps} stages={cfg.num_stages}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    copy_bw = tb.copy_bandwidth()
    print(f"copy {copy_bw / 1e9:.0f} GB/s")
    rows, seen = [], set()
    for name in args.cases or list(CASES):
        try:
            rows.append(peek(name, args.out, copy_bw, seen))
        except Exception as exc:  # one case's failure (a compile error, memory) must not lose the others
            print(f"{name}: failed: {type(exc).__name__}: {exc}")
    print(f"\n{'case':24s} {'compile':>8s} {'fastnorm':>8s} {'liger':>8s} {'err':>9s}  (% of copy, graph replays)")
    for name, c, f, lig, err in rows:
        lig = "-" if lig is None else f"{lig:.1f}"
        print(f"{name:24s} {c:8.1f} {f:8.1f} {lig:>8s} {err:9.2e}")


def liger_fn(op: str, n: int):
    """Liger's function for a LayerNorm/RMSNorm case as the suites build it (``fastnorm.bench.norms.Liger``), called
    as the case's torch function is (None where liger-kernel does not import, or for BatchNorm)."""
    from fastnorm.bench import norms

    liger = norms.Liger()
    if op == "batchnorm" or liger.available(op) is not None:
        return None
    fn = liger.build(op, n, 1e-5 if op == "layernorm" else 1e-6, residual=False)
    if op == "layernorm":
        return lambda x, w, b: fn(x, w, b, None)[0]
    return lambda x, w: fn(x, w, None, None)[0]


def peek(name: str, out: str, copy_bw: float, seen: set) -> tuple[str, float, float, float | None, float]:
    from torch._inductor.utils import run_and_get_code

    op, dtype, shape, cl = CASES[name]
    ref, ours, inputs, nbytes = make(op, dtype, shape, cl)
    torch._dynamo.reset()
    compiled = torch.compile(ref)
    y, codes = run_and_get_code(compiled, *inputs)
    with open(os.path.join(out, f"{name}.py"), "w") as fh:
        fh.write("\n\n# ---- next module ----\n\n".join(codes))
    y_ours = ours(*inputs)
    yy = y[0] if isinstance(y, tuple) else y
    err = ((y_ours.float() - yy.float()).abs().max() / yy.float().abs().max()).item()
    print(f"{name}: configs")
    for line in autotuned_configs(seen):
        print(line)
    t = {}
    for label, fn in (("compile", compiled), ("fastnorm", ours), ("liger", liger_fn(op, shape[-1]))):
        if fn is not None:
            t[label] = tb.bench(tb.graphed(lambda fn=fn, inputs=inputs: fn(*inputs)))
    pct = {k: 100 * nbytes / v / copy_bw for k, v in t.items()}
    return name, pct["compile"], pct["fastnorm"], pct.get("liger"), err


if __name__ == "__main__":
    main()
