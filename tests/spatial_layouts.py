"""BatchNorm's tile kernels with the spatial size as an argument sum in the order of the kernels with it compiled in.

Past ``config.BN_SPATIAL_COMPILED`` sizes the NCHW tile kernels take S as an argument, its power-of-two factor
compiled in (``kernels.batch_norm._spatial``). Triton picks each tile's thread layout from what it can prove about the
offsets, and a reduction's order follows the layout; so the two forms give the same bits on a GPU only if they get the
same layouts. The interpreter has no layouts; this script (run by ``tests/test_sm90_compile.py`` in a child process
without the interpreter) records the launches of the training, evaluation and frozen paths on meta tensors in both
forms, compiles each for sm_90 and compares the layouts in the Triton GPU IR and the counts of float operations and
warp shuffles in the PTX. Prints one line per difference and a summary; exits 1 on any difference.
"""

from __future__ import annotations

import importlib
import re
import sys

import torch
import triton

import sm90_compile as gate  # this script's folder is on sys.path

#: (shape, dtype): S = 196 and 100 (factor 4), 90 (2), 96 (16), 99 (1) — the even ones compiled to other layouts
#: before the factor was kept; 3136 (16), 950 (2), 5625 (1) — model sizes, with the tiles the suites' shapes get, the
#: first and last large enough for the flat apply kernel (config.BN_APPLY_FLAT)
CASES = (((4, 64, 14, 14), torch.float32), ((4, 64, 10, 10), torch.bfloat16), ((4, 64, 9, 10), torch.float32),
         ((4, 64, 8, 12), torch.bfloat16), ((4, 64, 9, 11), torch.float32), ((64, 64, 56, 56), torch.bfloat16),
         ((16, 256, 25, 38), torch.bfloat16), ((16, 256, 75, 75), torch.float32))
PTX_OPS = ("fma.rn.f32", "add.f32", "sub.f32", "mul.f32", "add.rn.f32", "mul.rn.f32", "sub.rn.f32", "shfl.sync")


def record(shape, dtype, compiled_sizes: int) -> list[tuple]:
    """The distinct launches of every BatchNorm path over a meta x of ``shape``, in launch order."""
    import fastnorm
    from fastnorm.kernels import config

    jobs = gate.install_recorder()
    config.BN_SPATIAL_COMPILED = compiled_sizes
    c = shape[1]
    x = gate._meta(*shape, dtype=dtype, grad=True)
    gate.batch_norm_paths(fastnorm, config, x, gate._meta(c), gate._meta(c), gate._meta(c, grad=True),
                          gate._meta(c, grad=True))
    return list(jobs.values())


def signature_of(job) -> tuple[list, list, dict]:
    """What sets a compiled launch's summation order: the layouts the Triton GPU IR defines, the operand types of its
    reductions in program order (layout names replaced by their definitions: compilers number them differently), and
    the counts of float operations and warp shuffles in the PTX."""
    module, name, sig, consts, attrs, options = job
    fn = getattr(importlib.import_module(module), name)
    src = triton.compiler.ASTSource(fn=fn, signature=dict(sig), constexprs=dict(consts), attrs=dict(attrs))
    kernel = triton.compile(src, target=gate.TARGET, options=dict(options))
    ttgir = kernel.asm["ttgir"]
    layouts = dict(re.findall(r"^(#\w+) = (#ttg\.\w+<.*>)$", ttgir, flags=re.M))
    reductions = [(shape, layouts.get(name, name))
                  for shape, name in re.findall(r"^\s*\}\) : \(tensor<([^,]*), (#\w+)>\) ->", ttgir, flags=re.M)]
    ptx = kernel.asm["ptx"]
    return (sorted(layouts.values()), reductions,
            {op: len(re.findall(re.escape(op) + r"\b", ptx)) for op in PTX_OPS})


def main() -> int:
    compared = differ = 0
    for shape, dtype in CASES:
        compiled_in, argument = record(shape, dtype, 1 << 30), record(shape, dtype, 0)
        assert len(compiled_in) == len(argument), (shape, dtype)
        for a, b in zip(compiled_in, argument, strict=True):
            assert a[1] == b[1], (a[1], b[1])
            compared += 1
            if signature_of(a) != signature_of(b):
                differ += 1
                print(f"DIFFERENT {a[1]} at {shape} {dtype}", flush=True)
    print(f"SUMMARY {compared - differ}/{compared} launches with the same layouts and float operations", flush=True)
    return 1 if differ or not compared else 0


if __name__ == "__main__":
    sys.exit(main())
