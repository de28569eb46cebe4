"""Every kernel specialization the host code launches compiles for sm_90 (see ``tests/sm90_compile.py``).

The interpreter tests run the kernels' Python and never Triton's compiler, so a kernel can pass all of them
and still fail to compile on the GPU (a variable with different types in the two branches of an ``if`` did,
in session 6). This runs the compiler's checks on a CPU machine, in a child process without the interpreter.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def launched_kernels() -> list[str]:
    """The kernel of every launcher in the kernel modules (``_Launcher`` instances at module level)."""
    from fastnorm.kernels import _launch, batch_norm, layer_norm

    return sorted(v.fn.__name__ for m in (batch_norm, layer_norm) for v in vars(m).values()
                  if isinstance(v, _launch._Launcher))


def test_every_launched_specialization_compiles_for_sm90():
    pytest.importorskip("triton.backends.nvidia")
    env = dict(os.environ, TRITON_INTERPRET="0", OMP_NUM_THREADS="1")
    env.pop("FASTNORM_COMPILE_ONLY", None)  # every kernel
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("FASTNORM_COMPILE_WORKERS", "2")
    proc = subprocess.run([sys.executable, str(HERE / "sm90_compile.py")], env=env, capture_output=True, text=True,
                          timeout=1500)
    out = proc.stdout + proc.stderr
    summary = [line for line in out.splitlines() if line.startswith("SUMMARY")]
    assert proc.returncode == 0 and summary, out[-6000:]
    recorded = re.search(r"recorded (\d+) distinct specializations", out)
    assert recorded and int(recorded.group(1)) >= 1000, out[-2000:]  # the cases reach every path (1251 at writing)
    kernels = launched_kernels()
    assert len(kernels) >= 13, kernels
    for kernel in kernels:  # every launcher's kernel was recorded
        assert f"'{kernel}':" in out, kernel


def test_spatial_size_as_an_argument_keeps_the_layouts():
    """BatchNorm's kernels with the spatial size as an argument (the tile kernels and the flat apply) compile to the
    layouts (so the summation order) of the kernels with it compiled in (``tests/spatial_layouts.py``)."""
    pytest.importorskip("triton.backends.nvidia")
    env = dict(os.environ, TRITON_INTERPRET="0", OMP_NUM_THREADS="1")
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, str(HERE / "spatial_layouts.py")], env=env, capture_output=True, text=True,
                          timeout=1200)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "SUMMARY" in out, out[-6000:]

