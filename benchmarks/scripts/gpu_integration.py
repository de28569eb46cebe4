"""fastnorm inside everything else people run: compile, CUDA graphs, autocast, export, huge and empty input.

Self-checking GPU script (one GPU, about 3-5 minutes on an H200, mostly compiles). From the repository root:

    PYTHONPATH=src python benchmarks/scripts/gpu_integration.py            # everything
    PYTHONPATH=src python benchmarks/scripts/gpu_integration.py -k huge    # checks whose name contains "huge"
    python benchmarks/scripts/gpu_integration.py --smoke-cpu               # the script's own logic, CPU, tiny

Prints PASS/FAIL (with the first problems) per check as it goes, then a table; exit status 1 on any failure.

Checks
------
compile-{train,eval}-{static,dynamic}
    A model holding every fastnorm module (BatchNorm1d/2d/3d, FrozenBatchNorm2d, SyncBatchNorm (one process:
    local), LayerNorm, RMSNorm, and the functional ops with a fused residual and ``weight_offset``):
    ``torch._dynamo.explain`` shows one graph and zero graph breaks; ``torch.compile(fullgraph=True)``
    (inductor; ``dynamic=True`` for the dynamic variants, fed two batch sizes) gives outputs, input and
    parameter gradients and running statistics equal to an eager twin over 2 steps.
cudagraph-train
    Forward + backward of the model (training, BatchNorm with momentum 0.1 and None) captured once on a side
    stream with ``torch.cuda.graph``; replayed 3 times on new inputs and new grad_outputs copied into the
    static tensors: outputs, dx, parameter gradients equal an eager twin fed the same data; running statistics
    and ``num_batches_tracked`` advance exactly once per replay (equal to the twin after each replay).
autocast-dtypes
    Under ``torch.autocast("cuda", bf16 | fp16)``, with fp32 parameters: the output dtype of every fastnorm op
    fed a low-precision activation (from a Linear/Conv) and fed an fp32 tensor, next to torch.nn's. fastnorm's
    contract: the output has the input's dtype (torch.nn.LayerNorm returns fp32 under autocast; fastnorm does
    not upcast). Printed as a table.
autocast-no-cast-kernels
    bf16 input with fp32 weight/bias (and fp32 running statistics) forward + backward of each op under
    ``torch.profiler``: no cast/copy kernels on the GPU (kernel names listed).
export-{eval,train}
    ``torch.export.export`` of the model on CUDA; the exported program's output equals eager.
empty
    Every op and module on empty CUDA tensors, forward + backward: empty outputs, zero parameter gradients,
    running statistics unchanged, then ``torch.cuda.synchronize()`` raises nothing (no deferred error).
float64-eps
    float64 LayerNorm/RMSNorm/BatchNorm with an eps that float32 cannot represent (1e-3) on rows/channels whose
    variance is comparable to eps: within 1e-12 of a float64 computation (the interpreter passes scalars
    as float32; on the GPU the kernels must keep eps in float64).
strided-params
    weight/bias/running statistics that are strided views (a step of 2): the contiguous result, running
    statistics updated in the view only (or a clear error naming the argument) — never a silent wrong result.
ln-long-rows
    LayerNorm/RMSNorm with N = 262144 (rows walked in chunks), fp32 and bf16, forward + backward against a
    float64 torch computation.
bn-wide
    BatchNorm2d training with C = 65536 channels, NCHW and channels_last, fp32 and bf16, forward + backward and
    running statistics against float64 torch.
huge-ln / huge-bn-{nchw,channels_last}
    bf16 tensors of more than 2^31 elements (64-bit offsets): LayerNorm (524800 x 4096) and BatchNorm2d
    training (32 x 64 x 1024 x 1025), forward + backward (+ running statistics) against a reference computed
    chunk by chunk (float32/float64 torch on slices), normwise within the bf16 tolerances.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import fastnorm  # noqa: E402
import fastnorm.nn as fnn  # noqa: E402
from fastnorm.reference.tolerances import OUTPUT_TOL, PARAM_GRAD_TOL  # noqa: E402

ARGS = argparse.Namespace(smoke_cpu=False)
DEV = "cuda"
TOL_NAME = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float64: "float64"}


# ============================================================================================== helpers


def rel_err(actual: torch.Tensor, expected: torch.Tensor, floor: float = 0.0) -> float:
    """Normwise max|a - e| / max(max|e|, floor) in float64 on the tensors' device; inf when NaN/Inf differ.

    ``floor`` is the scale below which a value counts as zero: a gradient that is mathematically zero
    (a conv bias feeding a training-mode BatchNorm, which removes per-channel constants) holds only
    rounding noise in both runs, so it is compared against the model's gradient scale, not its own."""
    a, e = actual.detach().double(), expected.detach().double()
    if a.shape != e.shape:
        return math.inf
    if a.numel() == 0:
        return 0.0
    if not torch.equal(torch.isfinite(a), torch.isfinite(e)):
        return math.inf
    fin = torch.isfinite(e)
    scale = float(e[fin].abs().max()) if bool(fin.any()) else 0.0
    diff = float((a[fin] - e[fin]).abs().max()) if bool(fin.any()) else 0.0
    scale = max(scale, floor)
    return diff / scale if scale > 0 else diff


