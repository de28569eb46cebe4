"""What every benchmark suite shares: timing, the copy ceiling, fewest-bytes counts, records, tables, plots.

How a figure is made (``../shared/BENCHMARKS.md``'s protocol)
----------------------------------------------------------------
* **Time.** On CUDA, ``triton.testing.do_bench(fn, warmup, rep, return_mode="median")``: it zeroes a 256 MiB
  buffer before every timed call, so no input starts in L2 (the suites therefore need no buffer rotation),
  times each call with CUDA events, and the median is reported. On a CPU (used only to test this harness:
  such figures are never reported as speed) the median of ``time.perf_counter`` over repeated calls.
* **Host time.** On CUDA each record also gets ``host_ms``: the median host (CPU) time of one call over
  ``HOST_CALLS`` back-to-back calls (nothing waits on the GPU between them: the Python and launch work alone).
  Where it reaches ``HOST_BOUND_FRACTION`` of the measured time, tables mark the cell with ``HOST_MARK``: calls
  like it back to back (a training loop) keep the GPU waiting on the host. Inside ``do_bench`` the L2 flush before
  each call hides host time up to the flush's own duration (~70 us for 256 MiB on an H200); past that, the figure
  itself includes host time. Host speed differs between machines (several-fold for the same Python code), which
  moves the marked rows between runs on different machines.
* **GPU time alone** (``graph_ms``, the suites' ``ᵍ`` figures; ``--no-graphs`` skips them). The same call
  captured in a CUDA graph on a side stream (a backward after a forward of its own there) and its replays timed
  as above: no host time is in it, so it tells a slow kernel from a slow host where the first figure cannot.
* **Copy ceiling.** ``dst.copy_(src)`` on a 1 GiB tensor in the same process; bytes = read + written.
* **Same-bytes reference** (``REFERENCE``, the norm and BatchNorm suites). torch's copy kernel moving the op's
  tensors at the op's size under the same timer, counted with the op's bytes: the ceiling at that size, not a peer
  (``speedup`` and the report's best peer leave it out).
* **Bytes.** The fewest the op must move, the same count for every implementation (formulas below);
  GB/s = bytes / median time, and % of the copy bandwidth.

Fewest bytes (``docs/math.md`` derives the same counts). ``M`` rows of ``N`` elements (LayerNorm/RMSNorm),
``E`` elements and ``C`` channels (BatchNorm); ``s_x`` the element size of x (and y, dy, dx), ``s_p`` of the
parameters and running statistics; statistics saved for backward are float32 (4 bytes).

LayerNorm (``n_params`` = 2 with weight and bias, ``n_stats`` = 2: mean and rstd) and RMSNorm (``n_params``
= 1, ``n_stats`` = 1: rstd)::

    forward   read x, write y              2·M·N·s_x
              read the parameters          + n_params·N·s_p
              write the saved statistics   + n_stats·M·4
              fused residual: read r, write h = x + r      + M·N·(s_r + s_h)
    backward  read x, dy, write dx         3·M·N·s_x
              read γ, the statistics       + N·s_p + n_stats·M·4
              write dγ (and dβ)            + n_params·N·s_p
              fused residual: read h instead of x, and read dh as well; dx and d(residual) are one value,
              written once                 M·N·(2·s_h + 2·s_x) instead of 3·M·N·s_x

BatchNorm (statistics per channel)::

    train forward   read x, write y            2·E·s_x
                    read γ, β                  + 2·C·s_p
                    read and write running mean and variance   + 4·C·s_p
                    write the saved mean and invstd            + 2·C·4
    train backward  read x, dy, write dx       3·E·s_x
                    read γ, saved mean/invstd  + C·s_p + 2·C·4
                    write dγ, dβ               + 2·C·s_p
    eval forward    read x, write y            2·E·s_x
                    read γ, β, running mean and variance       + 4·C·s_p
    frozen backward read x, dy, write dx       3·E·s_x       (dγ = Σ dy·x̂ needs x)
                    read γ, running mean and variance          + 3·C·s_p
                    write dγ, dβ               + 2·C·s_p
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

GIB = 1 << 30
#: Size of the tensor the copy ceiling is measured on (the protocol asks for at least 1 GiB).
COPY_BYTES = GIB
#: Saved statistics (mean, rstd, invstd) are float32.
STAT_BYTES = 4
#: Calls whose host time is measured per record, and the share of the measured time from which it is host-bound.
HOST_CALLS = 25
HOST_BOUND_FRACTION = 0.9
HOST_MARK = "ʰ"
#: What the mark means, for the notes under a table and the report's headline.
HOST_NOTE = (f"{HOST_MARK} host-bound: one call's host time (median of {HOST_CALLS} back-to-back calls) is at least "
             f"{HOST_BOUND_FRACTION:.0%} of the measured time, so back to back such calls keep the GPU waiting; the "
             "figure itself includes host time once that exceeds the timer's L2 flush")

DTYPES = {
    "fp32": torch.float32, "float32": torch.float32,
    "bf16": torch.bfloat16, "bfloat16": torch.bfloat16,
    "fp16": torch.float16, "float16": torch.float16,
    "fp64": torch.float64, "float64": torch.float64,
}
SHORT_DTYPE = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16", torch.float64: "fp64"}


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.bfloat16`` -> ``"bfloat16"`` (the key of the tolerance tables and of the JSON records)."""
    return str(dtype).removeprefix("torch.")


