"""torch.compile / export support, checked without a GPU.

Dynamo cannot trace into Triton's interpreter (it reads data pointers of fake tensors), so the GPU
behaviour is checked here in two ways that need no GPU, and the rest runs on the GPU machine
(``benchmarks/scripts/gpu_integration.py``):

* In this process (interpreter on): ``torch.library.opcheck`` of the registered custom ops — schema
  (declared mutation and aliasing match what the implementation does), autograd registration, and for the
  BatchNorm ops (whose fake implementation is separate from the kernels) the fake-tensor and AOT-dispatch
  checks.
* In a child process with ``TRITON_INTERPRET=0`` (so the kernels are real ``triton.jit`` functions, which
  torch.compile can trace with fake tensors but nothing here can run):
  - every custom op under ``FakeTensorMode``: output shapes, dtypes and memory layouts;
  - the *GPU path* (``uses_triton`` forced on) of a model holding every fastnorm module, on the meta device:
    ``torch._dynamo.explain`` finds one graph and zero graph breaks and the graph calls fastnorm's ops;
    ``torch.compile(backend="aot_eager", fullgraph=True)`` forward + backward, static and ``dynamic=True``;
    ``torch.export`` in training and evaluation;
  - the *CPU path* (PyTorch's implementation, real CPU tensors): zero graph breaks, compiled forward,
    backward and running statistics equal eager, static and dynamic; ``torch.export`` runs and equals eager;
    BatchNorm's second derivatives (a gradient penalty) equal torch's (the batch statistics depend on x there too).
* ``benchmarks/scripts/gpu_integration.py --smoke-cpu``: the GPU script's logic, so it does not rot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

RESULT_TAG = "FASTNORM_COMPILE_RESULT "
HERE = Path(__file__).resolve()

# ====================================================================================== parent side (pytest)

import pytest  # noqa: E402
import torch  # noqa: E402

import fastnorm  # noqa: E402,F401  (registers the custom ops)

CHILD_CASES = [
    "fake_norm_ops", "fake_batch_norm_ops",
    "gpu_path_explain_train", "gpu_path_explain_eval",
    "gpu_path_aot_train_static", "gpu_path_aot_eval_static", "gpu_path_aot_train_dynamic", "gpu_path_aot_eval_dynamic",
    "gpu_path_export_train", "gpu_path_export_eval",
    "cpu_path_explain",
    "cpu_path_compile_train_static", "cpu_path_compile_eval_static",
    "cpu_path_compile_train_dynamic", "cpu_path_compile_eval_dynamic",
    "cpu_path_export_eval", "cpu_path_double_backward",
]


def _run_child(log: Path) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="0", OMP_NUM_THREADS="1")
    src = str(HERE.parent.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, str(HERE), *CHILD_CASES], env=env, stdout=f, stderr=subprocess.STDOUT,
                              timeout=600)
    text = log.read_text()
    results = {}
    for line in text.splitlines():
        if line.startswith(RESULT_TAG):
            r = json.loads(line[len(RESULT_TAG):])
            results[r["case"]] = (r["ok"], r["detail"])
    results["__log__"] = (proc.returncode == 0, "\n".join(text.splitlines()[-40:]))
    return results


@pytest.fixture(scope="module")
def child_results(tmp_path_factory):
    """Every child case, run once in one process without the interpreter; {case: (ok, detail)}. Under xdist the
    workers share one run (the first to take the lock runs it, the others read its results)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    # xdist: each worker's basetemp is <session dir>/popen-gwN, so the parent is this session's shared directory
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    results_file = shared / "fastnorm_compile_child.json"
    with FileLock(str(shared / "fastnorm_compile_child.lock")):
        if results_file.exists():
            return {k: tuple(v) for k, v in json.loads(results_file.read_text()).items()}
        results = _run_child(shared / "fastnorm_compile_child.log")
        results_file.write_text(json.dumps(results))
    return results


@pytest.mark.parametrize("case", CHILD_CASES)
def test_compile_without_interpreter(child_results, case):
    if case not in child_results:
        pytest.fail(f"the child process produced no result for {case}:\n{child_results['__log__'][1]}")
    ok, detail = child_results[case]
    assert ok, detail