class Problems(list):
    def close(self, what: str, actual, expected, tol: float, floor: float = 0.0) -> None:
        if actual is None or expected is None:
            if (actual is None) != (expected is None):
                self.append(f"{what}: one of the two is None")
            return
        err = rel_err(actual, expected, floor)
        if not err <= tol:
            self.append(f"{what}: relative error {err:.3g} > {tol:g}")

    def equal(self, what: str, actual, expected) -> None:
        if not torch.equal(actual, expected):
            self.append(f"{what}: {actual.flatten()[:4].tolist()} vs {expected.flatten()[:4].tolist()}")

    def true(self, what: str, ok: bool) -> None:
        if not ok:
            self.append(what)


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


# ============================================================================================== the model


class ResidualNorms(nn.Module):
    """The functional ops' extras: a fused residual (residual_dtype fp32) and a zero-centred RMS weight."""

    def __init__(self, n: int):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n))
        self.ln_w = nn.Parameter(torch.ones(n))
        self.ln_b = nn.Parameter(torch.zeros(n))

    def forward(self, h, r):
        y, s = fastnorm.layer_norm(h, h.shape[-1], self.ln_w, self.ln_b, residual=r, residual_dtype=torch.float32)
        z, _ = fastnorm.rms_norm(y, y.shape[-1], self.w, 1e-6, residual=s.to(y.dtype), weight_offset=1.0)
        return z


class Net(nn.Module):
    """Every fastnorm module in one forward; input (B, 3, 4, 4), output (B, 4, 16)."""

    def __init__(self, cma: bool = False):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = fnn.BatchNorm2d(4, activation="relu", momentum=None if cma else 0.1)
        self.sbn = fnn.SyncBatchNorm(4)
        self.frozen = fnn.FrozenBatchNorm2d(4)
        self.bn3 = fnn.BatchNorm3d(4, momentum=None)
        self.ln = fnn.LayerNorm(16)
        self.rms = fnn.RMSNorm(16, eps=1e-6)
        self.res = ResidualNorms(16)
        self.bn1 = fnn.BatchNorm1d(4)

    def forward(self, x):
        h = self.bn(self.conv(x))
        h = self.sbn(h, h)
        h = self.frozen(h)
        h = self.bn3(h.unsqueeze(2)).squeeze(2)
        f = h.flatten(2)
        h = self.rms(self.ln(f))
        h = self.res(h, f)
        return self.bn1(h)


N_FASTNORM_CALLS = 9  # fastnorm ops per forward of Net


def make_net(seed: int = 0, cma: bool = False) -> Net:
    torch.manual_seed(seed)
    m = Net(cma)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if not t.is_floating_point():
                continue
            if "running_var" in name or (name.endswith("weight") and t.dim() == 1) or name.endswith("ln_w"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.3)
    return m.to(DEV)


def batch(b: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(b, 3, 4, 4, generator=g) * 1.5 + 0.3).to(DEV)
    dy = torch.randn(b, 4, 16, generator=g).to(DEV)
    return x, dy


def step(model, x, dy, fn=None):
    """One forward + backward of ``fn`` (default: ``model``; e.g. its compiled wrapper); returns
    (y, dx, {parameter name in ``model``: grad}) and sets the grads back to None."""
    xr = x.detach().clone().requires_grad_()
    y = (fn if fn is not None else model)(xr)
    y.backward(dy)
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    for p in model.parameters():
        p.grad = None
    return y.detach(), xr.grad, grads


def compare_states(problems: Problems, what: str, a: nn.Module, b: nn.Module, tol: float) -> None:
    sb = b.state_dict()
    for k, v in a.state_dict().items():
        if v.is_floating_point():
            problems.close(f"{what} {k}", v, sb[k], tol)
        else:
            problems.equal(f"{what} {k}", v, sb[k])


# ============================================================================================== checks

CHECKS: list[tuple[str, object]] = []


def check(name: str, cuda_only: bool = False):
    def deco(fn):
        CHECKS.append((name, fn, cuda_only))
        return fn

    return deco


def _fastnorm_calls(graph) -> int:
    return sum(1 for n in graph.nodes if n.op == "call_function" and "fastnorm" in str(n.target))