def parse_dtypes(text: str) -> list[torch.dtype]:
    """``"bf16,fp32"`` -> ``[torch.bfloat16, torch.float32]``; raises ValueError naming a bad entry."""
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if item not in DTYPES:
            raise ValueError(f"--dtypes: unknown dtype {item!r} (choose from {', '.join(sorted(DTYPES))})")
        out.append(DTYPES[item])
    if not out:
        raise ValueError("--dtypes: no dtype given")
    return out


def parse_list(text: str, allowed: Sequence[str], what: str, aliases: dict[str, str] | None = None) -> list[str]:
    """A comma-separated choice list, validated against ``allowed`` (order kept, duplicates dropped)."""
    aliases = aliases or {}
    out: list[str] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        item = aliases.get(item, item)
        if item not in allowed:
            raise ValueError(f"{what}: unknown entry {item!r} (choose from {', '.join(allowed)})")
        if item not in out:
            out.append(item)
    if not out:
        raise ValueError(f"{what}: nothing given")
    return out


# ------------------------------------------------------------------------------------------- bytes


def norm_bytes(direction: str, rows: int, n: int, x_size: int, param_size: int, *, n_params: int, n_stats: int,
               weight: bool = True, residual_size: int = 0, residual_out_size: int = 0) -> int:
    """Fewest bytes of a LayerNorm/RMSNorm forward (``"fwd"``) or backward (``"bwd"``); see the module docstring.

    ``n_params`` counts the affine parameters present (LayerNorm: 2 with bias, 1 without; RMSNorm: 1; 0 for
    no affine), ``n_stats`` the float32 statistics per row (LayerNorm 2, RMSNorm 1). ``weight`` says whether
    backward reads γ. A fused residual is described by the element sizes of ``r`` (``residual_size``) and of
    ``h = x + r`` (``residual_out_size``); 0 means no residual.
    """
    if direction not in ("fwd", "bwd"):
        raise ValueError(f"direction must be 'fwd' or 'bwd', got {direction!r}")
    if (residual_size == 0) != (residual_out_size == 0):
        raise ValueError("residual_size and residual_out_size must both be given (or both 0)")
    elems = rows * n
    if direction == "fwd":
        total = 2 * elems * x_size + n_params * n * param_size + n_stats * rows * STAT_BYTES
        return total + elems * (residual_size + residual_out_size)
    if residual_size:
        total = elems * (2 * residual_out_size + 2 * x_size)
    else:
        total = 3 * elems * x_size
    total += (n * param_size if weight else 0) + n_stats * rows * STAT_BYTES
    return total + n_params * n * param_size


def layer_norm_bytes(direction: str, rows: int, n: int, x_size: int, param_size: int, *, weight: bool = True,
                     bias: bool = True, residual_size: int = 0, residual_out_size: int = 0) -> int:
    """Fewest bytes of LayerNorm (mean and rstd saved)."""
    return norm_bytes(direction, rows, n, x_size, param_size, n_params=int(weight) + int(bias), n_stats=2,
                      weight=weight, residual_size=residual_size, residual_out_size=residual_out_size)


def rms_norm_bytes(direction: str, rows: int, n: int, x_size: int, param_size: int, *, weight: bool = True,
                   residual_size: int = 0, residual_out_size: int = 0) -> int:
    """Fewest bytes of RMSNorm (rstd saved)."""
    return norm_bytes(direction, rows, n, x_size, param_size, n_params=int(weight), n_stats=1, weight=weight,
                      residual_size=residual_size, residual_out_size=residual_out_size)


BN_MODES = ("train_fwd", "train_bwd", "eval_fwd", "frozen_bwd")