def _opcheck(op, args, utils):
    for u in utils:
        result = torch.library.opcheck(op, args, test_utils=(u,))
        assert result[u] == "SUCCESS", f"{op}: {u}: {result[u]}"


@pytest.mark.parametrize(("is_rms", "residual", "dtype"), [(False, False, torch.float32), (True, False, torch.float32),
                                                           (False, True, torch.bfloat16)],
                         ids=["ln", "rms", "ln-residual-bf16"])
def test_opcheck_norm_ops(is_rms, residual, dtype, device):
    dev = device  # the kernels' device: CUDA on the GPU machine, else CPU through the interpreter
    x = torch.randn(3, 8, dtype=dtype, device=dev, requires_grad=True)
    w = torch.randn(8, device=dev, requires_grad=True)
    b = None if is_rms else torch.randn(8, device=dev, requires_grad=True)
    r = torch.randn(3, 8, dtype=dtype, device=dev, requires_grad=True) if residual else None
    rdt = torch.float32 if residual else None
    # schema and autograd only: the fake-tensor checks would run the interpreter on fake tensors
    _opcheck(torch.ops.fastnorm.norm_fwd.default, (x, w, b, r, 1, 1e-5, 0.0, is_rms, rdt),
             ("test_schema", "test_autograd_registration"))
    y, s_out, mean, rstd = torch.ops.fastnorm.norm_fwd(x, w, b, r, 1, 1e-5, 0.0, is_rms, rdt)
    s = s_out if residual else x
    dy = torch.randn_like(y)
    dres = torch.randn_like(s_out) if residual else None
    _opcheck(torch.ops.fastnorm.norm_bwd.default,
             (dy, dres, s.detach(), w.detach(), mean, rstd, 1, 1e-5, 0.0, is_rms, None if b is None else b.dtype,
              dtype, None if r is None else r.dtype), ("test_schema",))


def test_norm_ops_refuse_a_device_without_kernels(monkeypatch):
    """A direct call of the custom ops on a tensor the kernels do not run on: a clear error, not Triton's."""
    from fastnorm.ops import layer_norm as ln_ops

    x = torch.randn(3, 8)
    monkeypatch.setattr(ln_ops, "uses_triton", lambda t: False)
    with pytest.raises(RuntimeError, match=r"fastnorm.norm_fwd .*needs CUDA tensors.*fastnorm.layer_norm"):
        torch.ops.fastnorm.norm_fwd(x, None, None, None, 1, 1e-5, 0.0, False, None)
    stats = torch.ones(3)
    with pytest.raises(RuntimeError, match=r"fastnorm.norm_bwd .*needs CUDA tensors"):
        torch.ops.fastnorm.norm_bwd(x, None, x, None, stats, stats, 1, 1e-5, 0.0, False, None, x.dtype, None)


BN_FWD_MODES = [
    ("train-update", True, True), ("eval", False, False), ("train-no-running", True, False),
]


