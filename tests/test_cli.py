"""The ``fastnorm`` command: parsing, ``check`` (rows, table, exit status), ``report`` on a CPU."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from fastnorm import check, report
from fastnorm.__main__ import build_parser
from fastnorm.__main__ import main as cli_main
from fastnorm.bench import common
from fastnorm.reference import tolerances

FP32, BF16 = torch.float32, torch.bfloat16
TINY = [
    check.Case("layer_norm", "affine", FP32, (3, 7)),
    check.Case("layer_norm", "residual→fp32", BF16, (2, 33), dict(residual=True, residual_dtype=FP32)),
    check.Case("rms_norm", "affine", BF16, (2, 20)),
    check.Case("module", "nn.LayerNorm", FP32, (2, 9), dict(module="LayerNorm")),
]


@pytest.fixture
def tiny_battery(monkeypatch):
    monkeypatch.setattr(check, "battery", lambda quick, device: list(TINY))


def test_parser_accepts_every_command():
    p = build_parser()
    a = p.parse_args(["check", "--quick", "--device", "cpu", "--json", "x.json", "--ops", "layer_norm"])
    assert (a.command, a.quick, a.device, a.json, a.ops) == ("check", True, "cpu", "x.json", "layer_norm")
    a = p.parse_args(["report", "--out", "d", "--quick", "--suites", "layernorm"])
    assert (a.command, a.out, a.quick, a.suites) == ("report", "d", True, "layernorm")
    a = p.parse_args(["bench", "layernorm", "--quick", "--dtypes", "bf16"])
    assert a.args == ["layernorm", "--quick", "--dtypes", "bf16"]
    with pytest.raises(SystemExit):
        p.parse_args([])
    with pytest.raises(SystemExit):
        p.parse_args(["check", "--device", "tpu"])


def test_check_rows_pass_on_a_tiny_battery(device):
    rows = check.run_check(True, device, cases=TINY, show_progress=False)
    assert [r.status for r in rows] == ["pass"] * len(TINY), [r.message for r in rows]
    assert set(rows[0].errors) == {"y", "dx", "dw", "db"}
    assert set(rows[1].errors) == {"y", "h", "dres", "dx", "dw", "db"}
    assert rows[1].tolerances["h"] == tolerances.OUTPUT_TOL["float32"]  # residual_out in its own dtype
    assert rows[1].tolerances["dw"] == tolerances.PARAM_GRAD_TOL["bfloat16"]
    assert set(rows[2].errors) == {"y", "dx", "dw"}
    for r in rows:
        assert all(0 <= e <= r.tolerances[k] for k, e in r.errors.items())
    text = check.table(rows)
    assert "| layer_norm" in text and "h " in text and "dres " in text and "pass" in text
    assert check.summary(rows) == f"{len(TINY)} passed, 0 failed"


def test_check_in_worker_processes_gives_the_serial_rows(device):
    """``jobs`` > 1 runs the cases in spawned processes (how a GPU check compiles its kernels on several cores); the
    rows, their order and their errors equal the serial run's."""
    serial = check.run_check(True, device, cases=TINY, show_progress=False, jobs=1)
    parallel = check.run_check(True, device, cases=TINY, show_progress=False, jobs=2)
    assert [r.to_dict() for r in parallel] == [r.to_dict() for r in serial]
    assert check.default_jobs(torch.device("cpu")) == 1


def test_check_worker_that_dies_fails_only_its_case(device):
    """A case that kills its worker process breaks the pool for every case still running; those are run again, so
    only the killing case is reported as such."""
    from helpers import check_worker_dying_on_crash_variant

    cases = [*TINY[:2], check.Case("layer_norm", "crash", FP32, (3, 7)), *TINY[2:]]
    rows = check._run_parallel(cases, torch.device(device), 2, None, worker=check_worker_dying_on_crash_variant)
    assert [r.status for r in rows] == ["pass", "pass", "fail", "pass", "pass"]
    assert rows[2].variant == "crash" and "died" in rows[2].message