def batch_norm_bytes(mode: str, numel: int, channels: int, x_size: int, param_size: int) -> int:
    """Fewest bytes of a BatchNorm ``mode`` in ``BN_MODES`` (see the module docstring)."""
    e, c = numel, channels
    if mode == "train_fwd":
        return 2 * e * x_size + 2 * c * param_size + 4 * c * param_size + 2 * c * STAT_BYTES
    if mode == "train_bwd":
        return 3 * e * x_size + c * param_size + 2 * c * STAT_BYTES + 2 * c * param_size
    if mode == "eval_fwd":
        return 2 * e * x_size + 4 * c * param_size
    if mode == "frozen_bwd":
        return 3 * e * x_size + 3 * c * param_size + 2 * c * param_size
    raise ValueError(f"mode must be one of {BN_MODES}, got {mode!r}")


def gbps(nbytes: int, ms: float) -> float:
    """Bytes moved in ``ms`` milliseconds, in GB/s (10^9 bytes per second)."""
    return nbytes / (ms * 1e6)


# ------------------------------------------------------------------------------------------ timing


class Timer:
    """Median time of a call, in milliseconds (see the module docstring for the method)."""

    def __init__(self, device: torch.device | str, warmup_ms: float = 25.0, rep_ms: float = 100.0):
        self.device = torch.device(device)
        self.warmup_ms = float(warmup_ms)
        self.rep_ms = float(rep_ms)

    def describe(self) -> str:
        if self.device.type == "cuda":
            return (f"triton.testing.do_bench(warmup={self.warmup_ms:g} ms, rep={self.rep_ms:g} ms, "
                    "return_mode='median'), 256 MiB L2 flush before each timed call")
        return (f"CPU wall clock (time.perf_counter), median over {self.rep_ms:g} ms of calls; harness test only, "
                "not a speed figure")

    def __call__(self, fn: Callable[[], Any]) -> float:
        if self.device.type == "cuda":
            import triton.testing

            return float(triton.testing.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, return_mode="median"))
        return self._cpu(fn)

    def host_ms(self, fn: Callable[[], Any], calls: int = HOST_CALLS) -> float | None:
        """Median host time of one call (ms) over back-to-back calls, the GPU never waited on; None on a CPU
        (where host time is the whole time)."""
        if self.device.type != "cuda":
            return None
        fn()
        torch.cuda.synchronize(self.device)
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize(self.device)
        return float(statistics.median(times))

    def graph_ms(self, make: Callable[[], Callable[[], Any]]) -> float | None:
        """GPU time alone (ms): the call ``make()`` returns, captured in a CUDA graph and its replays timed like any
        call (L2 flushed before each); None on a CPU. ``make`` runs on the capturing side stream, so it must create
        there whatever the call consumes from its own work (a backward's forward: autograd runs each backward node
        on its forward's stream); the call runs once there before the capture (warm-up)."""
        if self.device.type != "cuda":
            return None
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            fn = make()
            fn()
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn()
        torch.cuda.synchronize(self.device)
        return self(graph.replay)

    def _cpu(self, fn: Callable[[], Any]) -> float:
        fn()
        end = time.perf_counter() + self.warmup_ms / 1e3
        while time.perf_counter() < end:
            fn()
        times: list[float] = []
        end = time.perf_counter() + self.rep_ms / 1e3
        while len(times) < 3 or time.perf_counter() < end:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return float(statistics.median(times))


def copy_bandwidth(device: torch.device | str, timer: Timer, nbytes: int = COPY_BYTES) -> dict:
    """The device's copy bandwidth: ``dst.copy_(src)`` of ``nbytes`` (random float32), read + written.

    Returns ``{"gbps", "ms", "bytes"}`` with ``bytes = 2 * nbytes``.
    """
    device = torch.device(device)
    n = nbytes // 4

    def measure() -> float:
        src = torch.randn(n, device=device, dtype=torch.float32)
        dst = torch.empty_like(src)
        return timer(lambda: dst.copy_(src))

    ms = measure()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    moved = 2 * n * 4
    return {"gbps": gbps(moved, ms), "ms": ms, "bytes": moved}


def compile_in_process(fn):
    """``torch.compile(fn)`` with inductor compiling in this process: its default pool of compile workers starts
    in the background at the first compilation and competes for the host while the next rows are timed (the
    host-bound small rows then read several times slower, fastnorm's, torch.compile's and Liger's alike)."""
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1
    return torch.compile(fn)


