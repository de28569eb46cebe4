"""``fastnorm report [--out DIR] [--quick]``: the evidence on this machine, in one directory.

1. Detects the device and says where the kernels run (``fastnorm._runtime.describe()``).
2. Runs ``fastnorm check`` (every op against the float64 reference, forward and backward) in this process.
3. On a CUDA GPU, runs the benchmark suites — LayerNorm, RMSNorm, BatchNorm, and SyncBatchNorm when launched
   under ``torchrun`` with ``WORLD_SIZE`` > 1 — each in its own subprocess (``python -m fastnorm.bench SUITE``),
   with its own time budget and a hard timeout, so a crash, a lost CUDA context or a hang in one suite costs
   only that suite. ``--quick`` takes a few minutes; the full run stays under 30 minutes on one H100/H200.
4. Writes ``DIR/report.md`` (device, versions, date; the correctness table; per op the GB/s and % of copy
   bandwidth of fastnorm and each peer with the speed-up over the best peer; the plots), the PNG plots, and
   the raw JSON (``check.json``, ``SUITE.json``).

Without a GPU it says so, runs the check (through the Triton interpreter when ``TRITON_INTERPRET=1``, else
PyTorch's CPU path) and points to the committed GPU results in ``benchmarks/report/``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

from . import check as check_mod
from .bench import common, targets

#: Where the lead commits a report produced on a GPU (relative to the repository root).
COMMITTED_REPORT = "benchmarks/report/report.md"
NORM_SUITES = ("layernorm", "rmsnorm")
LOCAL_SUITES = ("layernorm", "rmsnorm", "batchnorm")
#: Each suite's time budget (seconds) in the report; a suite is killed this long past its budget.
SUITE_BUDGET = {"full": {"layernorm": 330.0, "rmsnorm": 330.0, "batchnorm": 450.0, "syncbn": 300.0},
                "quick": {"layernorm": 60.0, "rmsnorm": 60.0, "batchnorm": 90.0, "syncbn": 120.0}}
GRACE_S = 150.0
#: Columns of the headline table (the N of the peers' published figures).
HEADLINE_N = (32, 128, 256, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
PEER_LETTER = {"torch": "e", "compile": "c", "liger": "l", "apex": "a", "quack": "q"}


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def committed_report_line() -> str:
    """A sentence pointing to the committed GPU report (with its device and date when it is here)."""
    path = repo_root() / COMMITTED_REPORT
    if not path.is_file():
        return f"The committed GPU results are in the repository at `{COMMITTED_REPORT}` (with their plots and JSON)."
    facts = []
    for line in path.read_text().splitlines()[:20]:
        if line.startswith(("- Device:", "- Devices:", "- Date:")):
            facts.append(line[2:].strip())
    return (f"The committed GPU results are in `{COMMITTED_REPORT}`" + (f" ({'; '.join(facts)})" if facts else "")
            + ".")


# ------------------------------------------------------------------------------------------- suites


def _suite_command(suite: str, out: Path, quick: bool, budget: float) -> list[str]:
    cmd = [sys.executable, "-m", "fastnorm.bench", suite, "--out", str(out)]
    if suite == "syncbn":  # fixed iteration counts (every rank must run the same), bounded by the timeout
        return cmd + (["--warmup", "3", "--iters", "10", "--no-stack"] if quick else [])
    return cmd + ["--time-budget", f"{budget:g}"] + (["--quick"] if quick else [])


def _json_name(suite: str) -> str:
    if suite == "syncbn":
        return f"syncbn_{int(os.environ.get('WORLD_SIZE', '1'))}gpu.json"
    return f"{suite}.json"


def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group of ``proc`` (started with ``start_new_session``), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:  # it ended just now
        pass
    proc.wait()


def run_suite(suite: str, out: Path, quick: bool) -> dict:
    """Run one suite in a subprocess; returns ``{"suite", "returncode", "elapsed_s", "doc" | "problem"}``."""
    budget = SUITE_BUDGET["quick" if quick else "full"][suite]
    cmd = _suite_command(suite, out, quick, budget)
    result: dict = {"suite": suite, "json": _json_name(suite), "command": " ".join(cmd[1:]), "budget_s": budget}
    json_path = out / _json_name(suite)
    if json_path.exists():
        json_path.unlink()  # never report a previous run's figures
    print(f"\n=== {suite}: python {result['command']} (budget {budget:g} s)", flush=True)
    t0 = time.monotonic()
    # The suite runs in a session of its own (so that a timeout kills its whole process group), which also means it
    # would outlive this process: on Ctrl-C or SIGTERM (an outer `timeout`) it is killed first, or it would go on
    # using the GPU under whatever runs next.
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_signal) if on_main_thread else None
    proc = None
    try:
        proc = subprocess.Popen(cmd, start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        proc.wait(timeout=budget + GRACE_S)
    except subprocess.TimeoutExpired:
        result["problem"] = f"killed after {budget + GRACE_S:g} s (budget {budget:g} s + {GRACE_S:g} s grace)"
    finally:
        if proc is not None and proc.poll() is None:  # timed out, interrupted or terminated
            _kill_group(proc)
        if on_main_thread:  # a handler not set from Python reads as None: the default then
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    result["returncode"] = proc.returncode
    result["elapsed_s"] = round(time.monotonic() - t0, 1)
    if json_path.exists():
        result["doc"] = common.read_json(json_path)
    else:
        result.setdefault("problem", f"exited with status {proc.returncode} without writing {json_path.name}")
    return result


# -------------------------------------------------------------------------------------------- markdown


#: The headline's figure: % of copy as timed (host time included where it reaches the GPU's), or of GPU time alone.
MAIN, GPU = targets.KEYS["timed"][0], targets.KEYS["gpu"][0]


def _pct(rec: dict | None, key: str = MAIN) -> float | None:
    return rec.get(key) if rec and rec["status"] == "ok" else None


def _pct_text(rec: dict | None, key: str = MAIN) -> str:
    """% of copy, marked when the record's time was set by the host (not GPU times); "–" when not measured."""
    if _pct(rec, key) is None:
        return "–"
    return f"{_pct(rec, key):.0f}" + (common.HOST_MARK if key == MAIN and common.host_bound(rec) else "")