def _compile_check(train: bool, dynamic: bool) -> Problems:
    p = Problems()
    backend = "aot_eager" if ARGS.smoke_cpu else "inductor"
    torch._dynamo.reset()
    probe = make_net().train(train)
    x0, _ = batch(4, 1)
    ex = torch._dynamo.explain(probe)(x0.clone().requires_grad_())
    p.true(f"explain: {ex.graph_count} graphs, {ex.graph_break_count} graph breaks "
           f"{[str(r.reason)[:200] for r in ex.break_reasons]}", ex.graph_break_count == 0 and ex.graph_count == 1)
    if not ARGS.smoke_cpu and ex.graphs:
        n = _fastnorm_calls(ex.graphs[0].graph)
        p.true(f"the traced graph calls fastnorm's ops {n} times, expected {N_FASTNORM_CALLS}", n == N_FASTNORM_CALLS)
    torch._dynamo.reset()
    eager, compiled = make_net().train(train), make_net().train(train)
    cm = torch.compile(compiled, fullgraph=True, dynamic=dynamic, backend=backend)
    sizes = (4, 6, 4) if dynamic else (4, 4)
    for i, b in enumerate(sizes):
        x, dy = batch(b, 10 + i)
        ye, dxe, ge = step(eager, x, dy)
        yc, dxc, gc = step(compiled, x, dy, cm)
        p.close(f"step {i} y", yc, ye, 1e-4)
        p.close(f"step {i} dx", dxc, dxe, 1e-4)
        grad_scale = max(float(g.abs().max()) for g in ge.values() if g.numel())
        for k in ge:
            p.close(f"step {i} grad {k}", gc.get(k), ge[k], 1e-3, floor=grad_scale)
    compare_states(p, "state", compiled, eager, 1e-4)
    sync()
    return p


@check("compile-train-static")
def _():
    return _compile_check(True, False)


@check("compile-eval-static")
def _():
    return _compile_check(False, False)


@check("compile-train-dynamic")
def _():
    return _compile_check(True, True)


@check("compile-eval-dynamic")
def _():
    return _compile_check(False, True)


@check("cudagraph-train", cuda_only=True)
def _():
    p = Problems()
    for cma in (False, True):
        model = make_net(3, cma).train()
        static_x, static_dy = batch(4, 20)
        static_x.requires_grad_()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):  # warm-up: compiles every kernel outside the capture
                model(static_x).backward(static_dy)
        torch.cuda.current_stream().wait_stream(s)
        for prm in model.parameters():
            prm.grad = None
        static_x.grad = None
        twin = copy.deepcopy(model)  # the state the graph starts from
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
            static_y.backward(static_dy)
        # capture ran nothing: the state must still be the twin's
        compare_states(p, f"cma={cma} after capture", model, twin, 0.0)
        for r in range(3):
            x, dy = batch(4, 30 + r)
            with torch.no_grad():
                static_x.copy_(x)
                static_dy.copy_(dy)
            graph.replay()
            torch.cuda.synchronize()
            ye, dxe, ge = step(twin, x, dy)
            p.close(f"cma={cma} replay {r} y", static_y, ye, 1e-5)
            p.close(f"cma={cma} replay {r} dx", static_x.grad, dxe, 1e-5)
            for name, prm in model.named_parameters():
                if name in ge:
                    p.close(f"cma={cma} replay {r} grad {name}", prm.grad, ge[name], 1e-5)
            compare_states(p, f"cma={cma} replay {r}", model, twin, 1e-6)
            nbt = int(model.bn.num_batches_tracked)
            p.true(f"cma={cma} replay {r}: num_batches_tracked {nbt}, expected {4 + r}", nbt == 4 + r)
    return p


def _ops_for_autocast(x_lp: torch.Tensor):
    """(name, fastnorm callable, torch.nn callable) on a (B, C, H, W) activation; fp32 parameters."""
    c = x_lp.shape[1]
    n = x_lp.shape[-1]
    ln_f, ln_t = fnn.LayerNorm(n).to(DEV), nn.LayerNorm(n).to(DEV)
    rms_f, rms_t = fnn.RMSNorm(n).to(DEV), nn.RMSNorm(n).to(DEV)
    bn_f, bn_t = fnn.BatchNorm2d(c).to(DEV), nn.BatchNorm2d(c).to(DEV)
    bne_f, bne_t = fnn.BatchNorm2d(c).to(DEV).eval(), nn.BatchNorm2d(c).to(DEV).eval()
    fz = fnn.FrozenBatchNorm2d(c).to(DEV)
    sbn = fnn.SyncBatchNorm(c).to(DEV)
    w, b = torch.ones(n, device=DEV), torch.zeros(n, device=DEV)
    return [
        ("LayerNorm", ln_f, ln_t),
        ("RMSNorm", rms_f, rms_t),
        ("layer_norm+residual", lambda t: fastnorm.layer_norm(t, n, w, b, residual=t)[0],
         lambda t: F.layer_norm(t + t, (n,), w, b)),
        ("BatchNorm2d-train", bn_f, bn_t),
        ("BatchNorm2d-eval", bne_f, bne_t),
        ("FrozenBatchNorm2d", fz, bne_t),
        ("SyncBatchNorm(local)", sbn, bn_t),
    ]