# ------------------------------------------------------------------------------- environment, deadlines


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    """HEAD's short hash, with " + local changes" when the package's files differ from it."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=False)
        dirty = subprocess.run(["git", "-C", str(here), "diff", "--quiet", "HEAD", "--", str(here.parent)],
                               capture_output=True, timeout=10, check=False).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return out.stdout.strip() + (" + local changes" if dirty else "")


def source_sha() -> str:
    """First 12 hex digits of the SHA-256 of fastnorm's Python sources (sorted paths and contents): names
    the code that produced a result even where the git metadata is missing or stale."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def environment(device: torch.device | str) -> dict:
    """Where and with what a result was produced: device, versions, date (UTC), peers' versions."""
    import numpy
    import triton

    import fastnorm

    device = torch.device(device)
    env: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device_type": device.type,
        "fastnorm": fastnorm.__version__,
        "git_commit": _git_commit(),
        "source_sha": source_sha(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "cuda": torch.version.cuda,
        "peers": {name: _version(name) for name in ("liger-kernel", "apex", "quack-kernels")},
        "triton_interpret": os.environ.get("TRITON_INTERPRET", "0"),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(device_name=props.name, sm_count=props.multi_processor_count,
                   memory_gib=round(props.total_memory / GIB, 1), capability=f"{props.major}.{props.minor}")
    else:
        env.update(device_name=platform.processor() or platform.machine(), cpu_count=os.cpu_count())
    return env


class Deadline:
    """A wall-clock budget: ``expired()`` once ``seconds`` have passed since creation (None: never)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def expired(self) -> bool:
        return self.seconds is not None and self.elapsed() > self.seconds


def free_device_bytes(device: torch.device) -> int | None:
    """Free memory on a CUDA device (None on CPU: not checked there)."""
    if device.type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(device)
    return int(free)


def release(device: torch.device) -> None:
    """Return cached blocks to the device after a case, so the next one starts from free memory."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()


def cuda_context_lost(exc: BaseException) -> bool:
    """Whether ``exc`` is a sticky CUDA error after which nothing more can run in this process (not the words
    "device-side assert" alone: torch ends every CUDA error's message with a hint about device-side assertions)."""
    text = str(exc).lower()
    return any(s in text for s in ("illegal memory access", "unspecified launch failure", "illegal instruction",
                                   "device-side assert triggered", "misaligned address", "cuda error: an illegal"))


def short_error(exc: BaseException, limit: int = 160) -> str:
    """``Type: first line of the message``, trimmed — what a table footnote and the JSON keep."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Measurer:
    """Times calls into records and keeps a suite going through failures.

    Each ``time``/``fail``/``skip`` fills one record and advances the progress bar. An exception becomes an
    ``"error"`` record (an out-of-memory frees the cache first); a sticky CUDA error marks the context lost,
    after which every further record is ``"skipped"`` with that reason, as are all records once the
    deadline has passed — so a suite always finishes, in bounded time, and writes what it measured.
    """

    def __init__(self, timer: Timer, copy_gbps: float, deadline: Deadline, bar=None, graphs: bool = True):
        self.timer = timer
        self.copy_gbps = copy_gbps
        self.deadline = deadline
        self.bar = bar
        self.graphs = graphs
        self.lost: str | None = None

    def blocked(self) -> str | None:
        if self.lost:
            return self.lost
        if self.deadline.expired():
            return f"time budget of {self.deadline.seconds:g} s used up (--time-budget)"
        return None

    def _tick(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def skip(self, rec: dict, reason: str) -> dict:
        rec.update(status="skipped", reason=reason)
        self._tick()
        return rec

    def fail(self, rec: dict, exc: BaseException, tick: bool = True) -> dict:
        if isinstance(exc, torch.cuda.OutOfMemoryError):
            rec.update(status="error", error="out of memory")
            torch.cuda.empty_cache()
        else:
            rec.update(status="error", error=short_error(exc))
            if cuda_context_lost(exc):
                self.lost = f"CUDA context lost after an error in {rec.get('impl')} at {rec.get('label')}"
        if tick:
            self._tick()
        return rec

    def time(self, rec: dict, nbytes: int, fn: Callable[[], Any],
             make: Callable[[], Callable[[], Any]] | None = None) -> dict:
        """Time ``fn`` (and its host time) into ``rec``; with ``make`` (a factory of the same call, see
        ``Timer.graph_ms``) also its GPU time alone, unless ``graphs`` is off. A failed capture leaves the record
        "ok" with ``graph_error``: the call itself was timed."""
        reason = self.blocked()
        if reason:
            return self.skip(rec, reason)
        try:
            ms = self.timer(fn)
            host = self.timer.host_ms(fn)
        except Exception as exc:  # recorded, and the suite goes on
            return self.fail(rec, exc)
        finish_record(rec, ms, nbytes, self.copy_gbps, host)
        if make is not None and self.graphs:
            try:
                graph = self.timer.graph_ms(make)
            except Exception as exc:
                oom = isinstance(exc, torch.cuda.OutOfMemoryError)
                rec["graph_error"] = "out of memory" if oom else short_error(exc)
                if oom:
                    torch.cuda.empty_cache()
                elif cuda_context_lost(exc):
                    self.lost = f"CUDA context lost after capturing {rec.get('impl')} at {rec.get('label')}"
            else:
                if graph is not None:
                    finish_graph(rec, graph, self.copy_gbps)
        self._tick()
        return rec


def rel_err(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Normwise ``max|a - e| / max|e|`` on the device (NaN anywhere gives inf): a sanity check of a peer's output."""
    a, e = actual.detach().float(), expected.detach().float()
    if a.shape != e.shape:
        return math.inf
    if a.numel() == 0:
        return 0.0
    diff = (a - e).abs().max().item()
    scale = max(e.abs().max().item(), 1e-30)
    err = diff / scale
    return err if math.isfinite(err) else math.inf


# ------------------------------------------------------------------------------------------ progress


def progress(total: int, desc: str):
    """A tqdm bar on stderr; refreshed rarely when stderr is not a terminal (logs stay short)."""
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, file=sys.stderr, mininterval=0.5 if tty else 20.0, dynamic_ncols=tty,
                ncols=None if tty else 100, leave=True)