def _headline_cell(recs: dict[str, dict], key: str = MAIN) -> str:
    """"fastnorm / best peer letter" in % of copy (``key``), the timed figures each marked when the host set their
    time (the same-bytes reference is not a peer)."""
    peers = [(_pct(r, key), i) for i, r in recs.items()
             if i not in (common.FASTNORM, common.REFERENCE) and _pct(r, key) is not None]
    text = _pct_text(recs.get(common.FASTNORM), key)
    if peers:
        best = max(peers)[1]
        text += f" / {_pct_text(recs[best], key)} {PEER_LETTER.get(best, best)}"
    return text


def _measured(docs: list[dict | None], key: str) -> bool:
    """Whether any record of ``docs`` has the figure ``key``."""
    return any(r.get(key) is not None for d in docs if d for r in d["records"] if r["status"] == "ok")


def _sweep_by_n(doc: dict, dtype: str, direction: str) -> dict[int, dict[str, dict]]:
    """The (49152, N) sweep's records of one dtype and direction: N -> implementation -> record."""
    by_n: dict[int, dict[str, dict]] = {}
    for r in doc["records"]:
        if r["dtype"] == dtype and r["direction"] == direction and r["group"] == "sweep":
            by_n.setdefault(r["n"], {})[r["impl"]] = r
    return by_n


def headline_norms(docs: dict[str, dict], dtype: str = "bfloat16", key: str = MAIN) -> str | None:
    """% of copy bandwidth (``key``: as timed, or of GPU time alone), fastnorm / best peer (with its letter), over the
    (49152, N) sweep; then a row per direction of the same-bytes reference (``common.REFERENCE``, from the LayerNorm
    run, else the RMSNorm one). None when no run measured ``key``."""
    if not _measured([docs.get(s) for s in NORM_SUITES], key):
        return None
    rows, ns_present = [], set()
    for suite in NORM_SUITES:
        doc = docs.get(suite)
        if not doc:
            continue
        for direction in doc["settings"]["directions"]:
            by_n = _sweep_by_n(doc, dtype, direction)
            cells = {n: _headline_cell(by_n[n], key) for n in HEADLINE_N if n in by_n}
            ns_present.update(cells)
            rows.append((("LN " if suite == "layernorm" else "RMS ") + direction, cells))
    if not rows:
        return None
    measured = [docs[s] for s in NORM_SUITES if docs.get(s) and any(
        r["impl"] == common.REFERENCE for r in docs[s]["records"])]
    for direction in measured[0]["settings"]["directions"] if measured else ():
        by_n = _sweep_by_n(measured[0], dtype, direction)
        cells = {n: _pct_text(by_n[n].get(common.REFERENCE), key) for n in HEADLINE_N if n in by_n}
        if any(c != "–" for c in cells.values()):
            rows.append((f"{common.REFERENCE_TITLE} ({direction})", cells))
    ns = [n for n in HEADLINE_N if n in ns_present]
    body = [[name, *[cells.get(n, "") for n in ns]] for name, cells in rows]
    return common.markdown_table(["op", *map(str, ns)], body)