@check("autocast-dtypes")
def _():
    p = Problems()
    rows = []
    dev_type = "cuda" if DEV == "cuda" else "cpu"
    for adt in (torch.bfloat16, torch.float16):
        if dev_type == "cpu" and adt == torch.float16:
            continue
        conv = nn.Conv2d(3, 6, 1).to(DEV)
        x32 = torch.randn(4, 3, 5, 8, device=DEV)
        with torch.autocast(dev_type, dtype=adt):
            act = conv(x32)  # a low-precision activation, as a network under autocast produces
            for name, f_op, t_op in _ops_for_autocast(act):
                for label, inp in (("activation", act), ("fp32 tensor", x32.repeat(1, 2, 1, 1))):
                    yf = f_op(inp)
                    try:
                        yt_dtype = str(t_op(inp).dtype).replace("torch.", "")
                    except Exception as e:  # noqa: BLE001 - torch's own op may refuse a dtype mix
                        yt_dtype = f"error: {type(e).__name__}"
                    rows.append((str(adt).replace("torch.", ""), name, label, str(inp.dtype).replace("torch.", ""),
                                 str(yf.dtype).replace("torch.", ""), yt_dtype))
                    p.true(f"autocast {adt} {name} on {label} ({inp.dtype}): output {yf.dtype}, expected the input's",
                           yf.dtype == inp.dtype)
    print(f"    {'autocast':<9} {'op':<22} {'input':<12} {'x dtype':<9} {'fastnorm':<9} torch.nn")
    for r in rows:
        print(f"    {r[0]:<9} {r[1]:<22} {r[2]:<12} {r[3]:<9} {r[4]:<9} {r[5]}")
    sync()
    return p


@check("autocast-no-cast-kernels", cuda_only=True)
def _():
    from torch.profiler import ProfilerActivity, profile

    p = Problems()
    x = torch.randn(64, 8, 16, 256, device=DEV, dtype=torch.bfloat16)
    dy = torch.randn_like(x)
    c, n = x.shape[1], x.shape[-1]
    w_n, b_n = torch.rand(n, device=DEV).add(0.5), torch.randn(n, device=DEV)
    w_c, b_c = torch.rand(c, device=DEV).add(0.5), torch.randn(c, device=DEV)
    rm, rv = torch.randn(c, device=DEV), torch.rand(c, device=DEV).add(0.5)
    cases = [
        ("layer_norm", lambda xx, w, b: fastnorm.layer_norm(xx, n, w, b), (w_n, b_n)),
        ("rms_norm", lambda xx, w, b: fastnorm.rms_norm(xx, n, w), (w_n, b_n)),
        ("batch_norm-train", lambda xx, w, b: fastnorm.batch_norm(xx, rm, rv, w, b, True), (w_c, b_c)),
        ("batch_norm-eval", lambda xx, w, b: fastnorm.batch_norm(xx, rm, rv, w, b, False), (w_c, b_c)),
    ]
    bad_words = ("copy", "cast", "convert", "memcpy")
    for name, fn, (w, b) in cases:
        for with_autocast in (False, True):
            wr, br = w.clone().requires_grad_(), b.clone().requires_grad_()
            xr = x.clone().requires_grad_()
            for _ in range(2):  # compile outside the profile
                fn(xr, wr, br).backward(dy)
            xr.grad = wr.grad = br.grad = None  # so autograd accumulates nothing inside the profile
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=with_autocast):
                    y = fn(xr, wr, br)
                y.backward(dy)
                torch.cuda.synchronize()
            kernels = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
            casts = [k for k in kernels if any(wd in k.lower() for wd in bad_words)]
            short = sorted({k.split("(")[0][:60] for k in kernels})
            print(f"    {name:<18} autocast={with_autocast!s:<5} {len(kernels)} kernels: {short}")
            p.true(f"{name} (autocast={with_autocast}): y dtype {y.dtype}", y.dtype == torch.bfloat16)
            p.true(f"{name} (autocast={with_autocast}): cast/copy kernels {casts}", not casts)
    return p


def _export_check(train: bool) -> Problems:
    p = Problems()
    model = make_net(5).train(train)
    twin = copy.deepcopy(model)
    x, _ = batch(4, 40)
    ep = torch.export.export(model, (x,))
    n = _fastnorm_calls(ep.graph)
    if not ARGS.smoke_cpu:
        p.true(f"the exported graph calls fastnorm's ops {n} times, expected {N_FASTNORM_CALLS}", n == N_FASTNORM_CALLS)
    mod = ep.module()
    with torch.no_grad():
        y = mod(x)
        ye = twin(x)
    p.close("exported output", y, ye, 1e-5)
    sync()
    return p


@check("export-eval")
def _():
    return _export_check(False)


@check("export-train")
def _():
    return _export_check(True)