# ------------------------------------------------------------------------------------ records and JSON


def record(**fields: Any) -> dict:
    """One measurement: ``status`` is ``"ok"`` (with ``ms``, ``bytes``, ``gbps``, ``pct_copy``), ``"error"``
    (with ``error``) or ``"skipped"`` (with ``reason``)."""
    fields.setdefault("status", "ok")
    return fields


def _rates(nbytes: int, ms: float, copy_gbps: float) -> tuple[float, float | None]:
    """(GB/s, % of the copy bandwidth) of moving ``nbytes`` in ``ms``."""
    rate = gbps(nbytes, ms)
    return rate, 100.0 * rate / copy_gbps if copy_gbps > 0 else None


def finish_record(rec: dict, ms: float, nbytes: int, copy_gbps: float, host_ms: float | None = None) -> dict:
    rate, pct = _rates(nbytes, ms, copy_gbps)
    rec.update(status="ok", ms=ms, bytes=nbytes, gbps=rate, pct_copy=pct)
    if host_ms is not None:
        rec.update(host_ms=host_ms, host_bound=host_ms >= HOST_BOUND_FRACTION * ms)
    return rec


def finish_graph(rec: dict, ms: float, copy_gbps: float) -> dict:
    """Add the GPU time alone (``Timer.graph_ms``) to a timed record: ``graph_ms``, ``graph_gbps``,
    ``graph_pct_copy`` on the record's bytes."""
    rate, pct = _rates(rec["bytes"], ms, copy_gbps)
    rec.update(graph_ms=ms, graph_gbps=rate, graph_pct_copy=pct)
    return rec


def host_bound(rec: dict | None) -> bool:
    """The record's time was set by the host (see the module docstring); False where not measured."""
    return bool(rec and rec.get("status") == "ok" and rec.get("host_bound"))


def write_json(doc: dict, path: Path | str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=False, default=_json_default) + "\n")
    return path


def read_json(path: Path | str) -> dict:
    return json.loads(Path(path).read_text())


def _json_default(obj: Any):
    if isinstance(obj, (torch.dtype, torch.device)):
        return str(obj).removeprefix("torch.")
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, tuple)):
        return list(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


# -------------------------------------------------------------------------------------------- tables


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A pipe table with columns padded so it reads in a terminal as well as rendered."""
    rows = [list(map(str, r)) for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    out = [line(header), "| " + " | ".join("-" * w for w in widths) + " |"]
    out += [line(r) for r in rows]
    return "\n".join(out)


FASTNORM = "fastnorm"
#: Not a peer: torch's copy kernel moving the same bytes as the op under the same timer (the ceiling at that size).
REFERENCE = "copy"
#: Its name in table headers, plot legends and the report's headline.
REFERENCE_TITLE = "copy, same bytes"
MISMATCH_MARK = "!"
#: Marks a figure of GPU time alone (``Timer.graph_ms``), and what it means, for the notes under a table.
GRAPH_MARK = "ᵍ"
GRAPH_NOTE = (f"{GRAPH_MARK} GPU time alone: the same call captured in a CUDA graph and its replays timed the same "
              "way (L2 flushed before each), so no host time is in it — what a CUDA-graphed step "
              "(torch.compile mode=\"reduce-overhead\", or a captured training step) sees of the op")


def parse_impls(text: str | None, impls: Sequence[str]) -> tuple[list[str], bool]:
    """A suite's ``--impls``: (the implementations asked for, of ``impls``; whether the same-bytes reference is
    measured) — every implementation and the reference when ``text`` is empty."""
    choices = (*impls, REFERENCE)
    names = parse_list(text, choices, "--impls") if text else list(choices)
    return [n for n in names if n != REFERENCE], REFERENCE in names


def ordered_impls(doc: dict, impls: Sequence[str]) -> list[str]:
    """A suite document's table columns: its implementations in ``impls`` order, then the reference."""
    return [i for i in (*impls, REFERENCE) if i in doc["settings"]["impls"]]