def headline_bn(doc: dict | None, dtype: str = "bfloat16", key: str = MAIN) -> str | None:
    """% of copy bandwidth (``key``: as timed, or of GPU time alone) per shape and mode, fastnorm / best peer, both
    layouts; None when the run did not measure ``key``."""
    if not doc or not _measured([doc], key):
        return None
    modes = doc["settings"]["modes"]
    from .bench.batchnorm import MODE_TITLES

    # The same-bytes reference as one column: a forward mode's copy / a backward mode's add (each mode's bytes).
    ref_modes = [next((m for m in modes if m.endswith(d)), None) for d in ("fwd", "bwd")]
    with_ref = any(r["impl"] == common.REFERENCE and r["status"] == "ok" for r in doc["records"])
    body = []
    for layout in doc["settings"]["layouts"]:
        by_label: dict[str, dict[str, dict[str, dict]]] = {}
        for r in doc["records"]:
            if r["dtype"] == dtype and r["layout"] == layout:
                by_label.setdefault(r["label"], {}).setdefault(r["mode"], {})[r["impl"]] = r
        for label, per_mode in by_label.items():
            cells = [_headline_cell(per_mode.get(m, {}), key) for m in modes]
            if with_ref:
                cells.append(" / ".join(_pct_text(per_mode.get(m, {}).get(common.REFERENCE), key)
                                        for m in ref_modes if m))
            body.append([label, layout, *cells])
    if not body:
        return None
    kinds = " / ".join(m.split("_")[1] for m in ref_modes if m)
    ref_title = [f"{common.REFERENCE_TITLE} ({kinds})"] if with_ref else []
    return common.markdown_table(["shape", "layout", *[MODE_TITLES[m] for m in modes], *ref_title], body)


def _pair(score: targets.Score, what: dict[str, int]) -> str:
    """"timed / GPU" counts of ``what`` (a ``targets.Score`` field), each "–" where no cell had that figure."""
    return " / ".join(f"{what[k]}" if score.measured[k] else "–" for k in targets.KEYS)


def targets_table(docs: dict[str, dict]) -> str | None:
    """The issues' targets scored per suite and direction or mode (``targets``); None without a scored cell."""
    rows, marked = [], False
    for suite in NORM_SUITES:
        if docs.get(suite):
            for direction, sc in targets.norm_scores(docs[suite]).items():
                missed = sc.missed_at()
                marked |= any(m.endswith(targets.COPY_SHORT_MARK) for m in missed)
                rows.append([f"{'LN' if suite == 'layernorm' else 'RMS'} {direction}, bf16 (49152, N)",
                             targets.describe_norm_target(direction),
                             str(sc.cells), _pair(sc, sc.met), _pair(sc, sc.peer_faster), ", ".join(missed) or "–"])
    if docs.get("batchnorm"):
        from .bench.batchnorm import MODE_TITLES

        for mode, sc in targets.bn_scores(docs["batchnorm"]).items():
            short = len(sc.copy_short[sc.shown])
            marked |= short > 0
            rows.append([f"BatchNorm {MODE_TITLES[mode]}", f"≥ {targets.BN_TARGETS[mode]:g}", str(sc.cells),
                         _pair(sc, sc.met), _pair(sc, sc.peer_faster),
                         f"(see the tables){f'; {short}{targets.COPY_SHORT_MARK}' if short else ''}"])
    if not rows:
        return None
    table = common.markdown_table(["cells", "target (% of copy)", "count", "met (timed / GPU time)",
                                   "a peer faster (timed / GPU time)", "missed at (GPU time where measured)"], rows)
    if marked:
        table += (f"\n\n{targets.COPY_SHORT_MARK} torch's copy of the same bytes under the same timer (the tables' "
                  f"\"{common.REFERENCE_TITLE}\") is below the target there too, as timed and in GPU time; after "
                  "\"(see the tables)\": how many of the missed cells are so.")
    return table