@check("empty")
def _():
    p = Problems()
    for shape in ((0, 16), (3, 0, 16)):
        for is_rms in (False, True):
            x = torch.empty(shape, device=DEV, requires_grad=True)
            w = torch.rand(16, device=DEV, requires_grad=True)
            b = torch.rand(16, device=DEV, requires_grad=True)
            y = fastnorm.rms_norm(x, 16, w) if is_rms else fastnorm.layer_norm(x, 16, w, b)
            y.sum().backward()
            p.true(f"{'rms' if is_rms else 'ln'} {shape}: y {tuple(y.shape)}", y.shape == x.shape)
            p.true(f"{'rms' if is_rms else 'ln'} {shape}: dweight not zero", w.grad is not None and
                   int(torch.count_nonzero(w.grad)) == 0)
    for shape in ((0, 3), (0, 3, 4, 4), (2, 3, 0, 4), (0, 3, 2, 2, 2)):
        for mode in ("train", "eval", "cma"):
            x = torch.empty(shape, device=DEV, requires_grad=True)
            if len(shape) == 4:
                x = x.detach().contiguous(memory_format=torch.channels_last).requires_grad_()
            w = torch.rand(3, device=DEV, requires_grad=True)
            b = torch.rand(3, device=DEV, requires_grad=True)
            rm, rv = torch.randn(3, device=DEV), torch.rand(3, device=DEV) + 0.5
            rm0, rv0 = rm.clone(), rv.clone()
            nbt = torch.ones((), dtype=torch.long, device=DEV)
            y = fastnorm.batch_norm(x, rm, rv, w, b, mode != "eval", None if mode == "cma" else 0.1,
                                    num_batches_tracked=nbt)
            y.sum().backward()
            p.true(f"bn {shape} {mode}: y {tuple(y.shape)}", y.shape == x.shape)
            p.true(f"bn {shape} {mode}: parameter grads not zero",
                   int(torch.count_nonzero(w.grad)) == 0 and int(torch.count_nonzero(b.grad)) == 0)
            p.true(f"bn {shape} {mode}: running statistics changed", torch.equal(rm, rm0) and torch.equal(rv, rv0))
    for m in (fnn.BatchNorm2d(3), fnn.SyncBatchNorm(3), fnn.FrozenBatchNorm2d(3), fnn.LayerNorm(2), fnn.RMSNorm(2)):
        m = m.to(DEV)
        x = torch.empty(0, 3, 2, 2, device=DEV, requires_grad=True)
        m(x).sum().backward()
        for name, prm in m.named_parameters():
            p.true(f"{type(m).__name__}: {name}.grad not zero", prm.grad is not None and
                   int(torch.count_nonzero(prm.grad)) == 0)
    try:
        sync()
    except Exception as e:  # noqa: BLE001
        p.append(f"deferred CUDA error after empty inputs: {e}")
    return p


@check("float64-eps")
def _():
    p = Problems()
    g = torch.Generator().manual_seed(7)
    eps = 1e-3  # not a float32 value: float32(1e-3) = 1.0000000475e-3
    x = (torch.randn(6, 40, generator=g, dtype=torch.float64) * 0.03 + 1.0).to(DEV)
    y = fastnorm.layer_norm(x, 40, eps=eps)
    p.close("layer_norm fp64 eps=1e-3", y, F.layer_norm(x, (40,), eps=eps), 1e-12)
    y = fastnorm.rms_norm(x - 1.0, 40, eps=eps)
    p.close("rms_norm fp64 eps=1e-3", y, F.rms_norm(x - 1.0, (40,), eps=eps), 1e-12)
    xb = (torch.randn(8, 3, 5, generator=g, dtype=torch.float64) * 0.03).to(DEV)
    for training in (True, False):
        rm = torch.zeros(3, dtype=torch.float64, device=DEV)
        rv = torch.full((3,), 1e-3, dtype=torch.float64, device=DEV)
        y = fastnorm.batch_norm(xb, rm.clone(), rv.clone(), None, None, training, 0.1, eps)
        p.close(f"batch_norm fp64 eps=1e-3 training={training}", y,
                F.batch_norm(xb, rm.clone(), rv.clone(), None, None, training, 0.1, eps), 1e-12)
    sync()
    return p


