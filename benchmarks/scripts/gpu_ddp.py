"""DistributedDataParallel with fastnorm modules over NCCL (several GPUs of one host); self-checking.

Run from the repository root (about a minute, mostly Triton compiles):

    PYTHONPATH=src torchrun --standalone --nproc_per_node=2 benchmarks/scripts/gpu_ddp.py

The scenarios are the CPU test's (``tests/test_ddp.py``), on ``cuda:<local rank>`` over NCCL:

* ``sync`` — DDP around Conv → SyncBatchNorm(relu) → Conv → SyncBatchNorm(+z) → LayerNorm → RMSNorm → Linear, 3 SGD
  steps on each rank's share of the batch, equals one process training on the whole batch (loss, every
  parameter after every step, running statistics; running statistics bitwise equal on all ranks);
* ``local`` — DDP around Conv → BatchNorm2d → FrozenBatchNorm2d → Conv → BatchNorm2d(momentum=None, relu) →
  LayerNorm → Linear: per-rank statistics, averaged gradients, rank 0's buffers broadcast — equals the
  per-share reference.

Parameters must be bitwise equal on all ranks after every step. TF32 is switched off so the references'
convolutions round like the ranks'. Rank 0 prints PASS/FAIL per scenario and a table; exit status 1 when any
rank failed any scenario.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import test_ddp  # noqa: E402  (the scenarios the CPU test runs over gloo)


def main() -> int:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    device = f"cuda:{local}"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dist.init_process_group("nccl", timeout=timedelta(seconds=240), device_id=torch.device(device))
    rows = []
    for kind in ("sync", "local"):
        failures: list[str] = []
        t0 = time.perf_counter()
        try:
            test_ddp.run_scenario(kind, dist, rank, failures, device=device)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - reported in the table
            failures.append(f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")
        seconds = time.perf_counter() - t0
        gathered: list = [None] * world
        dist.all_gather_object(gathered, failures)
        rows.append((kind, gathered, seconds))
        if rank == 0:
            bad = [(r, f) for r, fs in enumerate(gathered) for f in fs]
            print(f"{'PASS' if not bad else 'FAIL'} ddp-{kind} ({world} ranks, {seconds:.1f} s)", flush=True)
            for r, f in bad[:10]:
                print(f"    rank {r}: {f}", flush=True)
    failed = any(fs for _, gathered, _ in rows for fs in gathered)
    if rank == 0:
        print(f"\n{'check':<14} {'ranks passed':>12} {'seconds':>8}  first failure")
        for kind, gathered, seconds in rows:
            passed = sum(1 for fs in gathered if not fs)
            first = next((fs[0].splitlines()[0][:70] for fs in gathered if fs), "")
            print(f"ddp-{kind:<10} {passed:>7}/{world:<4} {seconds:>8.1f}  {first}")
        where = f"torch {torch.__version__}, {torch.cuda.get_device_name()}"
        print(f"\n{'ALL PASS' if not failed else 'FAILURES'} ({where})")
    dist.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
