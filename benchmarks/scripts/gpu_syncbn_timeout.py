"""GPU check: ranks out of step end in an error, not a hang (SyncBatchNorm's symmetric-memory exchange).

Two ranks train one SyncBatchNorm step together; then rank 1 skips the next call while rank 0 makes it. With
``config.BN_PEER_TIMEOUT_S`` set to 3 s here, rank 0's launch must abort and the CUDA error must reach its host
within a few seconds (NCCL would have hung until its watchdog). Run from the repository root on 2 GPUs::

    PYTHONPATH=src torchrun --standalone --nproc_per_node=2 benchmarks/scripts/gpu_syncbn_timeout.py

Each rank prints one line; the script exits 0 when rank 0 saw the error in time and rank 1 stayed healthy.
Rank 0's CUDA context is unusable afterwards, so nothing collective runs after the skipped call.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import fastnorm
from fastnorm.kernels import config


def main() -> int:
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    device = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", timeout=timedelta(seconds=60), device_id=device)
    config.BN_PEER_TIMEOUT_S = 3
    m = fastnorm.nn.SyncBatchNorm(16, device=device)
    x = torch.randn(4, 16, 5, 5, device=device, requires_grad=True)
    m(x).backward(torch.randn_like(x))  # in step: both ranks
    torch.cuda.synchronize()
    dist.barrier()
    store = dist.distributed_c10d._get_default_store()
    if rank == 1:  # skips the call; waits (on the host, no collective) for rank 0's verdict
        verdict = store.get("verdict").decode()
        print(f"rank 1: skipped the call; rank 0 reports: {verdict}", flush=True)
        return 0 if verdict.startswith("error in") else 1
    t0 = time.perf_counter()
    try:
        m(x)
        torch.cuda.synchronize()
        verdict = f"no error after {time.perf_counter() - t0:.1f} s (a peer never joined, yet the step ended)"
    except RuntimeError as e:
        verdict = f"error in {time.perf_counter() - t0:.1f} s: {str(e).splitlines()[0][:120]}"
    print(f"rank 0: {verdict}", flush=True)
    store.set("verdict", verdict)
    ok = verdict.startswith("error in") and float(verdict.split()[2]) < 30
    os._exit(0 if ok else 1)  # rank 0's CUDA context is poisoned: skip the teardown


if __name__ == "__main__":
    sys.exit(main())