def test_check_rejects_zero_jobs(capsys):
    assert cli_main(["check", "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_check_exit_status(tiny_battery, monkeypatch, capsys, tmp_path, device):
    out = tmp_path / "rows.json"
    assert check.main(True, device, str(out), None) == 0
    printed = capsys.readouterr().out
    assert "fastnorm check (quick battery, 4 cases)" in printed and check.where() in printed
    back = [check.CheckRow.from_dict(d) for d in json.loads(out.read_text())["rows"]]
    assert [r.status for r in back] == ["pass"] * 4

    # a tolerance nothing can meet forces a failure -> exit status 1, the row says why
    monkeypatch.setitem(tolerances.OUTPUT_TOL, "float32", 0.0)
    assert check.main(True, device, None, ["layer_norm"]) == 1
    printed = capsys.readouterr().out
    assert "FAIL: over tolerance: y, dx" in printed and "1 passed, 1 failed" in printed


def test_check_exception_is_a_failure_and_missing_op_a_skip(monkeypatch, device):
    def broken(case, dev, cmp):
        raise RuntimeError("kernel launch failed\ndetails")

    monkeypatch.setitem(check.RUNNERS, "rms_norm", broken)
    real_missing = check._missing
    monkeypatch.setattr(check, "_missing", lambda op: "not here" if op == "layer_norm" else real_missing(op))
    rows = check.run_check(True, device, cases=TINY, show_progress=False)
    by_op = {r.op: r for r in rows}
    assert by_op["layer_norm"].status == "skip" and by_op["layer_norm"].message == "not here"
    assert sum(r.op == "layer_norm" for r in rows) == 1  # one line per missing op
    assert by_op["rms_norm"].status == "fail" and by_op["rms_norm"].message == "RuntimeError: kernel launch failed"
    assert by_op["rms_norm"].passed is False and by_op["layer_norm"].passed is True
    assert "skip: not here" in check.table(rows)


def test_nan_and_inf_errors_fail_and_round_trip():
    row = check.CheckRow("x", "v", "float32", (2,), errors={"y": math.inf}, tolerances={"y": 1e-5})
    assert check.CheckRow.from_dict(row.to_dict()) == row
    assert "inf" in check.table([row])


def test_batteries_are_fixed_and_sized_for_the_device():
    cpu, cpu_quick = check.battery(False, "cpu"), check.battery(True, "cpu")
    assert len(cpu_quick) < len(cpu)
    assert check.battery(False, "cpu") == cpu  # deterministic
    ops = {c.op for c in cpu}
    assert ops == {"layer_norm", "rms_norm", "batch_norm", "bn stages", "module"}
    assert max(math.prod(c.shape) for c in cpu) <= 2 * 32771  # the interpreter must finish in minutes
    gpu = check.battery(False, "cuda")
    assert max(math.prod(c.shape) for c in gpu) > 1 << 20
    ln = {c.shape[-1] for c in cpu if c.op == "layer_norm"}
    assert {1, 7, 129, 1025} <= ln  # 1, primes, past powers of two
    assert not any(c.shape[-1] == 1 for c in cpu + gpu if c.op == "rms_norm")  # ill-conditioned, see check.py
    bn = [c for c in cpu if c.op == "batch_norm"]
    assert {c.opts["mode"] for c in bn} == {"train", "eval", "frozen"}
    assert {c.opts["layout"] for c in bn} == {"contiguous", "channels_last"}
    assert any(c.opts.get("relu") and c.opts.get("z") for c in bn)


def test_cli_bench_forwards_to_the_suite(capsys):
    assert cli_main(["bench", "--help"]) == 0
    assert "batchnorm" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        cli_main(["bench", "layernorm", "--help"])
    assert exc.value.code == 0 and "--residual" in capsys.readouterr().out


def test_cli_check_subcommand(tiny_battery, capsys, device):
    assert cli_main(["check", "--quick", "--device", device]) == 0
    assert "4 passed, 0 failed" in capsys.readouterr().out
    assert cli_main(["check", "--ops", "nonsense"]) == 2


def test_report_on_cpu(tiny_battery, tmp_path, capsys, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("the no-GPU account is only written without a GPU")
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert report.main(str(tmp_path / "rep"), quick=True) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert text.startswith("# fastnorm report")
    assert "- Device:" in text and "(no CUDA GPU)" in text and f"torch {torch.__version__}" in text
    assert "## Correctness: `fastnorm check`" in text and "**4 passed, 0 failed**" in text
    assert "| layer_norm" in text and "| rms_norm" in text
    assert "Not measured: this machine has no CUDA GPU" in text and report.COMMITTED_REPORT in text
    assert (tmp_path / "rep" / "check.json").is_file()
    printed = capsys.readouterr().out
    assert "not run: benchmarks (no CUDA GPU" in printed and "ran: correctness check" in printed


def test_report_exit_status_on_failure(tiny_battery, tmp_path, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("CPU-only path")
    monkeypatch.setitem(tolerances.OUTPUT_TOL, "bfloat16", 0.0)
    assert report.main(str(tmp_path), quick=True) == 1
    assert "FAIL" in (tmp_path / "report.md").read_text()
    assert report.main(str(tmp_path), quick=True, suites=["nosuch"]) == 2


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "fastnorm", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "check" in out.stdout and "report" in out.stdout


def _norm_doc(suite, impl_speeds):
    recs = []
    for direction in ("fwd", "bwd"):
        for n in (128, 1024, 4096):
            for impl, speed in impl_speeds.items():
                r = dict(impl=impl, n=n, rows=49152, label=f"49152×{n}", group="sweep", dtype="bfloat16",
                         direction=direction)
                recs.append(common.finish_record(r, n / 1e5 / speed, 49152 * n * 4, copy_gbps=4000.0))
    return {"suite": suite, "title": suite, "env": {"device_name": "H"}, "copy": {"gbps": 4000.0},
            "settings": {"dtypes": ["bfloat16"], "directions": ["fwd", "bwd"], "impls": list(impl_speeds),
                         "sweep_rows": 49152, "residual": False}, "records": recs, "plots": []}


def _bn_doc():
    recs = []
    for mode in ("train_fwd", "eval_fwd"):
        for impl, ms in (("fastnorm", 1.0), ("torch", 2.0)):
            r = dict(impl=impl, label="8×64×32×32", dtype="bfloat16", layout="nchw", mode=mode)
            recs.append(common.finish_record(r, ms, 3_000_000_000, copy_gbps=4000.0))
    return {"suite": "batchnorm", "title": "BatchNorm", "env": {"device_name": "H"}, "copy": {"gbps": 4000.0},
            "settings": {"dtypes": ["bfloat16"], "layouts": ["nchw"], "modes": ["train_fwd", "eval_fwd"],
                         "impls": ["fastnorm", "torch"]}, "records": recs, "plots": []}


def test_report_gpu_sections_from_synthetic_results(tmp_path):
    env = common.environment("cpu")
    env.update(device_name="NVIDIA H200", sm_count=132, memory_gib=139.8)
    results = [{"suite": "layernorm", "json": "layernorm.json", "elapsed_s": 10.0,
                "doc": _norm_doc("layernorm", {"fastnorm": 1.0, "torch": 0.5, "liger": 0.8})},
               {"suite": "rmsnorm", "json": "rmsnorm.json",
                "problem": "exited with status 1 without writing rmsnorm.json"},
               {"suite": "batchnorm", "json": "batchnorm.json", "doc": _bn_doc(), "elapsed_s": 5.0}]
    text = report.build_markdown(env, "CUDA (H200): Triton kernels", False, None, results, True,
                                 "fastnorm report --out r", 60.0, tmp_path)
    assert "- Device: NVIDIA H200 (132 SMs" in text
    assert "## Headline" in text and "| op     | 128" in text
    # fastnorm moves 49152·128·4 bytes in 1.28 µs... as % of 4000 GB/s; the best peer is Liger ("l")
    head = next(line for line in text.splitlines() if line.startswith("| LN fwd"))
    assert head.count(" l ") == 3
    assert "| 8×64×32×32 | nchw" in text and "/ 38 e" in text  # torch: 3 GB in 2 ms = 1500 GB/s = 38%
    assert "**rmsnorm**: exited with status 1" in text
    assert "Raw data: [layernorm.json](layernorm.json)" in text and "Not run (--skip-check)" in text


def test_report_peers_as_each_suite_recorded_them(tmp_path):
    """A report assembled from suites run in different processes names each peer's version as the suites' runs
    recorded it (the BatchNorm run had no Liger; the LayerNorm one did), not the assembling process's."""
    env = common.environment("cpu")
    env["peers"] = {"liger-kernel": None, "apex": None}
    ln = _norm_doc("layernorm", {"fastnorm": 1.0, "liger": 0.8})
    ln["env"]["peers"] = {"liger-kernel": "0.8.5", "apex": None}
    bn = _bn_doc()
    bn["env"]["peers"] = {"liger-kernel": None, "apex": None}
    results = [{"suite": "layernorm", "json": "layernorm.json", "doc": ln, "elapsed_s": 1.0},
               {"suite": "batchnorm", "json": "batchnorm.json", "doc": bn, "elapsed_s": 1.0}]
    text = report.build_markdown(env, "CUDA", False, None, results, True, "fastnorm report", 1.0, tmp_path)
    assert "- Peers: liger-kernel 0.8.5 (layernorm), liger-kernel not installed (batchnorm), apex not installed" in text
    bn["env"]["peers"] = {"liger-kernel": "0.8.5", "apex": None}
    text = report.build_markdown(env, "CUDA", False, None, results, True, "fastnorm report", 1.0, tmp_path)
    assert "- Peers: liger-kernel 0.8.5, apex not installed" in text
    # every suite ran without a peer that this process has: the suites' account stands; a peer none recorded
    ln["env"]["peers"] = bn["env"]["peers"] = {"liger-kernel": None}
    env["peers"] = {"liger-kernel": "0.9.0", "quack-kernels": "0.6.5"}
    text = report.build_markdown(env, "CUDA", False, None, results, True, "fastnorm report", 1.0, tmp_path)
    assert "- Peers: liger-kernel not installed, quack-kernels 0.6.5" in text


def test_run_suite_in_a_subprocess_and_its_timeout(tmp_path, monkeypatch):
    def cpu_command(suite, out, quick, budget):
        return [sys.executable, "-m", "fastnorm.bench", suite, "--device", "cpu", "--shapes", "4x16",
                "--impls", "torch", "--dtypes", "fp32", "--out", str(out), "--copy-mib", "1", "--warmup-ms", "0",
                "--rep-ms", "1", "--no-plots", "--time-budget", f"{budget:g}"]

    monkeypatch.setattr(report, "_suite_command", cpu_command)
    res = report.run_suite("rmsnorm", tmp_path, quick=True)
    assert res["returncode"] == 0 and "problem" not in res
    assert {r["status"] for r in res["doc"]["records"]} == {"ok"}

    monkeypatch.setattr(report, "_suite_command",
                        lambda *a: [sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(report, "GRACE_S", 1.0)
    monkeypatch.setitem(report.SUITE_BUDGET["quick"], "layernorm", 1.0)
    res = report.run_suite("layernorm", tmp_path, quick=True)
    assert res["problem"].startswith("killed after 2 s") and "doc" not in res and res["elapsed_s"] < 30


def test_terminated_report_takes_its_suite_down(tmp_path):
    """The suite subprocess has a session of its own; when the report is terminated (an outer `timeout` sends
    SIGTERM), the suite must not live on and keep using the GPU under whatever runs next."""
    import signal
    import time

    pid_file = tmp_path / "suite.pid"
    driver = f"""
import sys
from pathlib import Path
from fastnorm import report
report._suite_command = lambda *a: [sys.executable, "-c",
    "import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"]
report.run_suite("layernorm", Path({str(tmp_path)!r}), quick=True)
"""
    parent = subprocess.Popen([sys.executable, "-c", driver])
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        suite_pid = int(pid_file.read_text())
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        parent.kill()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(suite_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(suite_pid, signal.SIGKILL)
        raise AssertionError("the suite outlived the terminated report")


def test_report_assembles_earlier_results_with_reuse(tiny_battery, tmp_path, monkeypatch, device):
    # a check and a suite measured earlier (say, on a GPU in separate time-limited runs), then assembled here
    assert report.main(str(tmp_path), quick=True, suites=["none"]) == 0
    doc = _norm_doc("layernorm", {"fastnorm": 1.0, "torch": 0.5})
    doc["env"] = dict(common.environment("cpu"), device_name="NVIDIA H200", sm_count=132, memory_gib=139.8)
    doc["elapsed_s"] = 42.0
    common.write_json(doc, tmp_path / "layernorm.json")
    monkeypatch.setattr(check, "run_check", lambda *a, **k: pytest.fail("the check must be reused, not rerun"))
    assert report.main(str(tmp_path), quick=True, suites=["none"], skip_check=True, reuse=True) == 0
    text = (tmp_path / "report.md").read_text()
    assert "- Device: NVIDIA H200 (132 SMs" in text and "**4 passed, 0 failed**" in text
    assert "| LN fwd" in text and "(an earlier run, reused)" in text
    assert "--skip-check --reuse` " in text and "earlier runs in the same directory: `layernorm.json`" in text
    # without --reuse, nothing earlier is shown
    report.main(str(tmp_path), quick=True, suites=["none"], skip_check=True)
    assert "LN fwd" not in (tmp_path / "report.md").read_text()


def test_readme_headline_takes_the_targets_table():
    """``scripts/readme_headline.py`` copies the report's headline, and its targets table when it has one."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "readme_headline.py"
    spec = importlib.util.spec_from_file_location("readme_headline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    report = ("# fastnorm report\n\n- Date: today\n\n## Headline (x)\n\n| a |\n\n## Targets\n\nWhat.\n\n| t |\n\n"
              "## Correctness\n\nrest\n")
    text = mod.headline(report)
    assert "#### Headline (x)" in text and "| a |" in text
    assert "#### Targets\n\nWhat.\n\n| t |" in text and "Correctness" not in text
    assert "#### Targets" not in mod.headline(report.replace("## Targets\n\nWhat.\n\n| t |\n\n", ""))
