"""Stubbed kernel launches: CPU tensors run fastnorm's eager kernel path (checks, plans, argument lists,
``_Launcher``'s repeat-launch code, replays) up to the C launch function, which a stand-in takes instead.

Used by ``tests/test_replay.py`` (which logs the launches) and ``benchmarks/scripts/host_stub.py`` (which times the
host path without them). Not the interpreter: nothing is computed.
"""

from __future__ import annotations

import torch

from fastnorm.kernels import _launch, _replay
from fastnorm.kernels import batch_norm as KB
from fastnorm.kernels import layer_norm as KL
from fastnorm.ops import batch_norm as OB
from fastnorm.ops import layer_norm as OL


class _Runner:
    """Stands in for Triton's CUDA launcher: ``launch`` appends (kernel, grid, stream, arguments and constexprs)
    to ``log`` when there is one."""

    global_scratch_size = profile_scratch_size = 0
    launch_pdl = False

    def __init__(self, name, log, cooperative):
        self.name, self.log, self.launch_cooperative_grid = name, log, cooperative

    def launch(self, *a):
        if self.log is not None:
            self.log.append((self.name, a[0], a[3], a[13:]))


class _Compiled:
    packed_metadata = None

    def __init__(self, name, log, cooperative):
        self.function = name
        self.run = _Runner(name, log, cooperative)


class _Kernel:
    """Stands in for a ``@triton.jit`` function: the first launch of a specialization 'compiles'."""

    def __init__(self, fn, log):
        self.arg_names, self.__name__, self.log = fn.arg_names, fn.__name__, log

    def __getitem__(self, grid):
        def first_launch(*args, launch_cooperative_grid=False, **meta):
            return _Compiled(self.__name__, self.log, launch_cooperative_grid)
        return first_launch


def stub_launches(setattr_, log: list | None, counters: torch.Tensor) -> None:
    """Route CPU tensors through the kernels' eager path with every launch stubbed, each op with fresh (empty)
    replay programs; ``setattr_(obj, name, value)`` makes each change (``monkeypatch.setattr`` with
    ``raising=False`` in tests, to undo them); ``counters`` serve as the stream's shared zeroed counters."""
    for mod in (KB, KL):
        for launcher in vars(mod).values():
            if isinstance(launcher, _launch._Launcher):
                setattr_(launcher, "fn", _Kernel(launcher.fn, log))
                setattr_(launcher, "cache", {})
    setattr_(_launch, "INTERPRETER", False)
    setattr_(_replay, "_replays_on", lambda t: True)
    for mod in (OB, OL):
        setattr_(mod, "uses_triton", lambda t: True)
        for name, value in list(vars(mod).items()):
            if isinstance(value, _replay.Programs):
                setattr_(mod, name, _replay.Programs())
    setattr_(torch._C, "_cuda_getDevice", lambda: -1)  # what ``get_device()`` says of a CPU tensor
    setattr_(torch._C, "_cuda_getCurrentRawStream", lambda index: 7)
    setattr_(torch._C, "_cuda_isCurrentStreamCapturing", lambda: False)
    setattr_(KB, "_zeroed_counters", lambda n, device: _replay.scratch(counters, keep=True))