def _suite_markdown(suite: str, doc: dict, out_dir: Path, json_name: str) -> str:
    if suite in NORM_SUITES:
        from .bench import norms

        return norms.markdown(doc, heading_level=3)
    if suite == "batchnorm":
        from .bench import batchnorm

        return batchnorm.markdown(doc, heading_level=3)
    from .bench import syncbn

    png = json_name.removesuffix(".json") + ".png"
    text = f"### SyncBatchNorm ({doc['env'].get('world_size', '?')} GPUs)\n\n{syncbn.tables(doc)}\n"
    return text + (f"\n![{png}]({png})\n" if (out_dir / png).is_file() else "")


def _run_stamp(env: dict) -> str:
    """'<date> (source <hash>)' of one suite's run, from its recorded environment."""
    src = env.get("source_sha")
    return f"{env.get('date', '?')}" + (f" (source {src})" if src else "")


def _peers_line(env: dict, results: list[dict]) -> str:
    """The peers' versions as each suite's run recorded them (a suite reused from an earlier run had its own peers
    installed, or not), naming the suites where the runs differ; this run's environment for a peer no suite
    recorded."""
    recorded: dict[str, dict[str | None, list[str]]] = {}
    for r in results:
        for name, version in r.get("doc", {}).get("env", {}).get("peers", {}).items():
            recorded.setdefault(name, {}).setdefault(version, []).append(r["json"].removesuffix(".json"))
    parts = []
    for name in {**env["peers"], **recorded}:
        versions = recorded.get(name, {env["peers"].get(name): []})
        for version, suites in versions.items():
            named = f" ({', '.join(suites)})" if len(versions) > 1 else ""
            parts.append(f"{name} {version or 'not installed'}{named}")
    return "- Peers: " + ", ".join(parts)


def _device(env: dict) -> str:
    return env["device_name"] + (f" ({env.get('sm_count')} SMs, {env.get('memory_gib')} GiB, CUDA {env.get('cuda')})"
                                 if env.get("sm_count") else " (no CUDA GPU)")


def _device_line(env: dict, results: list[dict]) -> str:
    """'- Device: …' of this run, or, where the suites' results came from different devices (a report assembled
    from several runs), each device with the suites it ran."""
    by_device: dict[str, list[str]] = {}
    for r in results:
        if "doc" in r and r["doc"].get("env", {}).get("device_name"):
            by_device.setdefault(_device(r["doc"]["env"]), []).append(r["json"].removesuffix(".json"))
    if len(by_device) <= 1:
        return f"- Device: {_device(env)}"
    return "- Devices: " + "; ".join(f"{device}: {', '.join(suites)}" for device, suites in by_device.items())


