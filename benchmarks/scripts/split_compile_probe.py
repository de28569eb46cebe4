"""Which split-row backward configs compile for sm_90, offline (no GPU): the split kernel for bf16 LayerNorm and
RMSNorm over pieces of 256-2048 columns, 1-8 warps and 3-65 pieces a row, through the sm_90 gate's own recorder and
compiler (``tests/sm90_compile.py``). One JSON line per case.

    PYTHONPATH=src TRITON_INTERPRET=0 python benchmarks/scripts/split_compile_probe.py > probe.jsonl

Session 40 (triton 3.6): a case compiles exactly when next_pow2(pieces) < 32 * num_warps (the threads of a
program); the others fail in TritonGPURemoveLayoutConversions. ``config.norm_split_fits`` holds that rule.
"""

from __future__ import annotations

import itertools
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import sm90_compile as gate  # noqa: E402


def record(block_n: int, warps: int, pieces: int, is_rms: bool) -> tuple:
    """The split kernel's one launch for rows of ``pieces`` pieces (the last 3 columns), as the gate records it."""
    from fastnorm.kernels import config
    from fastnorm.kernels import layer_norm as kernels

    jobs = gate.install_recorder()
    n = (pieces - 1) * block_n + 3
    x = torch.empty(64, n, dtype=torch.bfloat16, device="meta")
    w = torch.empty(n, dtype=torch.bfloat16, device="meta")
    stats = torch.empty(64, dtype=torch.float32, device="meta")
    cfg = config.NormConfig(1, block_n, False, warps, 1, 8192, split=True, early_loads=True)
    # norm_split_fits now refuses the failing cases: the probe launches past that check
    kernels._check_pieces, check = (lambda *a, **k: None), kernels._check_pieces
    try:
        kernels.norm_bwd(x, x, w, not is_rms, None if is_rms else stats, stats, None, torch.bfloat16, None, 1e-5, 0.0,
                         is_rms, torch.bfloat16, config=cfg)
    finally:
        kernels._check_pieces = check
    (job,) = [j for j in jobs.values() if j[1] == "_norm_bwd_split_kernel"]
    return job


def main() -> None:
    cases = list(itertools.product((256, 512, 1024, 2048), (1, 2, 4, 8), (3, 5, 9, 17, 33, 65), (False, True)))
    work = [(record(*case), True) for case in cases]
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(gate.compile_job, work, chunksize=4))
    for (block_n, warps, pieces, is_rms), result in zip(cases, results, strict=True):
        p2 = 1 << (pieces - 1).bit_length()
        print(json.dumps({"block_n": block_n, "warps": warps, "pieces": pieces, "p2": p2, "rms": is_rms,
                          "compiles": result["ok"], "rule": p2 < 32 * warps}))


if __name__ == "__main__":
    main()