#: What the same-bytes reference's forward runs in GPU time (``measure_reference``), as the suites' settings record it;
#: documents without it (before session 29) captured ``y.copy_(x)`` itself.
REFERENCE_CAPTURED_FORWARD = "torch.add(x, 0, out=y)"


def reference_calls(doc: dict, plural: bool = False) -> str:
    """The calls a suite document's same-bytes reference made, for its table's introduction."""
    fwd, bwd = ("forwards", "backwards") if plural else ("forward", "backward")
    captured = doc["settings"].get("reference_captured_forward")
    graph = (f", in GPU time `{captured}`: a captured copy is a graph memcpy node, slower at some sizes"
             if captured else "")
    return f"{fwd} `y.copy_(x)`{graph}{'; ' if captured else ', '}{bwd} `torch.add(x, dy, out=dx)`"


def measure_reference(meter: Measurer, todo: dict, x: torch.Tensor, dy: torch.Tensor,
                      nbytes: Callable[[Any], int], forward: Callable[[Any], bool]) -> None:
    """Fill ``todo`` (key -> record) with the same-bytes reference: ``y.copy_(x)`` where ``forward(key)``, else
    ``torch.add(x, dy, out=dx)``, into one buffer of x's shape and layout, timed by ``meter`` as the
    implementations are, counted with ``nbytes(key)`` (the op's bytes); never checked (it computes something else).

    In GPU time the forward's copy is ``torch.add(x, 0, out=y)``: a captured ``copy_`` becomes a graph memcpy node,
    whose rate depends on the size (H200, NOTES.md session 29: 2754 GB/s at 1 GiB and 2770 at 4.7 GiB where eager
    ``copy_`` and ``add`` both reach 4243-4307; 4275 at 1.2 and 2.3 GiB), while the add is the same kernel in both."""
    try:
        out = torch.empty_like(x)
    except Exception as exc:
        for rec in todo.values():
            meter.fail(rec, exc)
        return
    with torch.no_grad():  # the suites' x requires grad
        for key, rec in todo.items():
            if forward(key):  # the captured call: REFERENCE_CAPTURED_FORWARD
                call, captured = (lambda: out.copy_(x)), (lambda: torch.add(x, 0, out=out))
            else:
                call = captured = lambda: torch.add(x, dy, out=out)
            meter.time(rec, nbytes(key), call, lambda captured=captured: captured)


def _impl_title(impl: str) -> str:
    """What a table header or plot legend calls ``impl``."""
    return REFERENCE_TITLE if impl == REFERENCE else impl


def _cell(rec: dict | None) -> str:
    if rec is None:
        return ""
    if rec["status"] == "ok":
        pct = rec.get("pct_copy")
        bw = f"{rec['gbps']:.0f}" if rec["gbps"] >= 100 else f"{rec['gbps']:.3g}"
        text = f"{bw} ({pct:.0f}%)" if pct is not None else bw
        text += (HOST_MARK if host_bound(rec) else "") + (MISMATCH_MARK if rec.get("mismatch") else "")
        if rec.get("graph_pct_copy") is not None:
            text += f" · {rec['graph_pct_copy']:.0f}%{GRAPH_MARK}"
        return text
    if rec["status"] == "error":
        return "error"
    return "–"


def speedup(recs: dict[str, dict], key: str = "ms") -> tuple[float, str] | None:
    """``(best peer time / fastnorm time, best peer)`` among the measured ones (not ``REFERENCE``), or None;
    ``key="graph_ms"`` compares GPU times alone, among the records that have one."""
    mine = recs.get(FASTNORM)
    if mine is None or mine["status"] != "ok" or mine.get(key) is None:
        return None
    peers = [(r[key], name) for name, r in recs.items()
             if name not in (FASTNORM, REFERENCE) and r["status"] == "ok" and r.get(key) is not None]
    if not peers:
        return None
    ms, name = min(peers)
    return ms / mine[key], name


def _speedup_cell(recs: dict[str, dict]) -> str:
    """"1.20× (torch)", then the speed-up on GPU times alone where measured ("· 1.45×ᵍ", naming its peer when
    another one is the fastest there)."""
    s, g = speedup(recs), speedup(recs, "graph_ms")
    text = f"{s[0]:.2f}× ({s[1]})" if s else "–"
    if g:
        text += f" · {g[0]:.2f}×{GRAPH_MARK}" + (f" ({g[1]})" if not s or g[1] != s[1] else "")
    return text


