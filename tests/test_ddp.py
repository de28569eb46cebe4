"""DistributedDataParallel around models with fastnorm modules: 2 CPU processes over gloo.

Each test launches 2 ranks (this file run as a script), with ``TRITON_INTERPRET`` set explicitly in their
environment ("1": fastnorm's Triton kernels through the interpreter; "0": PyTorch's CPU implementation).
Every rank trains two models for 3 SGD steps on its share (4 samples) of a global batch, then checks them
against a single-process reference it computes itself (no collectives involved):

* ``sync``: Conv → SyncBatchNorm(relu) → Conv → SyncBatchNorm(+z) → LayerNorm → RMSNorm → Linear.
  DDP + SyncBatchNorm over the shares is one model on the whole batch: every rank's loss average, every
  parameter after every step and the running statistics equal a single process training on all samples
  with fastnorm's BatchNorm2d in place of SyncBatchNorm; running statistics are bitwise the same on both
  ranks.
* ``local``: Conv → BatchNorm2d → FrozenBatchNorm2d → Conv → BatchNorm2d(momentum=None) → LayerNorm → Linear.
  Each rank normalizes its share with its own statistics, DDP averages the gradients and broadcasts rank 0's
  buffers: the reference runs the same parameters on each share with its own buffers (``functional_call``),
  averages the losses, keeps share 0's buffers — and parameters, losses and rank 0's buffers match.

``run_scenario`` also runs on CUDA over NCCL: ``benchmarks/scripts/gpu_ddp.py`` (torchrun, several GPUs).

Parameters are bitwise identical on both ranks after every step (DDP's contract), checked too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import launch_ranks

RESULT_TAG = "FASTNORM_DDP_RESULT "
HERE = Path(__file__).resolve()
WORLD = 2

# ====================================================================================== parent side (pytest)



def _launch(interpret: bool, tmp_path: Path, timeout: float = 240.0) -> None:
    problems, results = launch_ranks(HERE, [], WORLD, interpret, tmp_path, RESULT_TAG, timeout)
    problems += [f"rank {r}: ran {res['scenarios']} scenarios, expected 2"
                 for r, res in enumerate(results) if res is not None and res["scenarios"] != 2]
    assert not problems, "\n".join(problems)


def test_ddp_two_ranks_triton_interpreter(tmp_path):
    _launch(True, tmp_path)


def test_ddp_two_ranks_torch_path(tmp_path):
    _launch(False, tmp_path)


# ====================================================================================== rank side

STEPS = 3
PER_RANK = 4
LR = 0.1


def _models(kind: str):
    """(model for DDP, single-process reference model with the same initial state)."""
    import torch
    from torch import nn

    import fastnorm.nn as fnn

    class SyncNet(nn.Module):
        def __init__(self, bn_cls):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
            self.bn1 = bn_cls(4, activation="relu")
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
            self.bn2 = bn_cls(4)
            self.ln = fnn.LayerNorm(16)
            self.rms = fnn.RMSNorm(16)
            self.fc = nn.Linear(64, 3)

        def forward(self, x):
            h = self.bn1(self.conv1(x))
            h = self.bn2(self.conv2(h), h)  # fused residual z
            h = self.rms(self.ln(h.flatten(2)))
            return self.fc(h.flatten(1))

    class LocalNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
            self.bn1 = fnn.BatchNorm2d(4)
            self.frozen = fnn.FrozenBatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
            self.bn2 = fnn.BatchNorm2d(4, momentum=None, activation="relu")
            self.ln = fnn.LayerNorm(16)
            self.fc = nn.Linear(64, 3)

        def forward(self, x):
            h = self.frozen(self.bn1(self.conv1(x)))
            h = self.bn2(self.conv2(h))
            return self.fc(self.ln(h.flatten(2)).flatten(1))

    def init(m):
        g = torch.Generator().manual_seed(5)
        with torch.no_grad():
            for name, t in list(m.named_parameters()) + list(m.named_buffers()):
                if not t.is_floating_point():
                    continue
                if "running_var" in name or (name.endswith("weight") and t.dim() == 1):
                    t.copy_(torch.rand(t.shape, generator=g) + 0.5)
                else:
                    t.copy_(torch.randn(t.shape, generator=g) * 0.4)
        return m

    if kind == "sync":
        model, ref = init(SyncNet(fnn.SyncBatchNorm)), SyncNet(fnn.BatchNorm2d)
    else:
        model, ref = init(LocalNet()), LocalNet()
    ref.load_state_dict(model.state_dict(), strict=True)
    return model, ref


def _data(step, world, device):
    import torch

    g = torch.Generator().manual_seed(100 + step)
    x = torch.randn(PER_RANK * world, 3, 4, 4, generator=g) * 1.5 + 0.5
    t = torch.randn(PER_RANK * world, 3, generator=g)
    return x.to(device), t.to(device)


def _rel(a, b) -> float:

    a, b = a.detach().double(), b.detach().double()
    return float((a - b).abs().max()) / max(float(b.abs().max()), 1e-30) if a.numel() else 0.0


def run_scenario(kind: str, dist, rank: int, failures: list[str], device: str = "cpu") -> None:
    """One scenario on this rank (any world size; ``device`` "cpu" over gloo or "cuda:<local rank>" over NCCL)."""
    import torch
    from torch.func import functional_call
    from torch.nn.parallel import DistributedDataParallel as DDP

    def check(what, ok, detail=""):
        if not ok:
            failures.append(f"{kind}: {what} {detail}".rstrip())

    world = dist.get_world_size()
    model, ref = _models(kind)
    model, ref = model.to(device), ref.to(device)
    ddp = DDP(model, broadcast_buffers=True, device_ids=[torch.device(device).index] if device != "cpu" else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=LR)
    half = PER_RANK
    lo, hi = rank * half, (rank + 1) * half
    for step in range(STEPS):
        x, t = _data(step, world, device)
        # --- DDP on this rank's half
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x[lo:hi]), t[lo:hi])
        loss.backward()
        opt.step()
        losses = torch.zeros(world, device=device)
        losses[rank] = loss.detach()
        dist.all_reduce(losses)
        # --- the single-process reference
        ref_opt.zero_grad()
        if kind == "sync":
            ref_loss = torch.nn.functional.mse_loss(ref(x), t)
            ref_halves = [ref_loss]
        else:
            params = dict(ref.named_parameters())
            bufs0 = dict(ref.named_buffers())  # rank 0's buffers live in the reference module itself
            ref_halves = []
            for r in range(world):
                # rank r > 0 starts each step from rank 0's buffers (DDP broadcasts them before the forward)
                bufs = bufs0 if r == 0 else {k: v.clone() for k, v in bufs0.items()}
                out = functional_call(ref, {**params, **bufs}, (x[r * half:(r + 1) * half],))
                ref_halves.append(torch.nn.functional.mse_loss(out, t[r * half:(r + 1) * half]))
            ref_loss = sum(ref_halves) / world
        ref_loss.backward()
        ref_opt.step()
        # --- compare
        global_loss = losses.mean()
        check(f"step {step} loss", _rel(global_loss, ref_loss) <= 1e-5,
              f"{float(global_loss)} vs {float(ref_loss.detach())}")
        if kind == "local":
            check(f"step {step} rank loss", _rel(losses[rank], ref_halves[rank]) <= 1e-5,
                  f"{float(losses[rank])} vs {float(ref_halves[rank].detach())}")
        for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters(), strict=True):
            check(f"step {step} param {name}", _rel(p, q) <= 1e-4, f"rel err {_rel(p, q):.3g}")
            other = p.detach().clone()
            dist.broadcast(other, 0)
            check(f"step {step} param {name} differs between ranks", torch.equal(other, p.detach()))
    # running statistics after the last step
    ref_bufs = dict(ref.named_buffers())
    for name, b in model.named_buffers():
        rb = ref_bufs[name]
        if kind == "local" and rank != 0:
            continue  # the other ranks' own buffers are replaced by rank 0's at the next forward
        if b.is_floating_point():
            check(f"buffer {name}", _rel(b, rb) <= 1e-4, f"rel err {_rel(b, rb):.3g}")
        else:
            check(f"buffer {name}", torch.equal(b, rb), f"{b} vs {rb}")
    if kind == "sync":
        for name, b in model.named_buffers():
            other = b.clone()
            dist.broadcast(other, 0)
            check(f"buffer {name} differs between ranks", torch.equal(other, b))


def _rank_main() -> None:
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method=os.environ["FASTNORM_TEST_INIT"], rank=rank, world_size=world)
    torch.manual_seed(0)
    failures: list[str] = []
    scenarios = 0
    try:
        for kind in ("sync", "local"):
            try:
                run_scenario(kind, dist, rank, failures)
            except Exception as e:  # noqa: BLE001 - reported, and the other rank is told through the result
                import traceback

                failures.append(f"{kind}: {type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}")
            scenarios += 1
            dist.barrier()
    finally:
        print(RESULT_TAG + json.dumps({"failures": failures, "scenarios": scenarios}), flush=True)
        dist.destroy_process_group()


if __name__ == "__main__":
    _rank_main()
