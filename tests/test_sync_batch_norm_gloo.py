"""SyncBatchNorm across 2 and 3 gloo processes on the CPU, against the float64 reference on the whole batch.

Each test launches one process per rank (this file run as a script: ``python <this file> <suite>``), with
``TRITON_INTERPRET`` set explicitly in the child's environment — "0" for PyTorch's CPU path, "1" so the
Triton stage kernels run through the interpreter — before anything imports fastnorm. Every rank runs the
suite's cases in the same order and prints one result line; a case's failures are collected (not raised)
so the ranks stay in step. The parent kills every rank after a timeout, so nothing hangs.

What each training case checks, per step (2 steps, so the running statistics compound):
outputs, input gradients and dz of every rank equal the rank's slice of the float64 reference BatchNorm on
the group's concatenated batch; parameter gradients summed over the group (what DDP's all-reduce forms)
equal the reference's; running statistics and num_batches_tracked equal the reference's and are bitwise
identical on every rank of the group; exactly one collective (an all-gather) in forward and one (an
all-reduce) in backward — none when the group has one rank, and none in evaluation.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from helpers import launch_ranks

RESULT_TAG = "FASTNORM_SYNCBN_RESULT "
HERE = Path(__file__).resolve().parent

# ----------------------------------------------------------------------------------------------------------
# parent side (pytest)


def _launch(suite: str, world: int, interpret: bool, tmp_path: Path, timeout: float = 150.0) -> None:
    problems, results = launch_ranks(Path(__file__).resolve(), [suite], world, interpret, tmp_path, RESULT_TAG,
                                     timeout)
    problems += [f"rank {r}: ran no cases" for r, res in enumerate(results) if res is not None and res["cases"] == 0]
    assert not problems, "\n".join(problems)


def test_two_ranks_torch_path(tmp_path):
    _launch("two", 2, interpret=False, tmp_path=tmp_path)


def test_three_ranks_torch_path(tmp_path):
    _launch("three", 3, interpret=False, tmp_path=tmp_path)


def test_three_ranks_triton_interpreter(tmp_path):
    _launch("interp", 3, interpret=True, tmp_path=tmp_path)


# ----------------------------------------------------------------------------------------------------------
# rank side (run as a script)

COLLECTIVES = ("all_gather", "all_gather_into_tensor", "all_gather_single", "all_reduce", "broadcast",
               "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "reduce",
               "gather", "scatter", "barrier")


SYMMETRIC_EXCHANGES = (("stats_exchange", "all_gather (symmetric memory)"),
                       ("sums_exchange", "all_reduce (symmetric memory)"))


class CollectiveCounter:
    """Wraps the torch.distributed collectives, and SyncBatchNorm's symmetric-memory exchanges (CUDA, one host),
    so every call is counted (``paused()`` for the test's own)."""

    def __init__(self, dist):
        from fastnorm import _symm_exchange

        self.dist = dist
        self.calls: list[str] = []
        self.active = True
        for name in COLLECTIVES:
            fn = getattr(dist, name, None)
            if fn is not None:
                setattr(dist, name, self._wrap(name, fn))
        for name, label in SYMMETRIC_EXCHANGES:
            setattr(_symm_exchange.Slot, name, self._wrap(label, getattr(_symm_exchange.Slot, name)))

    def _wrap(self, name, fn):
        def counted(*args, **kwargs):
            if self.active:
                self.calls.append(name)
            return fn(*args, **kwargs)

        return counted

    def take(self) -> list[str]:
        calls, self.calls = self.calls, []
        return calls

    def paused(self):
        counter = self

        class _Paused:
            def __enter__(self):
                counter.active = False

            def __exit__(self, *exc):
                counter.active = True

        return _Paused()


class Case:
    """One training scenario on every rank; ``failures`` collects what did not match."""

    def __init__(self, env, name, failures):
        self.env, self.name, self.failures = env, name, failures

    def check(self, what, ok, detail=""):
        if not ok:
            self.failures.append(f"{self.name}: {what} {detail}".rstrip())

    def close(self, what, actual, expected_np, dtype, param_grad=False):
        from helpers import assert_close

        try:
            assert_close(what, actual, expected_np, dtype, param_grad=param_grad)
        except AssertionError as e:
            self.failures.append(f"{self.name}: {e}")


def _global_batch(seed, n, rest, c, dtype, scale=2.0, offset=1.5, device="cpu"):
    """The same (n, c, *rest) batch on every rank (CPU generator, so also the same on every device)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return (torch.randn((n, c, *rest), generator=g, dtype=torch.float64) * scale + offset).to(device, dtype)


def run_training_case(env, failures, name, *, batches, rest=(2, 3), c=3, dtype="float32", channels_last=False,
                      activation=None, with_z=False, momentum=0.1, affine=True, track=True, groups=None, steps=2,
                      eps=1e-5, eval_after=True, device="cpu"):
    """``batches[r]``: rank r's batch size. ``groups``: rank lists partitioning the world (default: one).
    ``device``: where the module and tensors live ("cpu" here; the GPU script passes "cuda:<local rank>")."""
    import numpy as np
    import torch

    import fastnorm
    from fastnorm import reference as ref
    from helpers import to_np64

    dist, rank, world, counter = env["dist"], env["rank"], env["world"], env["counter"]
    case = Case(env, name, failures)
    dt = getattr(torch, dtype)
    groups = groups or [list(range(world))]
    handles = [dist.new_group(g) if len(g) != world else None for g in groups]
    members = next(g for g in groups if rank in g)
    pg = handles[groups.index(members)]
    gsize = len(members)
    offsets = np.cumsum([0] + [batches[r] for r in members])
    lo, hi = int(offsets[members.index(rank)]), int(offsets[members.index(rank) + 1])
    ntot = int(offsets[-1])

    torch.manual_seed(1234)
    m = fastnorm.nn.SyncBatchNorm(c, eps=eps, momentum=momentum, affine=affine, track_running_stats=track,
                                  process_group=pg, activation=activation, device=device)
    if affine:
        with torch.no_grad():
            m.weight.copy_(torch.rand(c, device=device) + 0.5)
            m.bias.copy_(torch.randn(c, device=device))
    w_np = to_np64(m.weight) if affine else None
    b_np = to_np64(m.bias) if affine else None
    rm_np, rv_np, nbt = (to_np64(m.running_mean), to_np64(m.running_var), 0) if track else (None, None, 0)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    group_tag = 100 * groups.index(members)

    for step in range(steps):
        xg = _global_batch(10 * step + group_tag, ntot, rest, c, dt, device=device)
        dyg = _global_batch(10 * step + group_tag + 1, ntot, rest, c, dt, scale=1.0, offset=0.2, device=device)
        zg = (_global_batch(10 * step + group_tag + 2, ntot, rest, c, dt, scale=1.0, offset=0.0, device=device)
              if with_z else None)
        x = xg[lo:hi].contiguous(memory_format=fmt).requires_grad_(True)
        z = zg[lo:hi].contiguous(memory_format=fmt).requires_grad_(True) if with_z else None
        m.zero_grad(set_to_none=True)
        counter.take()
        y = m(x, z=z)
        fwd_calls = counter.take()
        y.backward(dyg[lo:hi].contiguous(memory_format=fmt))
        bwd_calls = counter.take()

        fwd = ref.batch_norm_forward(to_np64(xg), w_np, b_np, rm_np, rv_np, training=True, momentum=momentum,
                                     eps=eps, activation=activation, z=to_np64(zg) if with_z else None,
                                     num_batches_tracked=nbt)
        dx, dw, db, dz = ref.batch_norm_backward(to_np64(dyg), to_np64(xg), w_np, fwd, training=True,
                                                 activation=activation, has_z=with_z, has_bias=affine)
        rm_np, rv_np, nbt = fwd.new_running_mean, fwd.new_running_var, fwd.new_num_batches_tracked
        tag = f"step {step}"
        case.check(f"{tag}: forward collectives", len(fwd_calls) == 1 and fwd_calls[0].startswith("all_gather")
                   if gsize > 1 else fwd_calls == [], str(fwd_calls))
        case.check(f"{tag}: backward collectives", len(bwd_calls) == 1 and bwd_calls[0].startswith("all_reduce")
                   if gsize > 1 else bwd_calls == [], str(bwd_calls))
        case.check(f"{tag}: y layout", y.shape == x.shape and y.dtype == x.dtype and
                   (not channels_last or y.numel() == 0 or y.is_contiguous(memory_format=torch.channels_last)))
        case.close(f"{tag}: y", y, fwd.y[lo:hi], dt)
        case.close(f"{tag}: dx", x.grad, dx[lo:hi], dt)
        if with_z:
            case.close(f"{tag}: dz", z.grad, dz[lo:hi], dt)
        if affine:
            if hi == lo:
                case.check(f"{tag}: empty shard's local param grads are zero",
                           bool((m.weight.grad == 0).all() and (m.bias.grad == 0).all()))
            gw, gb = m.weight.grad.clone(), m.bias.grad.clone()
            with counter.paused():
                dist.all_reduce(gw, group=pg)
                dist.all_reduce(gb, group=pg)
            case.close(f"{tag}: dweight summed over ranks", gw, dw, torch.float32, param_grad=True)
            case.close(f"{tag}: dbias summed over ranks", gb, db, torch.float32, param_grad=True)
        if not track:
            case.check(f"{tag}: no running statistics", m.running_mean is None and m.num_batches_tracked is None)
            continue
        case.close(f"{tag}: running_mean", m.running_mean, rm_np, torch.float32)
        case.close(f"{tag}: running_var", m.running_var, rv_np, torch.float32)
        case.check(f"{tag}: num_batches_tracked", int(m.num_batches_tracked) == nbt)
        stats = torch.cat((m.running_mean, m.running_var))
        everyone = [torch.empty_like(stats) for _ in range(gsize)]
        with counter.paused():
            dist.all_gather(everyone, stats, group=pg)
        case.check(f"{tag}: running statistics bitwise identical on every rank of the group",
                   all(torch.equal(s, everyone[0]) for s in everyone))

    if eval_after:
        m.eval()
        xl = _global_batch(77, ntot, rest, c, dt, device=device)[lo:hi].contiguous(memory_format=fmt)
        zl = (_global_batch(78, ntot, rest, c, dt, device=device)[lo:hi].contiguous(memory_format=fmt)
              if with_z else None)
        counter.take()
        with torch.no_grad():
            ye = m(xl, z=zl)
        case.check("eval: no collectives", counter.take() == [])
        fe = ref.batch_norm_forward(to_np64(xl), w_np, b_np, rm_np, rv_np, training=False, momentum=momentum,
                                    eps=eps, activation=activation, z=to_np64(zl) if with_z else None)
        case.close("eval: y", ye, fe.y, dt)


def run_untracked_eval_case(env, failures, name, *, batches, c=4, device="cpu"):
    """track_running_stats=False in evaluation: this rank's own batch statistics, no collective."""
    import torch

    import fastnorm
    from fastnorm import reference as ref
    from helpers import to_np64

    rank, counter = env["rank"], env["counter"]
    case = Case(env, name, failures)
    m = fastnorm.nn.SyncBatchNorm(c, track_running_stats=False, device=device).eval()
    x = _global_batch(5 + rank, batches[rank], (3,), c, torch.float32, device=device).requires_grad_(True)
    dy = _global_batch(6 + rank, batches[rank], (3,), c, torch.float32, device=device)
    counter.take()
    y = m(x)
    y.backward(dy)
    case.check("no collectives", counter.take() == [])
    fwd = ref.batch_norm_forward(to_np64(x), None, None, None, None, training=False, momentum=0.1, eps=1e-5)
    dx, _, _, _ = ref.batch_norm_backward(to_np64(dy), to_np64(x), None, fwd, training=False, has_bias=False)
    case.close("y", y, fwd.y, torch.float32)
    case.close("dx", x.grad, dx, torch.float32)


def run_one_value_case(env, failures, name, *, batches, c=3):
    """One value per channel over the whole group raises torch's ValueError on every rank; the group is
    still in step afterwards (the next call trains normally)."""
    import torch

    import fastnorm

    rank, world, counter = env["rank"], env["world"], env["counter"]
    case = Case(env, name, failures)
    m = fastnorm.nn.SyncBatchNorm(c)
    x = torch.randn(batches[rank], c)
    counter.take()
    try:
        m(x)
        case.check("raised ValueError", False, "(no error)")
    except ValueError as e:
        case.check("message", "Expected more than 1 value per channel when training" in str(e), str(e))
    case.check("the all-gather still ran (group consistent)", counter.take() == ["all_gather"])
    case.check("running stats untouched", bool((m.running_mean == 0).all() and (m.running_var == 1).all()))
    y = m(torch.randn(2, c))
    case.check("next call trains", y.shape == (2, c) and bool(torch.isfinite(y).all()))
    case.check("next call: one collective", counter.take() == ["all_gather"])
    del world


def run_double_backward_case(env, failures, name, *, batches, c=3):
    """Gradients taken with create_graph=True are a plain backward's; differentiating them once more raises a clear
    error (the global statistics' second derivatives would need differentiable collectives) rather than dropping
    SyncBatchNorm's share of the second derivative silently."""
    import torch

    import fastnorm

    case = Case(env, name, failures)
    m = fastnorm.nn.SyncBatchNorm(c)
    x = _global_batch(41, sum(batches), (2,), c, torch.float32)[sum(batches[:env["rank"]]):][:batches[env["rank"]]]
    x.requires_grad_(True)
    (plain,) = torch.autograd.grad(m(x).square().sum(), x)
    (graphed,) = torch.autograd.grad(m(x).square().sum(), x, create_graph=True)
    case.check("create_graph=True: the same dx", torch.equal(plain, graphed))
    try:
        torch.autograd.grad(graphed.sum(), x)
        case.check("differentiating dx again raised", False, "(no error)")
    except RuntimeError as e:
        case.check("message", "SyncBatchNorm does not support double backward" in str(e), str(e))
    (graphed,) = torch.autograd.grad(m(x).square().sum(), x, create_graph=True)
    try:  # a path that reaches the weight only (a penalty's parameter gradient)
        torch.autograd.grad(graphed.square().sum(), m.weight)
        case.check("differentiating dx again for the weight raised", False, "(no error)")
    except RuntimeError as e:
        case.check("message (weight)", "SyncBatchNorm does not support double backward" in str(e), str(e))
    # (N, C, L) as a transposed view (copied to a dense layout), no parameters, a loss linear in y (dy constant):
    # the guard still reaches x through the copy
    m = fastnorm.nn.SyncBatchNorm(c, affine=False)
    xt = x.detach().transpose(1, 2).contiguous().requires_grad_(True)
    (graphed,) = torch.autograd.grad((m(xt.transpose(1, 2)) * 3.0).sum(), xt, create_graph=True)
    try:
        torch.autograd.grad(graphed.square().sum(), xt)
        case.check("differentiating dx of a transposed x again raised", False, "(no error)")
    except RuntimeError as e:
        case.check("message (transposed x)", "SyncBatchNorm does not support double backward" in str(e), str(e))


SUITES = {
    "two": [
        ("even [4,4] NCHW fp32", run_training_case, dict(batches=[4, 4])),
        ("uneven [1,6] channels_last bf16 relu+z", run_training_case,
         dict(batches=[1, 6], dtype="bfloat16", channels_last=True, activation="relu", with_z=True)),
        ("[0,3] momentum=None (N,C,L) fp16", run_training_case,
         dict(batches=[0, 3], rest=(5,), c=4, dtype="float16", momentum=None, steps=3)),
        ("[0,0] whole group empty", run_training_case, dict(batches=[0, 0], eval_after=False)),
        ("[3,2] affine=False 3-D", run_training_case, dict(batches=[3, 2], rest=(2, 2, 2), affine=False)),
        ("[2,5] track_running_stats=False", run_training_case, dict(batches=[2, 5], track=False)),
        ("untracked eval", run_untracked_eval_case, dict(batches=[3, 0])),
        ("global count one", run_one_value_case, dict(batches=[0, 1])),
        ("double backward [2,3]", run_double_backward_case, dict(batches=[2, 3])),
    ],
    "three": [
        ("[0,1,5] NCHW fp32 relu", run_training_case, dict(batches=[0, 1, 5], activation="relu")),
        ("[2,3,0] channels_last fp32 momentum=None z", run_training_case,
         dict(batches=[2, 3, 0], channels_last=True, momentum=None, with_z=True)),
        ("[4,4,4] bf16 (N,C)", run_training_case, dict(batches=[4, 4, 4], rest=(), c=5, dtype="bfloat16")),
        ("subgroups {0,1} and {2}, [0,1,5]", run_training_case,
         dict(batches=[0, 1, 5], groups=[[0, 1], [2]], activation="relu", with_z=True)),
        ("subgroups {0,2} and {1}, [2,3,1] channels_last", run_training_case,
         dict(batches=[2, 3, 1], groups=[[0, 2], [1]], channels_last=True)),
        ("global count one", run_one_value_case, dict(batches=[0, 1, 0])),
    ],
    "interp": [
        ("interpreter [0,1,5] NCHW fp32 relu+z", run_training_case,
         dict(batches=[0, 1, 5], activation="relu", with_z=True, eval_after=False)),
        ("interpreter [2,3,0] channels_last bf16 momentum=None", run_training_case,
         dict(batches=[2, 3, 0], dtype="bfloat16", channels_last=True, momentum=None, eval_after=True)),
    ],
}


def _rank_main(suite: str) -> int:
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method=os.environ["FASTNORM_TEST_INIT"], rank=rank, world_size=world,
                            timeout=timedelta(seconds=90))
    env = {"dist": dist, "rank": rank, "world": world, "counter": CollectiveCounter(dist)}
    failures: list[str] = []
    cases = 0
    for name, fn, kwargs in SUITES[suite]:
        try:
            fn(env, failures, name, **kwargs)
        except Exception as e:  # a crash on one rank would desynchronize the group: report and stop
            failures.append(f"{name}: raised {type(e).__name__}: {e}")
            break
        cases += 1
    print(RESULT_TAG + json.dumps({"rank": rank, "cases": cases, "failures": failures}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(_rank_main(sys.argv[1]))
