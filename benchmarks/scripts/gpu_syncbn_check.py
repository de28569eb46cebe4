"""GPU check of fastnorm.nn.SyncBatchNorm over NCCL; self-checking, prints a table last, exits 1 on a failure.

Run from the repository root on 2 and on 4 GPUs (about a minute each, mostly Triton compiles):

    PYTHONPATH=src torchrun --standalone --nproc_per_node=2 benchmarks/scripts/gpu_syncbn_check.py
    PYTHONPATH=src torchrun --standalone --nproc_per_node=4 benchmarks/scripts/gpu_syncbn_check.py

Checks (every rank runs all of them in the same order; rank 0 prints one row per check with the number of
ranks that passed it and the first failure):

* equivalence — per-rank batches even, uneven and empty, NCHW and channels_last, fp32/bf16/fp16 input with
  fp32 parameters, relu + residual z, momentum=None, affine=False, small and realistic sizes: outputs, dx, dz,
  parameter gradients summed over ranks, running statistics (2-3 steps) against the float64 reference on the
  concatenated batch; running statistics bitwise identical on every rank; one all-gather per forward and one
  all-reduce per backward (counted by wrapping the torch.distributed functions); none in eval;
* process subgroups synchronize only within their group;
* the global count of one value per channel: no error in that step (no host sync), NaN running variance,
  ValueError at the layer's next training call on every rank, and the layer trains normally after;
* no host synchronization: a forward+backward under ``torch.cuda.set_sync_debug_mode("error")``;
* CUDA graph: forward+backward of a 3-layer stack captured once (2 collectives per layer counted during
  capture), replayed on fresh inputs; outputs, dx, parameter gradients and running statistics (which compound
  over the replays) against the reference, and against an eager twin model.
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

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import fastnorm  # noqa: E402
import test_sync_batch_norm_gloo as cases  # noqa: E402  (the equivalence cases the CPU tests run, on CUDA here)
from fastnorm import _symm_exchange  # noqa: E402
from fastnorm import reference as ref  # noqa: E402
from helpers import assert_close, to_np64  # noqa: E402


def pick(pattern, world):
    """The first ``world`` entries of a per-rank batch-size pattern (cycled)."""
    return [pattern[r % len(pattern)] for r in range(world)]


def equivalence_cases(world):
    sub = [[0, 1], [2, 3]] if world == 4 else [[r] for r in range(world)] if world == 2 else None
    if world > 4:
        sub = [list(range(0, world, 2)), list(range(1, world, 2))]
    out = [
        ("even NCHW fp32", dict(batches=pick([4], world))),
        ("uneven+empty NCHW fp32 relu", dict(batches=pick([0, 1, 5, 2], world) if world > 2 else [1, 6],
                                             activation="relu")),
        ("uneven+empty channels_last bf16 relu+z", dict(batches=pick([2, 3, 0, 1], world), dtype="bfloat16",
                                                       channels_last=True, activation="relu", with_z=True)),
        ("(N,C,L) fp16 momentum=None", dict(batches=pick([3, 0, 2, 5], world), rest=(7,), c=4, dtype="float16",
                                            momentum=None, steps=3)),
        ("3-D affine=False", dict(batches=pick([3, 2], world), rest=(2, 3, 4), affine=False)),
        ("whole group empty", dict(batches=[0] * world, eval_after=False)),
        ("track_running_stats=False", dict(batches=pick([2, 5, 0, 1], world), track=False)),
        ("C=64 17x19 channels_last fp32 z", dict(batches=pick([3, 5, 1, 0], world), rest=(17, 19), c=64,
                                                 channels_last=True, with_z=True)),
        ("C=129 28x28 NCHW bf16 relu", dict(batches=pick([4, 2, 3, 1], world), rest=(28, 28), c=129,
                                            dtype="bfloat16", activation="relu")),
        ("C=256 7x7 channels_last bf16 momentum=None", dict(batches=pick([8, 0, 5, 3], world), rest=(7, 7), c=256,
                                                           dtype="bfloat16", channels_last=True, momentum=None)),
        (f"subgroups {sub}", dict(batches=pick([0, 1, 5, 2], world) if world > 2 else [3, 2], groups=sub,
                                  activation="relu", with_z=True)),
    ]
    return out


def check_deferred_one_value(env, failures, device):
    """Global count one on CUDA: no error in the step itself, NaN running var, ValueError at the next call."""
    rank, counter = env["rank"], env["counter"]
    c = 3
    m = fastnorm.nn.SyncBatchNorm(c, device=device)
    x = torch.randn(1 if rank == 0 else 0, c, device=device)
    counter.take()
    try:
        m(x)
    except ValueError as e:
        failures.append(f"raised in the step itself (expected at the next call): {e}")
        return
    calls = counter.take()
    if len(calls) != 1 or not calls[0].startswith("all_gather"):
        failures.append(f"expected one all-gather, got {calls}")
    torch.cuda.synchronize()
    if not bool(torch.isnan(m.running_var).all()):
        failures.append(f"running_var after a global count of one should be NaN, got {m.running_var.tolist()}")
    try:
        m(torch.randn(2, c, device=device))
        failures.append("next call did not raise")
    except ValueError as e:
        if "Expected more than 1 value per channel when training" not in str(e):
            failures.append(f"wrong message: {e}")
    calls = counter.take()
    if calls:
        failures.append(f"the raising call ran collectives {calls}")
    y = m(torch.randn(2, c, device=device))
    torch.cuda.synchronize()
    if not bool(torch.isfinite(y).all()):
        failures.append("the call after the error is not finite")


def check_exchange_path(env, failures, device):
    """Which exchange a training step used: symmetric memory here (one host, GPUs with peer access) for
    fp32/bf16 input; torch.distributed's NCCL collectives for fp64 input and under
    FASTNORM_SYNCBN_EXCHANGE=collective."""
    counter = env["counter"]
    symm = ["all_gather (symmetric memory)", "all_reduce (symmetric memory)"]
    seen = []
    for what, dtype, mode in (("fp32", torch.float32, "auto"), ("bf16", torch.bfloat16, "auto"),
                              ("fp64", torch.float64, "auto"), ("fp32 collective", torch.float32, "collective")):
        m = fastnorm.nn.SyncBatchNorm(24, device=device).to(dtype) if dtype == torch.float64 else \
            fastnorm.nn.SyncBatchNorm(24, device=device)
        x = torch.randn(4, 24, 5, 5, device=device, dtype=dtype, requires_grad=True)
        counter.take()
        with _symm_exchange.exchange_mode(mode):
            m(x).backward(torch.randn_like(x))
        calls = counter.take()
        seen.append(f"{what}: {'symmetric memory' if calls == symm else 'collectives'}")
        want_symm = mode == "auto" and dtype != torch.float64
        if want_symm and calls != symm:
            failures.append(f"{what}: expected the symmetric-memory exchanges, got {calls}")
        if not want_symm and (len(calls) != 2 or not calls[0].startswith("all_gather") or calls[1] != "all_reduce"):
            failures.append(f"{what} ({mode}): expected one all-gather and one all-reduce collective, got {calls}")
    return "; ".join(seen)


def check_new_channels_while_busy(env, failures, device):
    """The first call with a new channel count sets up its symmetric buffer (zeroed, then a rendezvous). Rank 0's
    GPU is kept busy (~1 s) first, so its zeroing runs late unless set-up waits for it: the peers' first flags
    must survive it (before that wait, this step hung). The step must end, and match the reference."""
    rank, world = env["rank"], env["world"]
    c = 72
    m = fastnorm.nn.SyncBatchNorm(c, device=device)
    xg = cases._global_batch(77, 3 * world, (5, 6), c, torch.float32, device=device)
    dyg = cases._global_batch(78, 3 * world, (5, 6), c, torch.float32, scale=1.0, offset=0.1, device=device)
    x = xg[3 * rank:3 * rank + 3].clone().requires_grad_(True)
    torch.cuda.synchronize()
    if rank == 0:
        torch.cuda._sleep(2_000_000_000)  # ~1 s of GPU clock cycles queued ahead of the set-up
    m(x).backward(dyg[3 * rank:3 * rank + 3])
    torch.cuda.synchronize()
    fwd = ref.batch_norm_forward(to_np64(xg), to_np64(m.weight), to_np64(m.bias), np.zeros(c), np.ones(c),
                                 training=True, momentum=0.1, eps=1e-5)
    dx, _, _, _ = ref.batch_norm_backward(to_np64(dyg), to_np64(xg), to_np64(m.weight), fwd, training=True)
    try:
        assert_close("dx", x.grad, dx[3 * rank:3 * rank + 3], torch.float32)
        assert_close("running_var", m.running_var, fwd.new_running_var, torch.float32)
    except AssertionError as e:
        failures.append(str(e).splitlines()[0])


def check_no_host_sync(env, failures, device):
    """Forward + backward (fp32 channels_last, bf16 relu+z) raise nothing under sync debug mode "error"."""
    rank = env["rank"]
    for dtype, act, with_z in ((torch.float32, None, False), (torch.bfloat16, "relu", True)):
        m = fastnorm.nn.SyncBatchNorm(32, activation=act, device=device)
        x = torch.randn(3 + rank, 32, 9, 9, device=device, dtype=dtype).to(memory_format=torch.channels_last)
        x.requires_grad_(True)
        z = torch.randn_like(x) if with_z else None
        dy = torch.randn_like(x)
        m(x, z=z).backward(dy)  # compile / warm up outside the checked region
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            m(x, z=z).backward(dy)
        except RuntimeError as e:
            failures.append(f"{dtype} act={act}: host synchronization: {str(e).splitlines()[0]}")
        finally:
            torch.cuda.set_sync_debug_mode("default")
        torch.cuda.synchronize()


def check_cuda_graph(env, failures, device, replays=3):
    """Capture fwd+bwd of a 3-layer stack once, replay on fresh inputs, compare with the reference."""
    rank, world, counter = env["rank"], env["world"], env["counter"]
    specs = [(16, (12, 10), torch.float32, False, None, 0.1),
             (64, (7, 7), torch.bfloat16, True, "relu", None),
             (40, (5, 6), torch.float32, True, None, 0.3)]
    batches = pick([3, 0, 5, 2], world) if world > 2 else [3, 5]
    offs = np.cumsum([0] + batches)
    lo, hi, ntot = int(offs[rank]), int(offs[rank + 1]), int(offs[-1])

    def build():
        torch.manual_seed(7)
        layers = []
        for c, _rest, _dt, _cl, act, mom in specs:
            m = fastnorm.nn.SyncBatchNorm(c, momentum=mom, activation=act, device=device)
            with torch.no_grad():
                m.weight.copy_(torch.rand(c, device=device) + 0.5)
                m.bias.copy_(torch.randn(c, device=device))
            layers.append(m)
        return layers

    graphed, eager = build(), build()
    ref_state = [dict(rm=to_np64(m.running_mean), rv=to_np64(m.running_var), nbt=0) for m in graphed]

    def inputs(step):
        out = []
        for k, (c, rest, dt, cl, _act, _mom) in enumerate(specs):
            fmt = torch.channels_last if cl else torch.contiguous_format
            xg = cases._global_batch(1000 * step + k, ntot, rest, c, dt, device=device)
            dyg = cases._global_batch(1000 * step + k + 500, ntot, rest, c, dt, scale=1.0, offset=0.1,
                                      device=device)
            out.append((xg, dyg, xg[lo:hi].contiguous(memory_format=fmt), dyg[lo:hi].contiguous(memory_format=fmt)))
        return out

    static_x = [torch.empty_like(t[2]).requires_grad_(True) for t in inputs(0)]
    static_dy = [torch.empty_like(t[3]) for t in inputs(0)]

    def fwd_bwd(layers, xs, dys):
        ys = [m(x) for m, x in zip(layers, xs, strict=True)]
        torch.autograd.backward(ys, dys)
        return ys

    # warm up on a side stream (compiles, NCCL communicator), on the eager twin's state so the graphed model's
    # running statistics start untouched
    warm = build()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for x, t in zip(static_x, inputs(0), strict=True):
                x.detach().copy_(t[2])
            for d, t in zip(static_dy, inputs(0), strict=True):
                d.copy_(t[3])
            fwd_bwd(warm, static_x, static_dy)
            for x in static_x:
                x.grad = None
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    counter.take()
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):
        static_y = fwd_bwd(graphed, static_x, static_dy)
    calls = counter.take()
    if len(calls) != 2 * len(specs):
        failures.append(f"captured collectives {calls}, expected {2 * len(specs)} (one all-gather + one all-reduce "
                        "per layer)")

    worst_vs_eager = 0.0
    for step in range(1, replays + 1):
        data = inputs(step)
        with torch.no_grad():
            for x, d, t in zip(static_x, static_dy, data, strict=True):
                x.copy_(t[2])
                d.copy_(t[3])
        graph.replay()
        ex = [t[2].clone().requires_grad_(True) for t in data]
        for m in eager:
            m.zero_grad(set_to_none=True)
        ey = fwd_bwd(eager, ex, [t[3] for t in data])
        torch.cuda.synchronize()
        for k, ((_c, _rest, dt, _cl, act, mom), m, t) in enumerate(zip(specs, graphed, data, strict=True)):
            st = ref_state[k]
            w, b = to_np64(m.weight), to_np64(m.bias)
            fwd = ref.batch_norm_forward(to_np64(t[0]), w, b, st["rm"], st["rv"], training=True, momentum=mom,
                                         eps=1e-5, activation=act, num_batches_tracked=st["nbt"])
            dx, dw, db, _ = ref.batch_norm_backward(to_np64(t[1]), to_np64(t[0]), w, fwd, training=True,
                                                    activation=act)
            st.update(rm=fwd.new_running_mean, rv=fwd.new_running_var, nbt=fwd.new_num_batches_tracked)
            gw, gb = m.weight.grad.clone(), m.bias.grad.clone()
            with counter.paused():
                dist.all_reduce(gw)
                dist.all_reduce(gb)
            for what, actual, expected, dtype, pg in (
                    ("y", static_y[k], fwd.y[lo:hi], dt, False), ("dx", static_x[k].grad, dx[lo:hi], dt, False),
                    ("dweight summed", gw, dw, torch.float32, True), ("dbias summed", gb, db, torch.float32, True),
                    ("running_mean", m.running_mean, st["rm"], torch.float32, False),
                    ("running_var", m.running_var, st["rv"], torch.float32, False)):
                try:
                    assert_close(f"replay {step} layer {k} {what}", actual, expected, dtype, param_grad=pg)
                except AssertionError as e:
                    failures.append(str(e))
            if int(m.num_batches_tracked) != st["nbt"]:
                failures.append(f"replay {step} layer {k}: num_batches_tracked {int(m.num_batches_tracked)}")
            for a, e in ((static_y[k], ey[k]), (static_x[k].grad, ex[k].grad), (m.running_var, eager[k].running_var)):
                if a.numel():
                    worst_vs_eager = max(worst_vs_eager, float((a.float() - e.float()).abs().max()))
    return f"max |graph - eager| = {worst_vs_eager:.3g} over {replays} replays"


def _collective(fn):
    with _symm_exchange.exchange_mode("collective"):
        return fn()


def main() -> int:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cpu = "--cpu" in sys.argv[1:]  # gloo on CPU tensors, CUDA-only checks left out: to test this script itself
    if cpu:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=timedelta(seconds=90))
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", timeout=timedelta(seconds=90), device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    env = {"dist": dist, "rank": rank, "world": world, "counter": cases.CollectiveCounter(dist)}

    checks = [(name, lambda fails, n=name, kw=kw: cases.run_training_case(env, fails, n, device=device, **kw))
              for name, kw in equivalence_cases(world)]
    if not cpu:  # the same cases through the torch.distributed collectives (the default here is symmetric memory)
        checks += [(f"{name} [collective]", lambda fails, n=name, kw=kw: _collective(
                        lambda: cases.run_training_case(env, fails, n, device=device, **kw)))
                   for name, kw in equivalence_cases(world)[:3] + equivalence_cases(world)[-1:]]
        checks += [("exchange path per dtype and mode", lambda fails: check_exchange_path(env, fails, device)),
                   ("new channel count while a peer's GPU is busy",
                    lambda fails: check_new_channels_while_busy(env, fails, device))]
    checks += [
        ("untracked eval: local, no collectives", lambda fails: cases.run_untracked_eval_case(
            env, fails, "untracked eval", batches=pick([3, 0, 2], world), device=device))]
    if not cpu:
        checks += [
            ("global count one: deferred ValueError", lambda fails: check_deferred_one_value(env, fails, device)),
            ("no host sync (sync_debug_mode=error)", lambda fails: check_no_host_sync(env, fails, device)),
            ("CUDA graph capture + replay, 3 layers", lambda fails: check_cuda_graph(env, fails, device)),
        ]
    rows = []  # (check, failures, detail, seconds)
    for name, fn in checks:
        failures: list[str] = []
        t0 = time.perf_counter()
        detail = ""
        try:
            detail = fn(failures) or ""
            crashed = False
        except Exception as e:  # the ranks may now be out of step: report it and stop
            failures.append(f"raised {type(e).__name__}: {e}")
            traceback.print_exc()
            crashed = True
        rows.append((name, failures, detail, time.perf_counter() - t0))
        if crashed:
            break

    if not cpu:
        torch.cuda.synchronize()
    gathered = [None] * world
    with env["counter"].paused():
        dist.all_gather_object(gathered, rows)
    failed = False
    if rank == 0:
        header = ("check", "ranks ok", "s", "detail / first failure")
        table = []
        for i, (name, _) in enumerate(checks):
            per_rank = [g[i] if i < len(g) else (name, ["not run"], "", 0.0) for g in gathered]
            bad = [(r, f) for r, (_, fs, _, _) in enumerate(per_rank) for f in fs]
            failed |= bool(bad)
            for r, f in bad[:12]:
                print(f"FAIL rank {r} [{name}]: {f}")
            first = f"rank {bad[0][0]}: {bad[0][1]}" if bad else per_rank[0][2]
            table.append((name, f"{world - len({r for r, _ in bad})}/{world}", f"{per_rank[0][3]:.1f}", first[:110]))
        where = "CPU (gloo)" if cpu else (f"{torch.cuda.get_device_name()}, NCCL "
                                          + ".".join(map(str, torch.cuda.nccl.version())))
        print(f"\nfastnorm SyncBatchNorm GPU check: {world} x {where}, torch {torch.__version__}")
        widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(4)]
        for r in [header, tuple("-" * w for w in widths), *table]:
            print("| " + " | ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)) + " |")
        print("RESULT:", "FAIL" if failed else "PASS", flush=True)
    flag = torch.tensor([1.0 if failed else 0.0], device=device)
    with env["counter"].paused():
        dist.broadcast(flag, 0)
    failed = bool(flag.item())
    dist.destroy_process_group()
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