def perf_table(records: Sequence[dict], row_key: Callable[[dict], str], impls: Sequence[str],
               row_header: str = "shape") -> str:
    """Rows by ``row_key`` (in first-seen order), a column of "GB/s (% of copy)" per implementation (and for
    ``REFERENCE``; then the % of GPU time alone where measured), and the speed-up of fastnorm over the best measured
    peer (and on GPU times). Errors and skips are listed under the table."""
    rows: dict[str, dict[str, dict]] = {}
    for r in records:
        rows.setdefault(row_key(r), {})[r["impl"]] = r
    present = [i for i in impls if any(i in v for v in rows.values())]
    graphed = {i for i in present if any(v.get(i, {}).get("graph_ms") is not None for v in rows.values())}
    header = [row_header, *[f"{_impl_title(i)} GB/s (% copy)" + (f" · %{GRAPH_MARK}" if i in graphed else "")
                            for i in present]]
    has_fast = FASTNORM in present and any(i not in (FASTNORM, REFERENCE) for i in present)
    if has_fast:
        header.append("fastnorm vs best peer")
    body = []
    for key, recs in rows.items():
        line = [key, *[_cell(recs.get(i)) for i in present]]
        if has_fast:
            line.append(_speedup_cell(recs))
        body.append(line)
    text = markdown_table(header, body)
    notes = table_notes(records)
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def table_notes(records: Sequence[dict]) -> list[str]:
    """One line per distinct error / skip reason / mismatch / failed capture, naming the implementation; then what
    the host-bound and GPU-time marks mean, where the table has them."""
    seen: dict[str, list[str]] = {}
    for r in records:
        msgs = []
        if r["status"] == "error":
            msgs.append(f"error in {r['impl']}: {r.get('error', '?')}")
        elif r["status"] == "skipped":
            msgs.append(f"– {r['impl']} not measured: {r.get('reason', '?')}")
        elif r.get("mismatch"):
            msgs.append(f"{MISMATCH_MARK} {r['impl']}: output differs from the fp32 torch result beyond the "
                        f"tolerance (max rel. err {r['mismatch']:.2g})")
        if r.get("graph_error"):
            msgs.append(f"{GRAPH_MARK} {r['impl']} not captured: {r['graph_error']}")
        for msg in msgs:
            seen.setdefault(msg, []).append(str(r.get("label", "")))
    out = []
    for msg, labels in seen.items():
        where = ", ".join(dict.fromkeys(x for x in labels if x))
        out.append(f"- {msg}" + (f" (at {where})" if where and len(labels) < 6 else f" ({len(labels)} cases)"))
    bound: dict[str, int] = {}
    for r in records:
        if host_bound(r):
            bound[r["impl"]] = bound.get(r["impl"], 0) + 1
    if bound:
        out.append(f"- {HOST_NOTE} (cells: {', '.join(f'{impl} {k}' for impl, k in bound.items())})")
    if any(r.get("graph_ms") is not None for r in records):
        out.append(f"- {GRAPH_NOTE}")
    return out


# --------------------------------------------------------------------------------------------- plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path | str, title: str | None = None) -> Path:
    """Lay out ``fig`` (with a super-title), write it as a PNG at ``path`` (folders made) and close it."""
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def run_cli(p, args, run: Callable) -> int:
    """The single-process suites' command line after parsing: ``run(args)`` (its ValueError becomes a usage
    error); exit status 1 when fastnorm failed at any case or nothing was measured. Without CUDA, only
    custom ``--shapes`` run (to test the harness on the CPU)."""
    if torch.device(args.device).type == "cpu" and not args.shapes:
        print("No CUDA device: the benchmarks measure GPU memory bandwidth and need one. (--device cpu with "
              "--shapes runs the harness on the CPU, to test it.)")
        return 1
    try:
        doc = run(args)
    except ValueError as exc:
        p.error(str(exc))
    bad = [r for r in doc["records"] if r["impl"] == FASTNORM and r["status"] == "error"]
    return 1 if bad or not any(r["status"] == "ok" for r in doc["records"]) else 0


def _style(impl: str) -> dict:
    styles = {FASTNORM: dict(color="#d62728", linewidth=2.4, marker="o", zorder=5),
              "torch": dict(color="#1f77b4", marker="s"), "compile": dict(color="#2ca02c", marker="^"),
              "liger": dict(color="#9467bd", marker="D"), "apex": dict(color="#8c564b", marker="v"),
              "quack": dict(color="#ff7f0e", marker="P"),
              REFERENCE: dict(color="#7f7f7f", linestyle="--", marker=".", zorder=1)}
    return {"markersize": 4, "linewidth": 1.4, **styles.get(impl, {})}