def build_markdown(env: dict, where: str, quick: bool, rows: list | None, results: list[dict], gpu: bool,
                   command: str, elapsed_s: float, out_dir: Path) -> str:
    lines = ["# fastnorm report", ""]
    lines += [f"- Date: {env['date']}",
              _device_line(env, results),
              f"- Kernels: {where}",
              f"- Versions: fastnorm {env['fastnorm']}"
              + (f" (git {env['git_commit']}" + (f", source {env['source_sha']}" if env.get("source_sha") else "")
                 + ")" if env.get("git_commit") else "")
              + f", torch {env['torch']}, triton {env['triton']}, numpy {env['numpy']}, Python {env['python']}",
              _peers_line(env, results),
              f"- Command: `{command}` ({'quick' if quick else 'full'}; {elapsed_s / 60:.1f} min)"
              + ("; with results of earlier runs in the same directory: "
                 + ", ".join(f"`{r['json']}`" for r in results if r.get("reused")) if any(
                     r.get("reused") for r in results) else ""), ""]

    if gpu:
        docs = {r["suite"]: r["doc"] for r in results if "doc" in r}
        runs = [f"{r['json'].removesuffix('.json')} {_run_stamp(r['doc'].get('env', {}))}" for r in results
                if "doc" in r]
        if runs:
            lines += ["Each suite's own run (date, source hash of the measured code): " + "; ".join(runs) + ".", ""]
        copies = sorted({round(d["copy"]["gbps"]) for d in docs.values() if "copy" in d})
        if copies:
            lines += [f"Copy bandwidth (`dst.copy_(src)`, 1 GiB, read + written), measured in each suite's process: "
                      f"{', '.join(f'{c} GB/s' for c in copies)}.", ""]
        head = headline_norms(docs)
        bn_head = headline_bn(docs.get("batchnorm"))
        if head or bn_head:
            lines += ["## Headline (bfloat16, % of copy bandwidth: fastnorm / best peer; e = torch eager, "
                      "c = torch.compile, l = Liger, a = Apex, q = QuACK)", ""]
            if head:
                what = "LayerNorm / RMSNorm, x of shape (49152, N)"
                if common.REFERENCE_TITLE in head:
                    what += (f"; \"{common.REFERENCE_TITLE}\": torch's copy kernel moving the same bytes under "
                             "the same timer (the ceiling at each size, not a peer)")
                lines += [what + ":", "", head, ""]
            if bn_head:
                what = "BatchNorm2d, bfloat16 input, float32 parameters"
                if common.REFERENCE_TITLE in bn_head:
                    what += (f"; \"{common.REFERENCE_TITLE}\": torch's copy (forward) and add (backward) kernels "
                             "moving a mode's tensors under the same timer (one pass at that size, not a peer)")
                lines += [what + ":", "", bn_head, ""]
            if common.HOST_MARK in (head or "") + (bn_head or ""):
                lines += [common.HOST_NOTE + ".", ""]
            gpu_heads = [(what, table) for what, table in (
                ("LayerNorm / RMSNorm", headline_norms(docs, key=GPU)),
                ("BatchNorm2d", headline_bn(docs.get("batchnorm"), key=GPU))) if table]
            if gpu_heads:
                lines += [f"The same cells in GPU time alone (the suites' figures marked {common.GRAPH_MARK}): "
                          "each call captured in a CUDA graph and its replays timed the same way, so no host time is "
                          "in them — what a CUDA-graphed training step sees of the op:", ""]
                for what, table in gpu_heads:
                    lines += [what + ":", "", table, ""]

        scored = targets_table(docs)
        if scored:
            lines += ["## Targets", "", "The issues' speed targets (`fastnorm.bench.targets`): cells meeting them, as "
                      "timed and in GPU time alone, and cells where a peer is faster (by more than "
                      f"{targets.PEER_MARGIN:.0%}).", "", scored, ""]

    lines += ["## Correctness: `fastnorm check`", ""]
    if rows is None:
        lines += ["Not run (--skip-check).", ""]
    else:
        lines += [f"Every op against the float64 NumPy reference (`fastnorm.reference`), forward and backward; "
                  f"error = max|actual − expected| / max|expected| per tensor; tolerances from "
                  f"`fastnorm.reference.tolerances` (outputs and input gradients · parameter gradients). "
                  f"Result: **{check_mod.summary(rows)}**.", "", check_mod.table(rows), ""]

    lines += ["## Speed", ""]
    if not gpu:
        lines += ["Not measured: this machine has no CUDA GPU, and the benchmarks measure GPU memory bandwidth. "
                  + committed_report_line(), ""]
        return "\n".join(lines)
    lines += ["Each figure is the median of `triton.testing.do_bench` (L2 flushed before every call) on random "
              "data; GB/s counts the fewest bytes the op must move (`fastnorm.bench.common`), the same count for "
              "every implementation; % is of the copy bandwidth measured in the same process. All implementations "
              "run in one process on the same inputs.", ""]
    for r in results:
        if "problem" in r:
            lines += [f"- **{r['suite']}**: {r['problem']}" + (" — partial results below." if "doc" in r else "."), ""]
        if "doc" in r:
            name = r["json"]
            when = f"; run time {r['elapsed_s']:.0f} s" if r.get("elapsed_s") else ""
            lines += [_suite_markdown(r["suite"], r["doc"], out_dir, name), f"Raw data: [{name}]({name}){when}"
                      + (" (an earlier run, reused)." if r.get("reused") else "."), ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ main


def _reused(out_dir: Path, skip: set[str]) -> list[dict]:
    """Results already in ``out_dir`` (from earlier runs) of the suites not in ``skip``."""
    found = []
    for suite in LOCAL_SUITES:
        path = out_dir / f"{suite}.json"
        if suite not in skip and path.is_file():
            found.append(path)
    if "syncbn" not in skip:
        found += sorted(out_dir.glob("syncbn_*gpu.json"))
    out = []
    for path in found:
        doc = common.read_json(path)
        out.append({"suite": doc.get("suite", path.stem.split("_")[0]), "json": path.name, "doc": doc,
                    "elapsed_s": doc.get("elapsed_s") or 0.0, "reused": True})
    return out


def main(out: str, quick: bool, suites: list[str] | None = None, skip_check: bool = False,
         reuse: bool = False) -> int:
    """``fastnorm report``. Exit status 1 when the check fails or a suite run now produced no results.

    ``suites``: the suites to run (default: every one that applies; ``["none"]`` for none). ``reuse``: keep
    results already in ``out`` — ``check.json`` when the check is skipped, and the JSON of every suite not run
    now — so a report can be built over several shorter runs (each call on a lent GPU is time-limited).
    """
    t0 = time.monotonic()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    wanted = list(suites) if suites else [*LOCAL_SUITES, *(["syncbn"] if world > 1 else [])]
    wanted = [s for s in wanted if s != "none"]
    unknown = [s for s in wanted if s not in (*LOCAL_SUITES, "syncbn")]
    if unknown:
        print(f"fastnorm report: unknown suite(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    command = "fastnorm report --out " + str(out) + (" --quick" if quick else "") + (
        f" --suites {','.join(suites)}" if suites else "") + (" --skip-check" if skip_check else "") + (
        " --reuse" if reuse else "")

    results: list[dict] = []
    if gpu and "syncbn" in wanted:
        if world > 1:
            # Every rank runs the distributed suite first, together; then rank 0 alone goes on.
            results.append(run_suite("syncbn", out_dir, quick))
            if rank != 0:
                return 0 if "doc" in results[-1] else 1
        else:
            results.append({"suite": "syncbn", "json": _json_name("syncbn"),
                            "problem": "not run: it needs torchrun with WORLD_SIZE > 1"})
    elif world > 1 and rank != 0:
        return 0

    where = check_mod.where()
    print(f"fastnorm report → {out_dir / 'report.md'}\n  device: "
          f"{torch.cuda.get_device_name() if gpu else 'no CUDA GPU (CPU only)'}\n  kernels: {where}", flush=True)
    env = common.environment(device)

    rows = None
    check_reused = False
    check_path = out_dir / "check.json"
    if not skip_check:
        print(f"\n=== correctness check ({'quick' if quick else 'full'} battery)", flush=True)
        rows = check_mod.run_check(quick, device)
        common.write_json({"where": where, "device": str(device), "quick": quick,
                           "rows": [r.to_dict() for r in rows]}, check_path)
        print(check_mod.summary(rows), flush=True)
        if gpu:
            torch.cuda.empty_cache()  # leave the device's memory to the benchmark subprocesses
    elif reuse and check_path.is_file():
        saved = common.read_json(check_path)
        rows = [check_mod.CheckRow.from_dict(d) for d in saved["rows"]]
        where = saved.get("where", where)
        print(f"reusing the check in {check_path}: {check_mod.summary(rows)}", flush=True)
        check_reused = True

    if gpu:
        for suite in wanted:
            if suite != "syncbn":
                results.append(run_suite(suite, out_dir, quick))
    if reuse:
        results += _reused(out_dir, skip={r["suite"] for r in results})
    order = {s: i for i, s in enumerate((*LOCAL_SUITES, "syncbn"))}
    results.sort(key=lambda r: (order.get(r["suite"], 9), r["json"]))

    measured = [r["doc"] for r in results if "doc" in r]
    if not gpu and measured:  # assembling results measured elsewhere: describe their machine, at the newest run
        env = dict(max(measured, key=lambda d: d["env"].get("date", ""))["env"])
    text = build_markdown(env, where, quick, rows, results, gpu or bool(measured), command, time.monotonic() - t0,
                          out_dir)
    (out_dir / "report.md").write_text(text + "\n")

    print("\n=== summary")
    print(f"  report: {out_dir / 'report.md'}")
    if rows is not None:
        verb = "reused" if check_reused else "ran"
        print(f"  {verb}: correctness check ({len(rows)} rows) — {where}: {check_mod.summary(rows)}")
    for r in results:
        if r.get("reused"):
            print(f"  reused: {r['suite']} benchmark from an earlier run ({r['json']})")
        else:
            state = r.get("problem") or f"done in {r.get('elapsed_s', 0):.0f} s"
            print(f"  ran: {r['suite']} benchmark — {state}")
    if not gpu and not measured:
        print("  not run: benchmarks (no CUDA GPU; they measure GPU memory bandwidth)")
        print(f"  {committed_report_line()}")
    elif not gpu:
        print("  no benchmark ran here (no CUDA GPU): the report shows the earlier results reused above")
    failed = rows is not None and not all(r.passed for r in rows)
    missing = [r for r in results if "doc" not in r and r["suite"] in wanted and r["suite"] != "syncbn"]
    return 1 if failed or missing else 0
