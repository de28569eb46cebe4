"""The launcher's repeat-launch path (``kernels._launch._Launcher``) with a stand-in for Triton's compiled
kernel: what it passes to the C launch function, and when it goes back through Triton. (The real launches
run on CUDA; under the interpreter the launcher hands every launch to Triton.) And the eager ops' cheap entry into
their autograd Functions (``_runtime.apply_function``)."""

from __future__ import annotations

import pytest
import torch

from fastnorm.kernels import _launch


class _Runner:
    """Stands in for Triton's CudaLauncher: records the C launch calls."""

    global_scratch_size = profile_scratch_size = 0
    launch_cooperative_grid = launch_pdl = False

    def __init__(self):
        self.calls = []

    def launch(self, *a):
        self.calls.append(a)


class _Kernel:
    def __init__(self):
        self.run = _Runner()
        self.function, self.packed_metadata = "fn-handle", (4, 1, 0)


class _JitFunction:
    """Stands in for a ``@triton.jit`` function with runtime args (x_ptr, n, alpha) and constexprs (A, B)."""

    __name__ = "fake_kernel"
    arg_names = ["x_ptr", "n", "alpha", "A", "B"]

    def __init__(self):
        self.compiles = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.compiles.append((grid, args, kwargs))
            return _Kernel()
        return launch


@pytest.fixture
def launcher(monkeypatch):
    monkeypatch.setattr(_launch, "INTERPRETER", False)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)  # CPU builds have none
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 1234, raising=False)
    return _launch._Launcher(_JitFunction())


def test_repeat_launches_go_straight_to_the_c_launch(launcher):
    x = torch.empty(64)
    meta = {"B": 7, "A": True}  # any order
    launcher((3,), (x, 256, 0.5), meta, 4, None)
    assert len(launcher.fn.compiles) == 1
    grid, args, kwargs = launcher.fn.compiles[0]
    assert grid == (3,) and args[1:] == (256, 0.5) and kwargs == {"B": 7, "A": True, "num_warps": 4}
    launcher((5,), (x, 272, 0.25), meta, 4, None)  # same specialization: 272 is a multiple of 16 as 256 is
    assert len(launcher.fn.compiles) == 1
    (entry,) = launcher.cache.values()
    (call,) = entry.kernel.run.calls
    assert call[:13] == (5, 1, 1, 1234, "fn-handle", False, False, None, None, (4, 1, 0), None, None, None)
    assert call[13:] == (x.data_ptr(), 272, 0.25, True, 7)  # the tensor as its address, constexprs in order


@pytest.mark.parametrize("change", ["n", "dtype", "alignment", "warps", "const", "regs"])
def test_a_new_specialization_goes_through_triton(launcher, change):
    x = torch.empty(64)
    base = dict(args=(x, 256, 0.5), meta={"A": True, "B": 7}, num_warps=4, maxnreg=None)
    other = dict(base)
    if change == "n":
        other["args"] = (x, 257, 0.5)  # no longer a multiple of 16
    elif change == "dtype":
        other["args"] = (x.double(), 256, 0.5)
    elif change == "alignment":
        other["args"] = (x[1:], 256, 0.5)  # 4 bytes past a 16-byte boundary
    elif change == "warps":
        other["num_warps"] = 8
    elif change == "const":
        other["meta"] = {"A": True, "B": 8}
    else:
        other["maxnreg"] = 64
    for kw in (base, other):
        launcher((1,), kw["args"], kw["meta"], kw["num_warps"], None, maxnreg=kw["maxnreg"])
    assert len(launcher.fn.compiles) == 2
    if change == "regs":
        assert launcher.fn.compiles[1][2]["maxnreg"] == 64


def test_missing_constexpr_is_an_error(launcher):
    with pytest.raises(RuntimeError, match="needs every constexpr"):
        launcher((1,), (torch.empty(4), 4, 1.0), {"A": True}, 4, None)


class _Twice(torch.autograd.Function):
    """y = 2·x, with fastnorm's eager argument layout (four tensors or None, then one tuple)."""

    @staticmethod
    def forward(ctx, x, a, b, c, rest):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None, None, None, None


def test_apply_function_is_function_apply():
    """``apply_function`` makes the same graph as ``Function.apply``; unwraps a tensor leaked out of a functorch
    transform as ``Function.apply`` does; and inside a transform is ``Function.apply`` (which refuses a Function
    without ``setup_context``, with torch's message)."""
    from fastnorm._runtime import apply_function

    apply = apply_function(_Twice)
    x = torch.randn(5, requires_grad=True)
    y = apply(x, None, None, None, ())
    assert type(y.grad_fn).__name__ == "_TwiceBackward" and torch.equal(y, x * 2)
    (g,) = torch.autograd.grad(y, x, torch.ones(5))
    assert torch.equal(g, torch.full((5,), 2.0))
    leaked = []
    torch.func.grad(lambda t: leaked.append(t) or t.sum())(torch.randn(3))
    assert torch._C._functorch.is_functorch_wrapped_tensor(leaked[0])
    out = apply(leaked[0], None, None, None, ())
    assert not torch._C._functorch.is_functorch_wrapped_tensor(out)
    with pytest.raises(RuntimeError, match="setup_context"):
        torch.func.grad(lambda t: apply(t, None, None, None, ()).sum())(torch.randn(3))
