"""Instruction counts of the loops of the kernels one training step launches, compiled for sm_90 offline.

    PYTHONPATH=<triton 3.6>:src TRITON_INTERPRET=0 python benchmarks/scripts/sass_loops.py 16,256,75,75 bfloat16 \
        [--norm batch_norm|layer_norm|rms_norm] [--cl] [--set 'BN_ALIGNED_ROWS={}'] [--keep DIR]

Records the launches of a training forward and backward over a meta tensor of the shape (BatchNorm: the two-launch
paths; the norms: x of shape (M, N) normalized over N, weight (and LayerNorm's bias) in x's dtype; through
``tests/sm90_compile.py``'s recorder, plans for its SM count and the default (H200) entries), compiles each for
sm_90 and disassembles it with the ``nvdisasm`` that ships with Triton; prints, per kernel, its shared-memory
traffic (each ``st.shared``/``ld.shared`` and barrier of its PTX: layout conversions and reductions go through
shared memory) and each loop of its SASS (a label and the backward branch to it): its length and its most frequent
opcodes, and how many of them go through the MIO queue (shared memory, its asynchronous copies, shuffles, barriers,
special functions: ``MIO_OPS``). A tile loop's length divided by the elements a thread takes per iteration is its cost
an element — what sessions 23 and 25 used to see that a loop was issue-bound; the MIO queue is what Nsight Compute
found the bf16 256-column norm backwards waiting on in session 49 (MIO-throttle and short-scoreboard stalls;
NOTES.md). Session 50 found those waits outside every loop: a cross-warp ``tl.sum`` over a tile's rows after the
loop, its shared-memory exchange conflicting 32 ways (a warp's stores all to one bank) — read the code after a
loop's branch too (``--keep``). No GPU needed. ``--set``: config overrides (``bn_ab.py``'s syntax); ``--keep``:
also write each kernel's SASS and TTGIR.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests"))


def record(shape: tuple[int, ...], dtype, norm: str = "batch_norm", channels_last: bool = False) -> list[tuple]:
    """The distinct launches of a training forward and backward over a meta x of ``shape`` (BatchNorm: its
    two-launch paths; ``channels_last``: x in that layout)."""
    import fastnorm
    import sm90_compile as gate
    from fastnorm.kernels import config

    jobs = gate.install_recorder()
    x = gate._meta(*shape, dtype=dtype, grad=True, channels_last=channels_last)
    if norm == "batch_norm":
        config.BN_RESIDENT, config.BN_TRAIN_FUSED = False, False
        c = shape[1]
        gate._fwd_bwd(fastnorm.batch_norm, x, gate._meta(c), gate._meta(c), gate._meta(c, grad=True),
                      gate._meta(c, grad=True), training=True)
    else:
        n = shape[-1]
        params = [gate._meta(n, dtype=dtype, grad=True) for _ in range(1 if norm == "rms_norm" else 2)]
        gate._fwd_bwd(getattr(fastnorm, norm), x, n, *params)
    return list(jobs.values())


#: SASS opcodes issued to the MIO queue (Nsight Compute's "MIO throttle" stall waits on it).
MIO_OPS = ("LDS", "STS", "LDSM", "STSM", "LDGSTS", "SHFL", "BAR", "ATOMS", "MUFU")


def loops(sass: str) -> list[tuple[str, int, Counter]]:
    """(label, instructions, opcode counts) of each loop: the instructions from a label to a branch back to it."""
    labels: dict[str, int] = {}
    instrs: list[str] = []
    for line in sass.splitlines():
        label = re.match(r"^\s*\.(L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(instrs)
            continue
        ins = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if ins:
            instrs.append(ins.group(1).strip())
    out = []
    for i, ins in enumerate(instrs):
        back = re.search(r"BRA.*\.(L_x_\d+)", ins)
        if back and labels.get(back.group(1), i + 1) <= i:
            body = instrs[labels[back.group(1)]:i + 1]
            ops = Counter(re.sub(r"^@!?U?P\w+\s+", "", b).split()[0].split(".")[0] for b in body)
            out.append((back.group(1), len(body), ops))
    return out


def main() -> None:
    import torch
    import triton
    from bn_ab import _overrides
    from tune_batchnorm import _apply_overrides

    from sm90_compile import TARGET

    ap = argparse.ArgumentParser()
    ap.add_argument("shape")
    ap.add_argument("dtype")
    ap.add_argument("--norm", default="batch_norm", choices=("batch_norm", "layer_norm", "rms_norm"))
    ap.add_argument("--cl", action="store_true", help="BatchNorm's x channels-last")
    ap.add_argument("--set", default="")
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    _apply_overrides(_overrides(args.set))
    nvdisasm = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
    shape = tuple(int(v) for v in args.shape.split(","))
    jobs = record(shape, getattr(torch, args.dtype), args.norm, args.cl)
    for k, (module, name, sig, consts, attrs, options) in enumerate(jobs):
        fn = getattr(importlib.import_module(module), name)
        src = triton.compiler.ASTSource(fn=fn, signature=dict(sig), constexprs=dict(consts), attrs=dict(attrs))
        kernel = triton.compile(src, target=TARGET, options=dict(options))
        with tempfile.TemporaryDirectory() as tmp:
            cubin = os.path.join(tmp, "k.cubin")
            Path(cubin).write_bytes(kernel.asm["cubin"])
            sass = subprocess.run([str(nvdisasm), "-c", cubin], capture_output=True, text=True, check=True).stdout
            usage = subprocess.run([str(nvdisasm.with_name("cuobjdump")), "--dump-resource-usage", cubin],
                                   capture_output=True, text=True, check=True).stdout
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            Path(args.keep, f"{k}{name}.sass").write_text(sass)
            Path(args.keep, f"{k}{name}.ttgir").write_text(kernel.asm["ttgir"])
        resources = " ".join(re.findall(r"(REG:\d+|STACK:\d+|SHARED:\d+)", usage))
        ptx = kernel.asm["ptx"]
        smem = {op: len(re.findall(rf"^\s*(?:@%p\d+\s+)?{re.escape(op)}\b", ptx, re.M))
                for op in ("st.shared", "ld.shared", "bar.sync")}
        print(f"[{k}] {name}: {kernel.metadata.num_warps} warps, {resources}; PTX "
              + ", ".join(f"{op} {n}" for op, n in smem.items()))
        for label, n, ops in loops(sass):
            if n > 1:
                top = ", ".join(f"{op} {cnt}" for op, cnt in ops.most_common(10))
                mio = sum(ops[op] for op in MIO_OPS)
                print(f"    loop {label}: {n} instructions, {mio} to the MIO queue ({top})")


if __name__ == "__main__":
    main()