@pytest.mark.parametrize(("batch_stats", "update"), [m[1:] for m in BN_FWD_MODES], ids=[m[0] for m in BN_FWD_MODES])
def test_opcheck_batch_norm_fwd(batch_stats, update):
    x = torch.randn(4, 3, 2, 2, requires_grad=True)
    w, b = torch.rand(3).add(0.5).requires_grad_(), torch.randn(3, requires_grad=True)
    rm, rv = torch.randn(3), torch.rand(3) + 0.5
    nbt = torch.tensor(2)
    _opcheck(torch.ops.fastnorm.batch_norm_fwd.default,
             (x, w, b, None, rm, rv, nbt, batch_stats, update, 0.1, False, 1e-5, False, False),
             ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static"))


def test_opcheck_batch_norm_bwd():
    x, dy = torch.randn(4, 3, 2, 2), torch.randn(4, 3, 2, 2)
    w = torch.rand(3) + 0.5
    y = torch.relu(torch.randn(4, 3, 2, 2))
    shift, rstd, mrel = torch.randn(3), torch.rand(3) + 0.5, torch.empty(0)
    for relu in (False, True):
        _opcheck(torch.ops.fastnorm.batch_norm_bwd.default,
                 (dy, x, y if relu else None, w, shift, mrel, rstd, True, False, relu, True, True, True, relu,
                  torch.float32, torch.float32),
                 ("test_schema", "test_faketensor", "test_aot_dispatch_static"))


def test_gpu_integration_script_smoke(tmp_path):
    """The GPU script's own logic on the CPU (``--smoke-cpu``: PyTorch path, aot_eager, tiny sizes), so it does
    not rot between GPU runs: every check that does not need CUDA passes."""
    env = dict(os.environ, TRITON_INTERPRET="0", OMP_NUM_THREADS="1")
    src = str(HERE.parent.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    script = HERE.parent.parent / "benchmarks" / "scripts" / "gpu_integration.py"
    proc = subprocess.run([sys.executable, str(script), "--smoke-cpu"], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, tail
    assert "not failed" in proc.stdout and "SKIP cudagraph-train" in proc.stdout, tail


# ====================================================================================== child side


def _model():
    from torch import nn

    import fastnorm.nn as fnn

    class Net(nn.Module):
        """Every fastnorm module in one forward (SyncBatchNorm runs locally without a process group)."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = fnn.BatchNorm2d(4, activation="relu")
            self.sbn = fnn.SyncBatchNorm(4)
            self.frozen = fnn.FrozenBatchNorm2d(4)
            self.bn3 = fnn.BatchNorm3d(4, momentum=None)
            self.ln = fnn.LayerNorm(16)
            self.rms = fnn.RMSNorm(16)
            self.bn1 = fnn.BatchNorm1d(4)

        def forward(self, x):
            h = self.bn(self.conv(x))
            h = self.sbn(h, h)
            h = self.frozen(h)
            h = self.bn3(h.unsqueeze(2)).squeeze(2)
            h = self.ln(h.flatten(2))
            h = self.rms(h)
            return self.bn1(h)

    return Net()


N_NORM_LAYERS = 7


def _force_gpu_path():
    import fastnorm.ops.batch_norm as B
    import fastnorm.ops.layer_norm as L

    L.uses_triton = lambda t: True
    B.uses_triton = lambda t: True


def _fastnorm_nodes(graph) -> int:
    return sum(1 for n in graph.nodes if n.op == "call_function" and "fastnorm" in str(n.target))


def _case_fake_norm_ops():
    from torch._subclasses.fake_tensor import FakeTensorMode

    problems = []
    with FakeTensorMode():
        for dtype, wdt, residual, rdt, is_rms in [
            (torch.float32, torch.float32, False, None, False),
            (torch.bfloat16, torch.float32, False, None, False),
            (torch.float16, torch.float16, True, torch.float32, True),
            (torch.float64, torch.float64, True, None, False),
            (torch.bfloat16, torch.float32, True, torch.float32, False),
        ]:
            x = torch.empty(5, 3, 16, dtype=dtype)
            w = torch.empty(16, dtype=wdt)
            b = None if is_rms else torch.empty(16, dtype=wdt)
            r = torch.empty(5, 3, 16, dtype=dtype) if residual else None
            y, s, mean, rstd = torch.ops.fastnorm.norm_fwd(x, w, b, r, 1, 1e-5, 0.0, is_rms, rdt)
            stat = torch.float64 if dtype == torch.float64 else torch.float32
            tag = f"{dtype} w {wdt} residual {residual} {rdt} rms {is_rms}"
            if y.shape != x.shape or y.dtype != dtype:
                problems.append(f"{tag}: y {y.shape} {y.dtype}")
            if residual and (s.shape != x.shape or s.dtype != (rdt or dtype)):
                problems.append(f"{tag}: residual_out {s.shape} {s.dtype}")
            if rstd.shape != (15,) or rstd.dtype != stat:
                problems.append(f"{tag}: rstd {rstd.shape} {rstd.dtype}")
            if not is_rms and (mean.shape != (15,) or mean.dtype != stat):
                problems.append(f"{tag}: mean {mean.shape} {mean.dtype}")
            sv = s if residual else x
            dres_out = torch.empty_like(s) if residual else None
            dx, dres, dw, db = torch.ops.fastnorm.norm_bwd(torch.empty_like(y), dres_out, sv, w, mean, rstd, 1, 1e-5,
                                                          0.0, is_rms, None if b is None else b.dtype, dtype,
                                                          r.dtype if residual else None)
            if dx.shape != x.shape or dx.dtype != dtype:
                problems.append(f"{tag}: dx {dx.shape} {dx.dtype}")
            if residual and (dres.shape != x.shape or dres.dtype != dtype):
                problems.append(f"{tag}: dresidual {dres.shape} {dres.dtype}")
            if dw.shape != (16,) or dw.dtype != wdt:
                problems.append(f"{tag}: dweight {dw.shape} {dw.dtype}")
            if b is not None and (db.shape != (16,) or db.dtype != wdt):
                problems.append(f"{tag}: dbias {db.shape} {db.dtype}")
    return problems


def _case_fake_batch_norm_ops():
    from torch._subclasses.fake_tensor import FakeTensorMode

    problems = []
    with FakeTensorMode():
        for dtype, pdt, cl, batch_stats, update, relu in [
            (torch.float32, torch.float32, False, True, True, False),
            (torch.bfloat16, torch.float32, True, True, True, True),
            (torch.float16, torch.float32, False, False, False, False),
            (torch.float64, torch.float64, True, False, False, True),
            (torch.bfloat16, torch.bfloat16, False, True, False, False),
        ]:
            x = torch.empty(2, 6, 3, 5, dtype=dtype)
            if cl:
                x = x.contiguous(memory_format=torch.channels_last)
            w, b = torch.empty(6, dtype=pdt), torch.empty(6, dtype=pdt)
            rm, rv = torch.empty(6, dtype=pdt), torch.empty(6, dtype=pdt)
            out = torch.ops.fastnorm.batch_norm_fwd(x, w, b, None, rm, rv, None, batch_stats, update, 0.1, False, 1e-5,
                                                    False, relu)
            y = out[0]
            tag = f"{dtype} params {pdt} channels_last {cl} batch_stats {batch_stats} update {update}"
            if y.shape != x.shape or y.dtype != dtype or y.stride() != x.stride():
                problems.append(f"{tag}: y {y.shape} {y.dtype} {y.stride()} vs x {x.stride()}")
            if update and (out[4].shape != rm.shape or out[4].dtype != pdt or out[5].shape != rv.shape):
                problems.append(f"{tag}: new running stats {out[4].shape} {out[4].dtype}")
            shift, mrel, rstd = out[1], out[2], out[3]
            dx, dw, db, dz = torch.ops.fastnorm.batch_norm_bwd(torch.empty_like(x), x, y if relu else None, w, shift,
                                                               mrel, rstd, batch_stats, False, relu, True, True, True,
                                                               relu, pdt, pdt)
            if dx.shape != x.shape or dx.dtype != dtype or dx.stride() != x.stride():
                problems.append(f"{tag}: dx {dx.shape} {dx.dtype} {dx.stride()}")
            if dw.shape != (6,) or dw.dtype != pdt or db.shape != (6,) or db.dtype != pdt:
                problems.append(f"{tag}: dweight/dbias {dw.shape} {dw.dtype} {db.shape} {db.dtype}")
            if relu and (dz.shape != x.shape or dz.dtype != dtype):
                problems.append(f"{tag}: dz {dz.shape} {dz.dtype}")
    return problems


def _case_gpu_path_explain(train: bool):
    _force_gpu_path()
    m = _model().to("meta").train(train)
    x = torch.empty(2, 3, 4, 4, device="meta", requires_grad=True)
    ex = torch._dynamo.explain(m)(x)
    problems = []
    if ex.graph_break_count != 0 or ex.graph_count != 1:
        problems.append(f"{ex.graph_count} graphs, {ex.graph_break_count} breaks: "
                        f"{[str(r.reason)[:300] for r in ex.break_reasons]}")
    else:
        n = _fastnorm_nodes(ex.graphs[0].graph)
        if n != N_NORM_LAYERS:
            problems.append(f"the graph calls fastnorm's ops {n} times, expected {N_NORM_LAYERS}")
    return problems


def _case_gpu_path_aot(train: bool, dynamic: bool):
    _force_gpu_path()
    m = _model().to("meta").train(train)
    cm = torch.compile(m, backend="aot_eager", fullgraph=True, dynamic=dynamic)
    problems = []
    for batch in (2, 3):  # a second batch size: recompiles when static, reuses the graph when dynamic
        x = torch.empty(batch, 3, 4, 4, device="meta", requires_grad=True)
        y = cm(x)
        if y.shape != (batch, 4, 16):
            problems.append(f"output shape {tuple(y.shape)}")
        y.sum().backward()
        if x.grad is None or x.grad.shape != x.shape:
            problems.append("no input gradient")
        for name, p in m.named_parameters():
            if p.grad is None:
                problems.append(f"{name}.grad is None")
    return problems


def _case_gpu_path_export(train: bool):
    _force_gpu_path()
    m = _model().to("meta").train(train)
    ep = torch.export.export(m, (torch.empty(2, 3, 4, 4, device="meta"),))
    n = _fastnorm_nodes(ep.graph)
    return [] if n == N_NORM_LAYERS else [f"the exported graph calls fastnorm's ops {n} times, expected "
                                          f"{N_NORM_LAYERS}"]


def _seeded_model(train: bool):
    torch.manual_seed(0)
    m = _model().train(train)
    with torch.no_grad():
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if t.is_floating_point():
                if "running_var" in name or name.endswith("weight"):
                    t.copy_(torch.rand(t.shape) + 0.5)
                else:
                    t.copy_(torch.randn(t.shape) * 0.5)
    return m


def _compare_states(what, a, b, tol=1e-5):
    problems = []
    for (k, ta), (_, tb) in zip(a.items(), b.items(), strict=True):
        if ta is None or tb is None:
            if (ta is None) != (tb is None):
                problems.append(f"{what} {k}: one is None")
            continue
        if ta.is_floating_point():
            err = float((ta.double() - tb.double()).abs().max()) / max(float(tb.double().abs().max()), 1e-30)
            if not err <= tol:
                problems.append(f"{what} {k}: relative error {err:.3g}")
        elif not torch.equal(ta, tb):
            problems.append(f"{what} {k}: {ta} vs {tb}")
    return problems


def _case_cpu_path_explain():
    problems = []
    for train in (True, False):
        m = _seeded_model(train)
        ex = torch._dynamo.explain(m)(torch.randn(2, 3, 4, 4, requires_grad=True))
        if ex.graph_break_count != 0 or ex.graph_count != 1:
            problems.append(f"train={train}: {ex.graph_count} graphs, {ex.graph_break_count} breaks: "
                            f"{[str(r.reason)[:300] for r in ex.break_reasons]}")
    return problems


def _case_cpu_path_compile(train: bool, dynamic: bool):
    eager, compiled = _seeded_model(train), _seeded_model(train)
    cm = torch.compile(compiled, backend="aot_eager", fullgraph=True, dynamic=dynamic)
    problems = []
    for step, batch in enumerate((2, 3, 2)):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(batch, 3, 4, 4, generator=g)
        dy = torch.randn(batch, 4, 16, generator=g)
        outs = {}
        for name, model in (("eager", eager), ("compiled", cm)):
            xr = x.clone().requires_grad_()
            y = model(xr)
            y.backward(dy)
            grads = {n: p.grad.clone() for n, p in (eager if name == "eager" else compiled).named_parameters()}
            outs[name] = ({"y": y.detach(), "dx": xr.grad}, grads)
        problems += _compare_states(f"step {step}", outs["compiled"][0], outs["eager"][0])
        problems += _compare_states(f"step {step} grad", outs["compiled"][1], outs["eager"][1], 1e-4)
        for model in (eager, compiled):
            model.zero_grad()
    problems += _compare_states("state", compiled.state_dict(), eager.state_dict())
    return problems


def _case_cpu_path_export_eval():
    m = _seeded_model(False)
    x = torch.randn(2, 3, 4, 4)
    ep = torch.export.export(m, (x,))
    with torch.no_grad():
        return _compare_states("exported", {"y": ep.module()(x)}, {"y": m(x)})


def _case_cpu_path_double_backward():
    """A gradient penalty through BatchNorm on the CPU path (float64), differentiated once more, against torch's
    F.batch_norm: training (batch statistics) and evaluation, NCHW and channels-last."""
    import torch.nn.functional as F

    problems = []
    g = torch.Generator().manual_seed(3)
    x, c = (torch.randn(3, 2, 2, 3, generator=g, dtype=torch.float64) for _ in range(2))
    w, b = torch.rand(2, generator=g, dtype=torch.float64) + 0.5, torch.randn(2, generator=g, dtype=torch.float64)
    rm, rv = torch.randn(2, generator=g, dtype=torch.float64), torch.rand(2, generator=g, dtype=torch.float64) + 0.5
    def grads(bn, training, cl):
        xs = x.clone(memory_format=torch.channels_last if cl else torch.contiguous_format).requires_grad_()
        ws, bs = w.clone().requires_grad_(), b.clone().requires_grad_()
        y = bn(xs, None if training else rm, None if training else rv, ws, bs, training)
        (gx,) = torch.autograd.grad((y * c).square().sum(), xs, create_graph=True)
        return dict(zip("xwb", torch.autograd.grad(gx.square().sum() + y.sum(), (xs, ws, bs)), strict=True))

    for training in (True, False):
        for cl in (False, True):
            problems += _compare_states(f"training={training} channels_last={cl}",
                                        grads(fastnorm.batch_norm, training, cl), grads(F.batch_norm, training, cl),
                                        1e-10)
    return problems


CASES = {
    "fake_norm_ops": _case_fake_norm_ops,
    "fake_batch_norm_ops": _case_fake_batch_norm_ops,
    "gpu_path_explain_train": lambda: _case_gpu_path_explain(True),
    "gpu_path_explain_eval": lambda: _case_gpu_path_explain(False),
    "gpu_path_aot_train_static": lambda: _case_gpu_path_aot(True, False),
    "gpu_path_aot_eval_static": lambda: _case_gpu_path_aot(False, False),
    "gpu_path_aot_train_dynamic": lambda: _case_gpu_path_aot(True, True),
    "gpu_path_aot_eval_dynamic": lambda: _case_gpu_path_aot(False, True),
    "gpu_path_export_train": lambda: _case_gpu_path_export(True),
    "gpu_path_export_eval": lambda: _case_gpu_path_export(False),
    "cpu_path_explain": _case_cpu_path_explain,
    "cpu_path_compile_train_static": lambda: _case_cpu_path_compile(True, False),
    "cpu_path_compile_eval_static": lambda: _case_cpu_path_compile(False, False),
    "cpu_path_compile_train_dynamic": lambda: _case_cpu_path_compile(True, True),
    "cpu_path_compile_eval_dynamic": lambda: _case_cpu_path_compile(False, True),
    "cpu_path_export_eval": _case_cpu_path_export_eval,
    "cpu_path_double_backward": _case_cpu_path_double_backward,
}


def _child_main(names):
    import importlib

    import fastnorm._runtime as rt

    assert not rt.INTERPRETER, "the compile child must run without TRITON_INTERPRET"
    import fastnorm.ops.batch_norm as B
    import fastnorm.ops.layer_norm as L

    originals = (L.uses_triton, B.uses_triton)
    for name in names:
        L.uses_triton, B.uses_triton = originals  # each case starts on the real dispatch rule
        torch._dynamo.reset()
        try:
            problems = CASES[name]()
            ok, detail = not problems, "; ".join(problems)
        except Exception as e:  # noqa: BLE001 - every failure becomes this case's report
            ok, detail = False, f"{type(e).__name__}: {str(e)[:1500]}\n{traceback.format_exc()[-2500:]}"
        print(RESULT_TAG + json.dumps({"case": name, "ok": ok, "detail": detail}), flush=True)
    importlib.invalidate_caches()


if __name__ == "__main__":
    _child_main(sys.argv[1:])