@check("strided-params")
def _():
    p = Problems()
    g = torch.Generator().manual_seed(8)

    def strided(t, fill):
        big = torch.full((2 * t.numel(),), fill, dtype=t.dtype, device=t.device)
        big[::2] = t
        return big, big[::2]

    x = torch.randn(6, 33, generator=g).to(DEV)
    w, b = (torch.rand(33, generator=g) + 0.5).to(DEV), torch.randn(33, generator=g).to(DEV)
    _, ws = strided(w, float("nan"))
    _, bs = strided(b, float("nan"))
    for name, fn in (("layer_norm", lambda ww, bb: fastnorm.layer_norm(x, 33, ww, bb)),
                     ("rms_norm", lambda ww, bb: fastnorm.rms_norm(x, 33, ww))):
        try:
            p.close(f"{name} strided weight/bias", fn(ws, bs), fn(w, b), 0.0)
        except (ValueError, RuntimeError) as e:
            p.true(f"{name}: error does not name the parameter: {e}", "weight" in str(e) or "bias" in str(e))
    xb = torch.randn(4, 5, 3, 3, generator=g).to(DEV)
    wc, bc = (torch.rand(5, generator=g) + 0.5).to(DEV), torch.randn(5, generator=g).to(DEV)
    rm, rv = torch.randn(5, generator=g).to(DEV), (torch.rand(5, generator=g) + 0.5).to(DEV)
    for training in (True, False):
        rm_c, rv_c = rm.clone(), rv.clone()
        expected = fastnorm.batch_norm(xb, rm_c, rv_c, wc, bc, training)
        _, wcs = strided(wc, float("nan"))
        _, bcs = strided(bc, float("nan"))
        rm_big, rms_ = strided(rm, 7.0)
        rv_big, rvs_ = strided(rv, 7.0)
        try:
            y = fastnorm.batch_norm(xb, rms_, rvs_, wcs, bcs, training)
            sync()
            p.close(f"batch_norm training={training} strided params/stats: y", y, expected, 0.0)
            p.close(f"batch_norm training={training}: running_mean", rms_, rm_c, 0.0)
            p.close(f"batch_norm training={training}: running_var", rvs_, rv_c, 0.0)
            p.true(f"batch_norm training={training}: wrote outside the strided running statistics",
                   bool((rm_big[1::2] == 7.0).all()) and bool((rv_big[1::2] == 7.0).all()))
        except (ValueError, RuntimeError) as e:
            p.true(f"batch_norm: error does not name the argument: {e}",
                   any(k in str(e) for k in ("weight", "bias", "running_mean", "running_var")))
    sync()
    return p


def _ln_vs_float64(p: Problems, tag: str, x, w, b, is_rms: bool):
    dtype = x.dtype
    dy = torch.randn_like(x)
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    br = None if is_rms else b.clone().requires_grad_()
    n = x.shape[-1]
    y = fastnorm.rms_norm(xr, n, wr, 1e-6) if is_rms else fastnorm.layer_norm(xr, n, wr, br)
    y.backward(dy)
    x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
    b64 = None if is_rms else b.double().requires_grad_()
    y64 = F.rms_norm(x64, (n,), w64, 1e-6) if is_rms else F.layer_norm(x64, (n,), w64, b64)
    y64.backward(dy.double())
    name = TOL_NAME[dtype]
    p.close(f"{tag} y", y, y64, OUTPUT_TOL[name])
    p.close(f"{tag} dx", xr.grad, x64.grad, OUTPUT_TOL[name])
    p.close(f"{tag} dweight", wr.grad, w64.grad, PARAM_GRAD_TOL[TOL_NAME[w.dtype]] * 2)
    if not is_rms:
        p.close(f"{tag} dbias", br.grad, b64.grad, PARAM_GRAD_TOL[TOL_NAME[w.dtype]] * 2)


@check("ln-long-rows")
def _():
    p = Problems()
    n = 4096 if ARGS.smoke_cpu else 262144
    g = torch.Generator().manual_seed(9)
    for dtype in (torch.float32, torch.bfloat16):
        x = (torch.randn(64, n, generator=g) * 2 + 1).to(DEV, dtype)
        w, b = (torch.rand(n, generator=g) + 0.5).to(DEV), torch.randn(n, generator=g).to(DEV)
        for is_rms in (False, True):
            _ln_vs_float64(p, f"{'rms' if is_rms else 'ln'} N={n} {dtype}", x, w, b, is_rms)
    sync()
    return p


@check("bn-wide")
def _():
    p = Problems()
    c = 512 if ARGS.smoke_cpu else 65536
    g = torch.Generator().manual_seed(10)
    for dtype in (torch.float32, torch.bfloat16):
        for fmt in (torch.contiguous_format, torch.channels_last):
            x = (torch.randn(16, c, 3, 3, generator=g) + 0.5).to(DEV, dtype).contiguous(memory_format=fmt)
            dy = torch.randn(x.shape, generator=g).to(DEV, dtype).contiguous(memory_format=fmt)
            w, b = (torch.rand(c, generator=g) + 0.5).to(DEV), torch.randn(c, generator=g).to(DEV)
            rm, rv = torch.randn(c, generator=g).to(DEV), (torch.rand(c, generator=g) + 0.5).to(DEV)
            rm64, rv64 = rm.double(), rv.double()
            xr, wr, br = x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()
            y = fastnorm.batch_norm(xr, rm, rv, wr, br, True)
            y.backward(dy)
            x64, w64, b64 = x.double().requires_grad_(), w.double().requires_grad_(), b.double().requires_grad_()
            y64 = F.batch_norm(x64, rm64, rv64, w64, b64, True)
            y64.backward(dy.double())
            tag = f"C={c} {dtype} {'channels_last' if fmt == torch.channels_last else 'NCHW'}"
            name = TOL_NAME[dtype]
            p.close(f"{tag} y", y, y64, OUTPUT_TOL[name])
            p.true(f"{tag} y layout", y.is_contiguous(memory_format=fmt))
            p.close(f"{tag} dx", xr.grad, x64.grad, OUTPUT_TOL[name])
            p.close(f"{tag} dweight", wr.grad, w64.grad, PARAM_GRAD_TOL["float32"] * 4)
            p.close(f"{tag} dbias", br.grad, b64.grad, PARAM_GRAD_TOL["float32"] * 4)
            p.close(f"{tag} running_mean", rm, rm64, PARAM_GRAD_TOL["float32"])
            p.close(f"{tag} running_var", rv, rv64, PARAM_GRAD_TOL["float32"])
    sync()
    return p


