"""Helpers shared by the tests: conversions to the float64 reference and dtype-aware comparison."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from fastnorm.reference.tolerances import OUTPUT_TOL, PARAM_GRAD_TOL, max_rel_err

DTYPE_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
               torch.float64: "float64"}


def to_np64(t: torch.Tensor) -> np.ndarray:
    """The exact values of ``t`` as a float64 NumPy array (bf16/fp16 upcast losslessly)."""
    return t.detach().to("cpu", torch.float64).numpy()


def assert_close(what: str, actual: torch.Tensor, expected: np.ndarray, dtype: torch.dtype,
                 param_grad: bool = False, terms_scale: float | None = None) -> None:
    """``actual`` matches the float64 ``expected`` within the tolerance of ``dtype``.

    ``terms_scale`` (see ``sum_terms_scale``) is the size of the terms a sum was made of: the error is then measured
    against the larger of it and ``max|expected|``. A sum of random-sign terms can cancel to nearly zero (one channel's
    dγ, say), and no float32 sum is exact relative to what is left; float32 summation errs relative to its terms.
    """
    tol = (PARAM_GRAD_TOL if param_grad else OUTPUT_TOL)[DTYPE_NAMES[dtype]]
    a, e = to_np64(actual), np.asarray(expected, dtype=np.float64)
    err = max_rel_err(a, e, terms_scale or 0.0)
    assert err <= tol, f"{what}: max relative error {err:.3g} > tolerance {tol:g} ({dtype}){_worst(a, e)}"


def sum_terms_scale(terms: np.ndarray, axes: tuple[int, ...]) -> float:
    """The largest root-sum-square, over the outputs, of the ``terms`` each output sums along ``axes``: the size a sum
    of random-sign terms has (what ``assert_close``'s ``terms_scale`` takes)."""
    if terms.size == 0:
        return 0.0
    return float(np.sqrt(np.nanmax(np.sum(np.square(terms), axis=axes))))


def _worst(a: np.ndarray, e: np.ndarray) -> str:
    """Where a failed comparison is worst (index, actual, expected): a rare failure on the GPU shows its cause."""
    if a.shape != e.shape or a.size == 0:
        return ""
    diff = np.abs(np.nan_to_num(a - e, nan=np.inf))
    i = np.unravel_index(int(np.argmax(diff)), a.shape)
    return f"; worst at {tuple(int(k) for k in i)}: {float(a[i])!r} vs {float(e[i])!r}"


def poisoned_like(t: torch.Tensor) -> torch.Tensor:
    """A tensor shaped like ``t`` filled with NaN, so any element a kernel fails to write shows."""
    return torch.full_like(t, float("nan"))


def launch_ranks(script: Path, args: list[str], world: int, interpret: bool, tmp_path: Path, result_tag: str,
                 timeout: float) -> tuple[list[str], list[dict | None]]:
    """Run ``python script *args`` as ``world`` gloo ranks and collect what each reports.

    Each rank gets RANK, WORLD_SIZE, FASTNORM_TEST_INIT (a file store in ``tmp_path``), TRITON_INTERPRET
    ("1" with ``interpret``) and ``src``/``tests`` on PYTHONPATH, logs to ``tmp_path/rank{r}.log``, and prints
    one line ``result_tag + json`` with a ``failures`` list. All ranks are killed once ``timeout`` seconds
    have passed, so a hung collective fails the test instead of hanging it.

    Returns ``(problems, results)``: the problems found (a rank with no result, its log's tail; a non-zero
    exit; every failure a rank reported) and each rank's parsed result (None where it printed none).
    """
    tests_dir = Path(__file__).resolve().parent
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TRITON_INTERPRET="1" if interpret else "0",
               WORLD_SIZE=str(world), FASTNORM_TEST_INIT=f"file://{tmp_path / 'store'}",
               GLOO_SOCKET_IFNAME=env.get("GLOO_SOCKET_IFNAME", "lo"))
    paths = (str(tests_dir.parent / "src"), str(tests_dir), env.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    logs = [tmp_path / f"rank{r}.log" for r in range(world)]
    procs = []
    for r in range(world):
        with open(logs[r], "w") as f:
            procs.append(subprocess.Popen([sys.executable, str(script), *args], env={**env, "RANK": str(r)},
                                          stdout=f, stderr=subprocess.STDOUT))
    deadline = time.monotonic() + timeout
    timed_out = False
    for p in procs:
        try:
            p.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            timed_out = True
            break
    if timed_out:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
    problems: list[str] = []
    results: list[dict | None] = []
    for r, (p, log) in enumerate(zip(procs, logs, strict=True)):
        text = log.read_text()
        lines = [ln for ln in text.splitlines() if ln.startswith(result_tag)]
        if not lines:
            tail = "\n".join(text.splitlines()[-30:])
            problems.append(f"rank {r}: exit code {p.returncode}, no result{' (timed out)' if timed_out else ''}\n"
                            f"{tail}")
            results.append(None)
            continue
        res = json.loads(lines[-1][len(result_tag):])
        results.append(res)
        problems += [f"rank {r}: {msg}" for msg in res["failures"]]
        if p.returncode != 0:
            problems.append(f"rank {r}: exit code {p.returncode}")
    return problems, results


def check_worker_dying_on_crash_variant(case, device: str):
    """A ``fastnorm.check`` worker (module level, so spawned processes can import it) whose process dies on a
    case with variant ``"crash"`` and runs every other case normally."""
    import os

    import torch

    from fastnorm import check

    if case.variant == "crash":
        os._exit(3)
    return check.run_case(case, torch.device(device))


def watch_replays(monkeypatch) -> list:
    """Count replayed calls (``kernels._replay.Program.run``) into the list returned, and NaN-fill what replays
    allocate their outputs with (``torch.empty_strided``), so that an output a replayed launch did not write
    shows."""
    from fastnorm.kernels import _replay

    real_empty, real_run, replays = torch.empty_strided, _replay.Program.run, []
    monkeypatch.setattr(torch, "empty_strided", lambda *a, **k: real_empty(*a, **k).fill_(float("nan")))
    monkeypatch.setattr(_replay.Program, "run", lambda self, *a: replays.append(1) or real_run(self, *a))
    return replays


def forget_replays() -> None:
    """Drop the launches recorded for replay (``kernels._replay``): a test that patches a kernel module's internals
    between two calls of one signature needs the second call made afresh, which on CUDA would replay the first's
    launches."""
    from fastnorm.kernels import config

    config.generation += 1


def channels_last_blocks(monkeypatch, cb: int) -> None:
    """Channels-last tiles of exactly ``cb`` channels in every plan kind: config.BN_CL_CB set to it, and the
    settings that widen it off (the sums pass's own plan, BN_CL_SUMS; the one-pass kinds' rows of
    BN_CL_STREAM_ROW_BYTES)."""
    from fastnorm.kernels import config

    monkeypatch.setattr(config, "BN_CL_CB", {"fused": cb, "stream": cb, "sums": cb})
    monkeypatch.setattr(config, "BN_CL_SUMS", None)
    monkeypatch.setattr(config, "BN_CL_STREAM_ROW_BYTES", 0)


def frozen_flat_everywhere() -> dict:
    """config.BN_FROZEN_FLAT taking the frozen flat backward at every size and batch, in blocks of 64 offsets (2
    warps), a program as few as one image."""
    from fastnorm.kernels import config

    return {**config.BN_FROZEN_FLAT, "min_numel": 0, "min_images": 1, "images": 1, "block": 64, "warps": 2,
            "min_per_sm": 0}


def rows_everywhere(name: str) -> dict:
    """config.<name> (BN_FROZEN_ROWS, BN_STATS_ROWS or BN_SUMS_ROWS) taking its row-strided pass at every size (and
    channel count), in tiles of 64 elements (2 warps), a share as few as one tile."""
    from fastnorm.kernels import config

    f = {**getattr(config, name), "min_numel": 0, "block": 64, "warps": 2, "steps": 1}
    if "channels" in f:
        f["channels"] = ((1, 1 << 30),)
    return f


def peer_buffers(c: int, world: int, device):
    """``world`` ranks' symmetric buffers simulated in one process: fresh buffers with the exchange's layout,
    and each rank's ``Peers`` (the buffers' addresses, in rank order)."""
    from fastnorm import _symm_exchange as ex
    from fastnorm.kernels.batch_norm import Peers

    sums_at, flags_at, words = ex.layout(c, world)
    bufs = [torch.zeros(words, device=device) for _ in range(world)]
    ptrs = torch.tensor([b.data_ptr() for b in bufs], dtype=torch.int64, device=device)
    peers = [Peers(ptrs, b[flags_at:].view(torch.int32), r, world, flags_at, sums_at) for r, b in enumerate(bufs)]
    return bufs, peers