def plot_sweep(panels: Sequence[tuple[str, Sequence[dict]]], copy_gbps: float, path: Path | str, title: str) -> Path:
    """OneFlow-style sweep plots: for each ``(panel title, records)`` a row of two axes, time (µs) vs N and
    GB/s vs N, one line per implementation (``REFERENCE`` grey, dashed: the ceiling at each size), the copy
    bandwidth as a horizontal line. Records need ``n``, ``impl``, ``status`` and, when ok, ``ms`` and ``gbps``."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(panels), 2, figsize=(12, 3.6 * len(panels)), squeeze=False)
    for row, (name, recs) in enumerate(panels):
        ax_t, ax_b = axes[row]
        impls = list(dict.fromkeys(r["impl"] for r in recs))
        for impl in impls:
            pts = sorted((r["n"], r["ms"], r["gbps"]) for r in recs if r["impl"] == impl and r["status"] == "ok")
            if not pts:
                continue
            ns, ms, bw = zip(*pts, strict=True)
            ax_t.plot(ns, [m * 1e3 for m in ms], label=_impl_title(impl), **_style(impl))
            ax_b.plot(ns, bw, label=_impl_title(impl), **_style(impl))
        ax_b.axhline(copy_gbps, color="black", linestyle="--", linewidth=1, label=f"copy {copy_gbps:.0f} GB/s")
        for ax in (ax_t, ax_b):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (row length)")
            ax.grid(True, which="both", alpha=0.3)
        ax_t.set_yscale("log")
        ax_t.set_ylabel("median time (µs)")
        ax_b.set_ylabel("GB/s (fewest bytes)")
        ax_b.set_ylim(bottom=0)
        ax_t.set_title(f"{name}: time")
        ax_b.set_title(f"{name}: bandwidth")
        ax_b.legend(fontsize=8, loc="best")
    return save_figure(fig, path, title)


def plot_bars(panels: Sequence[tuple[str, Sequence[dict]]], path: Path | str, title: str) -> Path:
    """Grouped bars of % of copy bandwidth: for each ``(panel title, records)`` one axis, a group per
    ``label`` (shape), a bar per implementation (over it, its GPU time alone as a black outline where measured),
    100% (the copy ceiling) as a line."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.4 * len(panels)), squeeze=False)
    for (name, recs), ax in zip(panels, axes[:, 0], strict=True):
        labels = list(dict.fromkeys(r["label"] for r in recs))
        impls = list(dict.fromkeys(r["impl"] for r in recs))
        width = 0.8 / max(len(impls), 1)
        graphed = False
        for k, impl in enumerate(impls):
            vals, gvals = [], []
            for lab in labels:
                hit = [r for r in recs if r["label"] == lab and r["impl"] == impl and r["status"] == "ok"]
                vals.append(hit[0]["pct_copy"] if hit and hit[0].get("pct_copy") is not None else 0.0)
                gvals.append(hit[0].get("graph_pct_copy") or 0.0 if hit else 0.0)
            xs = [i + (k - (len(impls) - 1) / 2) * width for i in range(len(labels))]
            ax.bar(xs, vals, width=width, label=impl, color=_style(impl).get("color"))
            if any(gvals):
                ax.bar(xs, gvals, width=width, fill=False, edgecolor="black", linewidth=0.8,
                       label=None if graphed else f"GPU time alone ({GRAPH_MARK})")
                graphed = True
        ax.axhline(100, color="black", linestyle="--", linewidth=1, label="copy")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("% of copy bandwidth")
        ax.set_title(name)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, ncol=len(impls) + 1, loc="upper right")
    return save_figure(fig, path, title)


# ------------------------------------------------------------------------------------- optional peers


def try_import(module: str) -> tuple[Any, str | None]:
    """``(module, None)``, or ``(None, reason)`` when it cannot be imported (any exception: a peer that is
    installed but broken must not stop the suite)."""
    try:
        return importlib.import_module(module), None
    except Exception as exc:  # any failure of an optional peer means "not available"
        return None, short_error(exc)


def add_run_arguments(p) -> None:
    """The flags every single-process suite takes: where results go, time budgets, timing, the copy
    ceiling's size, the seed, plots and the device (each suite adds its own shapes, dtypes and peers)."""
    p.add_argument("--out", default="bench-results", help="directory for the JSON and plots")
    p.add_argument("--time-budget", type=float, help="seconds after which remaining measurements are skipped")
    p.add_argument("--compile-budget", type=float, help="seconds of torch.compile compilation allowed")
    p.add_argument("--warmup-ms", type=float, default=25.0)
    p.add_argument("--rep-ms", type=float, default=100.0)
    p.add_argument("--copy-mib", type=float, default=1024.0, help="size of the copy-bandwidth tensor (MiB)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--no-graphs", action="store_true",
                   help="skip the GPU-time figures (each call captured in a CUDA graph, its replays timed)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                   help="cuda (default when present); cpu only tests the harness")