def _free():
    if DEV == "cuda":
        torch.cuda.empty_cache()


@check("huge-ln")
def _():
    """LayerNorm fwd + bwd on > 2^31 bf16 elements against a chunked float32 reference."""
    p = Problems()
    m, n = (64, 4096) if ARGS.smoke_cpu else (524800, 4096)
    if not ARGS.smoke_cpu:
        assert m * n > 2**31
    torch.manual_seed(11)
    x = torch.randn(m, n, device=DEV, dtype=torch.bfloat16)
    dy = torch.randn(m, n, device=DEV, dtype=torch.bfloat16)
    w = (torch.rand(n, device=DEV) + 0.5).requires_grad_()
    b = torch.randn(n, device=DEV).requires_grad_()
    x.requires_grad_()
    y = fastnorm.layer_norm(x, n, w, b)
    y.backward(dy)
    sync()
    dx = x.grad
    # chunked reference: float32 torch on row slices; dweight/dbias summed in float64
    diff = {"y": 0.0, "dx": 0.0}
    scale = {"y": 0.0, "dx": 0.0}
    dw64 = torch.zeros(n, dtype=torch.float64, device=DEV)
    db64 = torch.zeros(n, dtype=torch.float64, device=DEV)
    rows = 32768 if not ARGS.smoke_cpu else 16
    for r0 in range(0, m, rows):
        xc = x.detach()[r0:r0 + rows].float().requires_grad_()
        wc, bc = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        yc = F.layer_norm(xc, (n,), wc, bc)
        yc.backward(dy[r0:r0 + rows].float())
        for key, got, ref in (("y", y[r0:r0 + rows], yc), ("dx", dx[r0:r0 + rows], xc.grad)):
            diff[key] = max(diff[key], float((got.detach().float() - ref.detach()).abs().max()))
            scale[key] = max(scale[key], float(ref.detach().abs().max()))
        dw64 += wc.grad.double()
        db64 += bc.grad.double()
        del xc, yc
    for key in ("y", "dx"):
        err = diff[key] / scale[key]
        p.true(f"{key}: chunked-reference relative error {err:.3g} > {OUTPUT_TOL['bfloat16']}",
               err <= OUTPUT_TOL["bfloat16"])
    p.close("dweight", w.grad, dw64, PARAM_GRAD_TOL["float32"] * 4)
    p.close("dbias", b.grad, db64, PARAM_GRAD_TOL["float32"] * 4)
    del x, dy, y, dx
    _free()
    return p


def _huge_bn(fmt) -> Problems:
    """BatchNorm2d training fwd + bwd on > 2^31 bf16 elements against a chunked float64 reference."""
    p = Problems()
    shape = (8, 4, 16, 17) if ARGS.smoke_cpu else (32, 64, 1024, 1025)
    if not ARGS.smoke_cpu:
        assert math.prod(shape) > 2**31
    nb, c = shape[0], shape[1]
    torch.manual_seed(12)
    x = (torch.randn(shape, device=DEV, dtype=torch.bfloat16) + 0.25).contiguous(memory_format=fmt)
    dy = torch.randn(shape, device=DEV, dtype=torch.bfloat16).contiguous(memory_format=fmt)
    w = (torch.rand(c, device=DEV) + 0.5).requires_grad_()
    b = torch.randn(c, device=DEV).requires_grad_()
    rm, rv = torch.zeros(c, device=DEV), torch.ones(c, device=DEV)
    x.requires_grad_()
    y = fastnorm.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
    y.backward(dy)
    sync()
    dx = x.grad
    xd = x.detach()
    step = 2 if not ARGS.smoke_cpu else 2
    dims = (0, 2, 3)
    cnt = nb * shape[2] * shape[3]
    # pass 1: mean; pass 2: M2 about it (float64 per slice)
    s1 = torch.zeros(c, dtype=torch.float64, device=DEV)
    for i in range(0, nb, step):
        s1 += xd[i:i + step].double().sum(dims)
    mean = s1 / cnt
    m2 = torch.zeros(c, dtype=torch.float64, device=DEV)
    for i in range(0, nb, step):
        m2 += (xd[i:i + step].double() - mean.view(1, c, 1, 1)).square().sum(dims)
    var = m2 / cnt
    invstd = 1.0 / torch.sqrt(var + 1e-5)
    w64, b64 = w.detach().double(), b.detach().double()
    sg = torch.zeros(c, dtype=torch.float64, device=DEV)
    sgx = torch.zeros(c, dtype=torch.float64, device=DEV)
    view = (1, c, 1, 1)
    for i in range(0, nb, step):
        xh = (xd[i:i + step].double() - mean.view(view)) * invstd.view(view)
        g = dy[i:i + step].double()
        sg += g.sum(dims)
        sgx += (g * xh).sum(dims)
    diff = {"y": 0.0, "dx": 0.0}
    scale = {"y": 0.0, "dx": 0.0}
    for i in range(0, nb, step):
        xh = (xd[i:i + step].double() - mean.view(view)) * invstd.view(view)
        y_ref = xh * w64.view(view) + b64.view(view)
        g = dy[i:i + step].double()
        dx_ref = (w64 * invstd).view(view) * (g - (sg / cnt).view(view) - xh * (sgx / cnt).view(view))
        for key, got, ref in (("y", y[i:i + step], y_ref), ("dx", dx[i:i + step], dx_ref)):
            diff[key] = max(diff[key], float((got.detach().double() - ref).abs().max()))
            scale[key] = max(scale[key], float(ref.abs().max()))
        del xh, y_ref, g, dx_ref
    for key in ("y", "dx"):
        err = diff[key] / scale[key]
        p.true(f"{key}: chunked-reference relative error {err:.3g} > {OUTPUT_TOL['bfloat16']}",
               err <= OUTPUT_TOL["bfloat16"])
    p.close("dweight", w.grad, sgx, PARAM_GRAD_TOL["float32"] * 4)
    p.close("dbias", b.grad, sg, PARAM_GRAD_TOL["float32"] * 4)
    p.close("running_mean", rm, 0.1 * mean, PARAM_GRAD_TOL["float32"])
    p.close("running_var", rv, 0.9 + 0.1 * m2 / (cnt - 1), PARAM_GRAD_TOL["float32"])
    p.true("y keeps x's layout", y.is_contiguous(memory_format=fmt))
    del x, dy, y, dx, xd
    _free()
    return p


@check("huge-bn-nchw")
def _():
    return _huge_bn(torch.contiguous_format)


@check("huge-bn-channels_last")
def _():
    return _huge_bn(torch.channels_last)


# ============================================================================================== main


def main(argv=None) -> int:
    global DEV
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="run only the checks whose name contains this")
    ap.add_argument("--smoke-cpu", action="store_true",
                    help="run the script's logic on the CPU (PyTorch path, aot_eager, tiny sizes; no CUDA-only checks)")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds; later checks are skipped (FAIL) past it")
    args = ap.parse_args(argv)
    ARGS.smoke_cpu = args.smoke_cpu
    if args.smoke_cpu:
        DEV = "cpu"
    elif not torch.cuda.is_available():
        print("FAIL: no CUDA device (use --smoke-cpu to check the script itself)")
        return 1
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    where = torch.cuda.get_device_name() if DEV == "cuda" else "CPU smoke run"
    print(f"fastnorm integration checks: torch {torch.__version__}, {where}", flush=True)
    t_start = time.perf_counter()
    results = []
    # cheap and fundamental first, the compiles (slowest, inductor) last, so a tight budget drops the fewest
    order = [n for n, _, _ in CHECKS if not n.startswith("compile")] + [n for n, _, _ in CHECKS
                                                                         if n.startswith("compile")]
    first = ["empty", "float64-eps", "strided-params", "autocast-dtypes", "autocast-no-cast-kernels"]
    order = first + [n for n in order if n not in first]
    by_name = {n: (n, fn, cuda_only) for n, fn, cuda_only in CHECKS}
    for name, fn, cuda_only in (by_name[n] for n in order):
        if args.k and args.k not in name:
            continue
        if cuda_only and DEV != "cuda":
            results.append((name, "SKIP", 0.0, "needs CUDA"))
            print(f"SKIP {name} (needs CUDA)", flush=True)
            continue
        if time.perf_counter() - t_start > args.budget:
            results.append((name, "FAIL", 0.0, f"not run: past the {args.budget:.0f} s budget"))
            print(f"FAIL {name}: not run, past the time budget", flush=True)
            continue
        t0 = time.perf_counter()
        try:
            problems = fn()
        except Exception as e:  # noqa: BLE001 - a crash is this check's failure
            problems = [f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                        traceback.format_exc()[-1500:]]
            if DEV == "cuda":
                try:
                    torch.cuda.synchronize()
                except Exception as e2:  # noqa: BLE001
                    problems.append(f"and the device is broken: {e2}")
        dt = time.perf_counter() - t0
        status = "PASS" if not problems else "FAIL"
        results.append((name, status, dt, problems[0][:90] if problems else ""))
        print(f"{status} {name} ({dt:.1f} s)", flush=True)
        for line in list(problems)[:8]:
            print(f"    {line}", flush=True)
    total = time.perf_counter() - t_start
    print(f"\n{'check':<26} {'result':<6} {'seconds':>8}  first problem")
    for name, status, dt, first in results:
        print(f"{name:<26} {status:<6} {dt:>8.1f}  {first}")
    failed = [r for r in results if r[1] == "FAIL"]
    print(f"\n{len(results) - len(failed)}/{len(results)} not failed, {total:.0f} s ({where})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
