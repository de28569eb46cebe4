"""The benchmark harness on the CPU: byte counts, tables, plots, JSON, and a suite run end to end.

Figures measured here are CPU wall-clock times of tiny shapes: they test the plumbing, never speed.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
import torch

from fastnorm.bench import batchnorm, common, norms
from fastnorm.bench.__main__ import main as bench_main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------------------ bytes


def test_layer_norm_bytes_by_hand():
    # bf16 x (2 bytes), bf16 params, 4 rows of 8: fwd = x + y + γ, β + mean, rstd (fp32)
    assert common.layer_norm_bytes("fwd", 4, 8, 2, 2) == 4 * 8 * 2 * 2 + 2 * 8 * 2 + 2 * 4 * 4
    # bwd = x, dy, dx + read γ + read mean, rstd + write dγ, dβ
    assert common.layer_norm_bytes("bwd", 4, 8, 2, 2) == 3 * 4 * 8 * 2 + 8 * 2 + 2 * 4 * 4 + 2 * 8 * 2
    # no bias: one parameter written in backward, still γ read
    assert common.layer_norm_bytes("bwd", 4, 8, 2, 2, bias=False) == 3 * 64 + 16 + 32 + 16
    # no affine at all: neither read nor written
    assert common.layer_norm_bytes("fwd", 4, 8, 4, 4, weight=False, bias=False) == 2 * 32 * 4 + 2 * 4 * 4


def test_rms_norm_bytes_by_hand():
    assert common.rms_norm_bytes("fwd", 3, 5, 4, 4) == 2 * 15 * 4 + 5 * 4 + 3 * 4
    assert common.rms_norm_bytes("bwd", 3, 5, 4, 4) == 3 * 15 * 4 + 5 * 4 + 3 * 4 + 5 * 4


def test_residual_bytes():
    plain = common.rms_norm_bytes("fwd", 3, 5, 2, 2)
    # fused residual: read r (bf16) and write h (fp32) on top
    assert common.rms_norm_bytes("fwd", 3, 5, 2, 2, residual_size=2, residual_out_size=4) == plain + 15 * (2 + 4)
    # backward with a residual reads h and dh (h's dtype) instead of x, plus dy and one dx
    bwd = common.rms_norm_bytes("bwd", 3, 5, 2, 2, residual_size=2, residual_out_size=4)
    assert bwd == 15 * (2 * 4 + 2 * 2) + 5 * 2 + 3 * 4 + 5 * 2
    with pytest.raises(ValueError, match="both"):
        common.rms_norm_bytes("fwd", 3, 5, 2, 2, residual_size=2)
    with pytest.raises(ValueError, match="direction"):
        common.norm_bytes("sideways", 1, 1, 1, 1, n_params=1, n_stats=1)


def test_batch_norm_bytes_by_hand():
    e, c, sx, sp = 2 * 3 * 4 * 5, 3, 2, 4
    assert common.batch_norm_bytes("train_fwd", e, c, sx, sp) == 2 * e * sx + 2 * c * sp + 4 * c * sp + 2 * c * 4
    assert common.batch_norm_bytes("train_bwd", e, c, sx, sp) == 3 * e * sx + c * sp + 2 * c * 4 + 2 * c * sp
    assert common.batch_norm_bytes("eval_fwd", e, c, sx, sp) == 2 * e * sx + 4 * c * sp
    assert common.batch_norm_bytes("frozen_bwd", e, c, sx, sp) == 3 * e * sx + 5 * c * sp
    with pytest.raises(ValueError, match="mode"):
        common.batch_norm_bytes("train", e, c, sx, sp)


def test_case_bytes_use_the_formulas():
    case = norms.Case("layernorm", torch.bfloat16, 49152, 1024, "sweep")
    assert norms.case_bytes(case, "fwd", False) == common.layer_norm_bytes("fwd", 49152, 1024, 2, 2)
    bcase = batchnorm.Case((8, 4, 3, 3), "channels_last", torch.float32)
    assert batchnorm.case_bytes(bcase, "eval_fwd") == common.batch_norm_bytes("eval_fwd", 288, 4, 4, 4)
    assert common.gbps(2_000_000_000, 1000.0) == pytest.approx(2.0)


# ----------------------------------------------------------------------------- parsing, timing, measurer


def test_parsers():
    assert common.parse_dtypes("bf16, fp32") == [torch.bfloat16, torch.float32]
    with pytest.raises(ValueError, match="fp8"):
        common.parse_dtypes("fp8")
    assert common.parse_list("backward,fwd,bwd", ("fwd", "bwd"), "--ops", {"backward": "bwd"}) == ["bwd", "fwd"]
    with pytest.raises(ValueError, match="--ops"):
        common.parse_list("up", ("fwd", "bwd"), "--ops")
    assert norms.parse_shapes("1024, 16x4096") == [(norms.SWEEP_ROWS, 1024), (16, 4096)]
    with pytest.raises(ValueError):
        norms.parse_shapes("0x3")
    assert batchnorm.parse_shapes("2x3x4x5,7x3") == [(2, 3, 4, 5), (7, 3)]
    with pytest.raises(ValueError):
        batchnorm.parse_shapes("5")


def test_cpu_timer_and_copy_bandwidth():
    timer = common.Timer("cpu", warmup_ms=1, rep_ms=2)
    assert timer(lambda: torch.ones(10).sum()) > 0
    copy = common.copy_bandwidth("cpu", timer, nbytes=1 << 20)
    assert copy["bytes"] == 2 << 20 and copy["gbps"] > 0


def test_measurer_records_errors_skips_and_deadline():
    timer = common.Timer("cpu", warmup_ms=0, rep_ms=1)
    meter = common.Measurer(timer, copy_gbps=10.0, deadline=common.Deadline(None))
    ok = meter.time(common.record(impl="a", label="x"), 1000, lambda: None)
    assert ok["status"] == "ok" and ok["bytes"] == 1000 and ok["pct_copy"] == pytest.approx(100 * ok["gbps"] / 10)

    def boom():
        raise RuntimeError("kernel exploded\nsecond line")

    err = meter.time(common.record(impl="b", label="x"), 1000, boom)
    assert err["status"] == "error" and err["error"] == "RuntimeError: kernel exploded"
    assert meter.lost is None
    meter.fail(common.record(impl="c", label="y"), RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert meter.lost and "c" in meter.lost
    after = meter.time(common.record(impl="a", label="z"), 1000, lambda: None)
    assert after["status"] == "skipped" and "context lost" in after["reason"]

    expired = common.Measurer(timer, 10.0, common.Deadline(0.0))
    rec = expired.time(common.record(impl="a", label="x"), 1, lambda: None)
    assert rec["status"] == "skipped" and "time budget" in rec["reason"]


def test_only_sticky_cuda_errors_lose_the_context():
    """torch ends every CUDA error's message with a hint about device-side assertions; only an assertion that
    triggered (or another sticky error) loses the context, not e.g. a failed stream capture."""
    trailer = ("\nCUDA kernel errors might be asynchronously reported at some other API call.\nCompile with "
               "`TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    capture = RuntimeError("CUDA error: operation failed due to a previous error during capture" + trailer)
    assert not common.cuda_context_lost(capture)
    for sticky in ("CUDA error: device-side assert triggered", "CUDA error: an illegal memory access was encountered"):
        assert common.cuda_context_lost(RuntimeError(sticky + trailer))


# ---------------------------------------------------------------------------------------------- tables


def _rec(impl, label, ms, status="ok", **kw):
    r = common.record(impl=impl, label=label, status=status, **kw)
    if status == "ok":
        common.finish_record(r, ms, 1_000_000, copy_gbps=2.0)
    return r


def test_perf_table_speedup_and_notes():
    recs = [_rec("fastnorm", "a", 0.5), _rec("torch", "a", 1.0), _rec("liger", "a", 0.8),
            _rec("fastnorm", "b", 2.0), _rec("torch", "b", 1.0),
            _rec("fastnorm", "c", 1.0), _rec("torch", "c", 0, status="error", error="RuntimeError: no"),
            _rec("liger", "c", 0, status="skipped", reason="not today"),
            _rec("torch", "d", 1.0, mismatch=0.5)]
    text = common.perf_table(recs, lambda r: r["label"], ["fastnorm", "torch", "liger"])
    lines = text.splitlines()
    row_a = next(line for line in lines if line.startswith("| a "))
    assert "1.60× (liger)" in row_a  # best peer 0.8 ms over fastnorm's 0.5 ms
    row_b = next(line for line in lines if line.startswith("| b "))
    assert "0.50× (torch)" in row_b
    row_c = next(line for line in lines if line.startswith("| c "))
    assert "error" in row_c and row_c.rstrip().endswith("| –                     |")
    assert "- error in torch: RuntimeError: no (at c)" in text
    assert "– liger not measured: not today (at c)" in text
    assert "!" in next(line for line in lines if line.startswith("| d ")) and "max rel. err 0.5" in text
    # GB/s and % of copy: 1e6 bytes in 0.5 ms = 2 GB/s = 100% of a 2 GB/s copy
    assert "2 (100%)" in row_a


def test_same_bytes_reference_is_not_a_peer():
    """The same-bytes reference gets its own column (titled as what it is) but is never the best peer, in the
    suites' tables or the report's headline, even when it is the fastest."""
    from fastnorm.report import _headline_cell

    recs = {"fastnorm": _rec("fastnorm", "a", 1.0), "torch": _rec("torch", "a", 2.0),
            common.REFERENCE: _rec(common.REFERENCE, "a", 0.5)}
    assert common.speedup(recs) == (2.0, "torch")
    text = common.perf_table(list(recs.values()), lambda r: r["label"], ["fastnorm", "torch", common.REFERENCE])
    header, _, row = text.splitlines()[:3]
    assert [c.strip() for c in header.split("|")][2:5] == ["fastnorm GB/s (% copy)", "torch GB/s (% copy)",
                                                          "copy, same bytes GB/s (% copy)"]
    assert "2.00× (torch)" in row
    assert _headline_cell(recs) == f"{recs['fastnorm']['pct_copy']:.0f} / {recs['torch']['pct_copy']:.0f} e"
    # fastnorm and the reference alone: no peer, so no speed-up column
    alone = common.perf_table([recs["fastnorm"], recs[common.REFERENCE]], lambda r: r["label"],
                              ["fastnorm", common.REFERENCE])
    assert "best peer" not in alone and common.speedup({k: recs[k] for k in ("fastnorm", common.REFERENCE)}) is None
    assert _headline_cell({k: recs[k] for k in ("fastnorm", common.REFERENCE)}) == \
        f"{recs['fastnorm']['pct_copy']:.0f}"


def test_report_headline_has_the_reference_rows():
    """After the LN/RMS rows, one row per direction of the reference, from the LayerNorm run (else the RMSNorm
    one): just its % (host-marked when host-bound); none when no run measured it."""
    from fastnorm.report import headline_norms

    def doc(suite, ref_ms):
        recs = []
        for d in ("fwd", "bwd"):
            for impl, ms in (("fastnorm", 1.0), ("torch", 2.0), (common.REFERENCE, ref_ms)):
                if ms is not None:
                    r = common.record(impl=impl, n=128, dtype="bfloat16", direction=d, group="sweep")
                    recs.append(common.finish_record(r, ms, 10**6, 2.0, host_ms=0.95 * ms if d == "bwd" else 0.0))
        return {"settings": {"directions": ["fwd", "bwd"]}, "records": recs}

    lines = headline_norms({"layernorm": doc("layernorm", 0.8), "rmsnorm": doc("rmsnorm", 0.4)}).splitlines()
    assert [line.split("|")[1].strip() for line in lines[2:]] == [
        "LN fwd", "LN bwd", "RMS fwd", "RMS bwd", "copy, same bytes (fwd)", "copy, same bytes (bwd)"]
    assert lines[2].split("|")[2].strip() == "50 / 25 e"  # fastnorm 1 ms, torch 2 ms; the reference's 0.8 ms is no peer
    assert lines[6].split("|")[2].strip() == "62" and lines[7].split("|")[2].strip() == f"62{common.HOST_MARK}"
    only_rms = headline_norms({"layernorm": doc("layernorm", None), "rmsnorm": doc("rmsnorm", 0.4)})
    assert only_rms.splitlines()[-1].split("|")[2].strip() == f"125{common.HOST_MARK}"
    assert "copy, same bytes" not in headline_norms({"layernorm": doc("layernorm", None)})


def test_report_headlines_in_gpu_time():
    """With GPU times in the records the headlines come again in GPU time alone (the best peer chosen by it, no host
    marks), under their own sentence in the report; without any, there is no such headline."""
    from fastnorm.report import GPU, build_markdown, headline_bn, headline_norms

    def doc(graph):
        recs = []
        for impl, ms, gms in (("fastnorm", 1.0, 0.5), ("torch", 2.0, 0.25), ("compile", 1.5, 1.0)):
            r = common.finish_record(common.record(impl=impl, n=128, dtype="bfloat16", direction="fwd",
                                                   group="sweep", layout="nchw", label="a", mode="train_fwd"),
                                     ms, 10**6, 2.0, host_ms=0.95 * ms)
            recs.append(common.finish_graph(r, gms, 2.0) if graph else r)
        return {"settings": {"directions": ["fwd"], "layouts": ["nchw"], "modes": ["train_fwd"]}, "records": recs}

    norms_gpu = headline_norms({"layernorm": doc(True)}, key=GPU).splitlines()
    assert norms_gpu[2].split("|")[2].strip() == "100 / 200 e"  # torch's 0.25 ms is the best peer on the GPU
    assert headline_norms({"layernorm": doc(True)}).splitlines()[2].split("|")[2].strip() == \
        f"50{common.HOST_MARK} / 33{common.HOST_MARK} c"
    assert headline_bn(doc(True), key=GPU).splitlines()[2].split("|")[3].strip() == "100 / 200 e"
    assert headline_norms({"layernorm": doc(False)}, key=GPU) is None and headline_bn(doc(False), key=GPU) is None
    committed = Path(__file__).resolve().parents[1] / "benchmarks" / "report"
    bn = common.read_json(committed / "batchnorm.json")  # measured with GPU times (session 27)
    for graph in (True, False):
        if not graph:
            bn["records"] = [{k: v for k, v in r.items() if not k.startswith("graph_")} for r in bn["records"]]
        results = [{"suite": "batchnorm", "json": "batchnorm.json", "reused": True, "doc": bn}]
        text = build_markdown(common.environment("cpu"), "cpu", False, None, results, True, "cmd", 0.0, committed)
        head = text[text.index("## Headline"):text.index("## Correctness")]
        assert ("The same cells in GPU time alone" in head) == graph
        assert head.count("| 256×64×56×56   | nchw") == (2 if graph else 1)


def test_targets_are_scored_as_timed_and_in_gpu_time():
    """The issues' targets by N and mode; a cell meets its target at or above it, counts a peer as faster only past
    the margin, is scored in GPU time only where fastnorm has one; the report's table says "–" without GPU times."""
    from fastnorm.bench import targets
    from fastnorm.report import targets_table

    assert [targets.norm_target("fwd", n) for n in (32, 128, 256, 384, 512, 65536, 131072)] == \
        [None, 70.0, 70.0, None, 90.0, 90.0, None]
    assert [targets.norm_target("bwd", n) for n in (128, 256, 512, 1024, 32768, 65536)] == \
        [None, 50.0, None, 80.0, 80.0, None]

    def rec(impl, ms, gms=None, **kw):
        r = common.finish_record(common.record(impl=impl, **kw), ms, 10**6, 2.0)  # 1 ms: 50% of a 2 GB/s copy
        return common.finish_graph(r, gms, 2.0) if gms else r

    ref = common.REFERENCE
    cells = [("a", 50.0, {"fastnorm": rec("fastnorm", 1.0, 0.5), "torch": rec("torch", 0.99, 0.6)}),  # within margin
             ("b", 60.0, {"fastnorm": rec("fastnorm", 1.0, 1.0), "torch": rec("torch", 0.9, 0.9)}),
             ("c", 40.0, {"fastnorm": rec("fastnorm", 2.0), ref: rec(ref, 0.1, 0.1)}),
             ("d", 60.0, {"fastnorm": rec("fastnorm", 1.0, 1.0), ref: rec(ref, 1.0, 0.9)}),  # the copy: 50, 56%
             ("e", 60.0, {"fastnorm": rec("fastnorm", 1.0, 1.0), ref: rec(ref, 1.0, 0.5)})]  # the copy: 50, 100%
    sc = targets.score(cells)
    assert sc.cells == 5 and sc.measured == {"timed": 5, "gpu": 4}
    assert sc.met == {"timed": 1, "gpu": 1} and sc.misses == {"timed": ["b", "c", "d", "e"], "gpu": ["b", "d", "e"]}
    assert sc.peer_faster == {"timed": 1, "gpu": 1}  # b only; the reference is no peer
    assert sc.copy_short == {"timed": ["d"], "gpu": ["d"]}  # e's copy reaches the target in one of its figures
    assert sc.missed_at("gpu") == ["b", "d" + targets.COPY_SHORT_MARK, "e"]

    bn = [rec(impl, ms, gms, dtype="bfloat16", layout="nchw", label="s", mode=mode)
          for mode in ("train_fwd", "eval_fwd") for impl, ms, gms in (("fastnorm", 0.8, 0.8), ("torch", 2.0, 1.0))]
    scores = targets.bn_scores({"records": bn})
    assert list(scores) == ["train_fwd", "eval_fwd"] and scores["train_fwd"].met == {"timed": 1, "gpu": 1}
    assert scores["eval_fwd"].met == {"timed": 0, "gpu": 0} and scores["eval_fwd"].misses["gpu"] == ["bf16 nchw s"]
    norm = [rec(impl, ms, dtype="bfloat16", group="sweep", n=n, direction="fwd", label=f"49152×{n}")
            for n in (128, 384) for impl, ms in (("fastnorm", 1.0), ("torch", 2.0))]
    table = targets_table({"layernorm": {"records": norm}, "batchnorm": {"records": bn}})
    row = next(line for line in table.splitlines() if line.startswith("| LN fwd"))
    assert [c.strip() for c in row.split("|")[3:7]] == ["1", "0 / –", "0 / –", "128"]  # N = 384 has no target
    assert "| BatchNorm train fwd" in table and targets_table({}) is None
    assert targets.COPY_SHORT_MARK not in table
    norm.append(rec(ref, 1.0, dtype="bfloat16", group="sweep", n=128, direction="fwd", label="49152×128"))  # 50%
    bn += [rec(ref, 1.0, dtype="bfloat16", layout="nchw", label="s", mode="eval_fwd")]  # 50%: eval's miss too
    table = targets_table({"layernorm": {"records": norm}, "batchnorm": {"records": bn}})
    assert "| 128" + targets.COPY_SHORT_MARK + " " in table and "(see the tables); 1" + targets.COPY_SHORT_MARK in table
    assert table.splitlines()[-1].startswith(targets.COPY_SHORT_MARK + " torch's copy of the same bytes")


def test_host_bound_cells_are_marked():
    """A record whose host time per call reaches HOST_BOUND_FRACTION of its measured time is marked in the tables,
    the notes and the report's headline; one below it, or without a host time (CPU timing), is not."""
    from fastnorm.report import _headline_cell

    frac = common.HOST_BOUND_FRACTION
    bound = common.finish_record(common.record(impl="fastnorm", label="a"), 0.1, 10**6, 2.0, host_ms=0.1 * frac)
    free = common.finish_record(common.record(impl="torch", label="a"), 0.2, 10**6, 2.0, host_ms=0.2 * frac * 0.99)
    untimed = common.finish_record(common.record(impl="liger", label="a"), 0.3, 10**6, 2.0)
    assert common.host_bound(bound) and not common.host_bound(free) and not common.host_bound(untimed)
    assert bound["host_ms"] == 0.1 * frac and "host_ms" not in untimed
    text = common.perf_table([bound, free, untimed], lambda r: r["label"], ["fastnorm", "torch", "liger"])
    row = next(line for line in text.splitlines() if line.startswith("| a "))
    assert row.count(common.HOST_MARK) == 1 and f"(%){common.HOST_MARK}" not in row
    assert f"({bound['pct_copy']:.0f}%){common.HOST_MARK}" in row
    assert f"{common.HOST_MARK} host-bound" in text and "(cells: fastnorm 1)" in text
    assert _headline_cell({"fastnorm": bound, "torch": free}) == f"{bound['pct_copy']:.0f}{common.HOST_MARK} / " \
        f"{free['pct_copy']:.0f} e"
    assert _headline_cell({"fastnorm": free, "torch": bound}).endswith(f"{common.HOST_MARK} e")
    assert common.Timer("cpu").host_ms(lambda: None) is None


def test_gpu_time_cells_speedups_and_notes():
    """A record with a GPU time alone shows its % after the main one (marked), the speed-up column adds the
    speed-up on GPU times (naming its peer where another one is fastest there), the notes say what the mark means
    and list failed captures; records without one keep the plain cells."""
    g = common.GRAPH_MARK
    mine = common.finish_graph(_rec("fastnorm", "a", 1.0), 0.5, 2.0)  # 1e6 bytes: 2 GB/s = 200% of a 1 GB/s copy
    torch_rec = common.finish_graph(_rec("torch", "a", 0.5), 1.0, 2.0)
    liger = common.finish_graph(_rec("liger", "a", 0.8), 0.4, 2.0)
    assert mine["graph_ms"] == 0.5 and mine["graph_gbps"] == pytest.approx(2.0)
    assert mine["graph_pct_copy"] == pytest.approx(100.0)
    failed = _rec("fastnorm", "b", 1.0, graph_error="RuntimeError: capture")
    plain = _rec("torch", "b", 2.0)
    text = common.perf_table([mine, torch_rec, liger, failed, plain], lambda r: r["label"],
                             ["fastnorm", "torch", "liger"])
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].split("|")][2:5] == [f"{i} GB/s (% copy) · %{g}"
                                                            for i in ("fastnorm", "torch", "liger")]
    row_a = next(line for line in lines if line.startswith("| a "))
    assert f"1 (50%) · 100%{g}" in row_a and f"2 (100%) · 50%{g}" in row_a
    assert f"0.50× (torch) · 0.80×{g} (liger)" in row_a  # GPU times: liger 0.4 ms is the fastest peer
    row_b = next(line for line in lines if line.startswith("| b "))
    assert g not in row_b and row_b.split("|")[-2].strip() == "2.00× (torch)"
    assert f"- {common.GRAPH_NOTE}" in text and f"- {g} fastnorm not captured: RuntimeError: capture (at b)" in text
    assert common.speedup({"fastnorm": mine, "torch": plain}, "graph_ms") is None
    assert common.GRAPH_NOTE not in common.perf_table([plain], lambda r: r["label"], ["torch"])


def test_measurer_times_the_graph_factory_and_survives_a_failed_capture():
    """With a factory the meter asks the timer for the GPU time alone (None on a CPU: nothing added); a failed
    capture keeps the timed record "ok" with the error; ``graphs=False`` never asks."""
    class Timer(common.Timer):
        def graph_ms(self, make):
            fn = make()
            fn()
            return 0.25

    meter = common.Measurer(Timer("cpu", warmup_ms=0, rep_ms=1), copy_gbps=4.0, deadline=common.Deadline(None))
    made = []
    rec = meter.time(common.record(impl="a", label="x"), 1000, lambda: None, lambda: made.append(1) or (lambda: None))
    assert rec["status"] == "ok" and rec["graph_ms"] == 0.25 and made == [1]
    assert rec["graph_pct_copy"] == pytest.approx(100 * common.gbps(1000, 0.25) / 4.0)

    def broken():
        raise RuntimeError("operation not permitted when stream is capturing")
    rec = meter.time(common.record(impl="a", label="y"), 1000, lambda: None, broken)
    assert rec["status"] == "ok" and "graph_ms" not in rec and rec["graph_error"].startswith("RuntimeError: operation")
    assert meter.lost is None

    def oom():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    rec = meter.time(common.record(impl="a", label="y"), 1000, lambda: None, oom)
    assert rec["status"] == "ok" and rec["graph_error"] == "out of memory" and meter.lost is None
    off = common.Measurer(Timer("cpu", warmup_ms=0, rep_ms=1), 4.0, common.Deadline(None), graphs=False)
    assert "graph_ms" not in off.time(common.record(impl="a", label="z"), 1000, lambda: None, broken)
    cpu = common.Measurer(common.Timer("cpu", warmup_ms=0, rep_ms=1), 4.0, common.Deadline(None))
    assert "graph_ms" not in cpu.time(common.record(impl="a", label="z"), 1000, lambda: None, lambda: lambda: None)


def test_markdown_table_alignment():
    text = common.markdown_table(["a", "long header"], [["1", "2"], ["333", "4"]])
    widths = {len(line) for line in text.splitlines()}
    assert len(widths) == 1


# ------------------------------------------------------------------------------------------- plots, JSON


def _sweep_records():
    recs = []
    for impl, speed in (("fastnorm", 1.0), ("torch", 0.6), ("liger", 0.8)):
        for n in (256, 1024, 4096):
            r = common.record(impl=impl, n=n, label=f"49152×{n}", group="sweep")
            common.finish_record(r, n / 1e5 / speed, 49152 * n * 4, copy_gbps=4000.0)
            recs.append(r)
    recs.append(common.record(impl="compile", n=256, label="49152×256", group="sweep", status="error", error="x"))
    return recs


def test_plot_functions_write_pngs(tmp_path):
    recs = _sweep_records()
    p1 = common.plot_sweep([("forward", recs), ("backward", recs)], 4000.0, tmp_path / "sweep.png", "synthetic")
    bars = [dict(r, label=f"s{r['n']}") for r in recs]
    p2 = common.plot_bars([("train fwd", bars)], tmp_path / "bars.png", "synthetic")
    graphed = [dict(r, graph_pct_copy=r["pct_copy"] * 1.5) if r["status"] == "ok" else r for r in bars]
    p3 = common.plot_bars([("train fwd", graphed)], tmp_path / "graphed.png", "synthetic")  # GPU times as outlines
    for p in (p1, p2, p3):
        assert p.read_bytes()[:8] == PNG_MAGIC and p.stat().st_size > 5000
    assert p3.read_bytes() != p2.read_bytes()


def test_suite_plots_and_markdown_from_synthetic_docs(tmp_path):
    recs = [dict(r, dtype="bfloat16", direction=d, rows=49152) for r in _sweep_records() for d in ("fwd", "bwd")]
    doc = {"suite": "rmsnorm", "title": "RMSNorm", "env": {"device_name": "synthetic"}, "copy": {"gbps": 4000.0},
           "settings": {"dtypes": ["bfloat16"], "directions": ["fwd", "bwd"], "impls": list(norms.IMPLS),
                        "sweep_rows": 49152, "residual": False},
           "unavailable": {"apex": "ModuleNotFoundError"}, "notes": ["a note"], "records": recs}
    doc["plots"] = norms.plot(doc, tmp_path)
    assert doc["plots"] == ["rmsnorm_bfloat16.png"]
    assert (tmp_path / "rmsnorm_bfloat16.png").read_bytes()[:8] == PNG_MAGIC
    md = norms.markdown(doc)
    assert "RMSNorm backward (dx, dγ), bfloat16" in md and "apex: not available" in md
    assert "![rmsnorm_bfloat16.png](rmsnorm_bfloat16.png)" in md

    bn_recs = [dict(r, dtype="float32", layout="nchw", mode=m, label=f"8×64×{r['n']}×1") for r in _sweep_records()
               for m in ("train_fwd", "eval_fwd")]
    bdoc = {"suite": "batchnorm", "title": "BatchNorm", "env": {"device_name": "synthetic"}, "copy": {"gbps": 4e3},
            "settings": {"dtypes": ["float32"], "layouts": ["nchw"], "modes": ["train_fwd", "eval_fwd"],
                         "impls": list(batchnorm.IMPLS)}, "records": bn_recs}
    assert batchnorm.plot(bdoc, tmp_path) == ["batchnorm_float32_nchw.png"]
    assert (tmp_path / "batchnorm_float32_nchw.png").read_bytes()[:8] == PNG_MAGIC
    assert "8×64×1024×1 train fwd" in batchnorm.markdown(bdoc)


def test_json_round_trip(tmp_path):
    doc = {"suite": "x", "dtype": torch.bfloat16, "shape": (2, 3), "inf": math.inf,
           "records": [common.record(impl="a", ms=0.125, bytes=10)]}
    path = common.write_json(doc, tmp_path / "sub" / "x.json")
    back = common.read_json(path)
    assert back["dtype"] == "bfloat16" and back["shape"] == [2, 3] and back["inf"] == math.inf
    assert back["records"] == [{"impl": "a", "ms": 0.125, "bytes": 10, "status": "ok"}]


# ------------------------------------------------------------------------------------------- end to end


def _args(module, tmp_path, **kw):
    p = argparse.ArgumentParser()
    module.add_arguments(p)
    args = p.parse_args(["--device", "cpu", "--out", str(tmp_path), "--warmup-ms", "0", "--rep-ms", "1",
                         "--copy-mib", "1"])
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def test_norms_suite_end_to_end_on_cpu(tmp_path):
    args = _args(norms, tmp_path, op="layernorm", shapes="4x40,3x65", dtypes="fp32",
                 impls="fastnorm,torch,compile,apex")
    args.compile = "none"
    doc = norms.run(args)
    by = {(r["impl"], r["label"], r["direction"]): r for r in doc["records"]}
    assert set(doc["settings"]["impls"]) <= {"fastnorm", "torch", "compile"}  # apex is not installed here
    assert "apex" in doc["unavailable"]
    rec = by[("torch", "4×40", "bwd")]
    assert rec["status"] == "ok" and rec["bytes"] == common.layer_norm_bytes("bwd", 4, 40, 4, 4)
    assert rec["max_rel_err_vs_fp32"] < 1e-5 and "mismatch" not in rec
    assert "compile" in doc["unavailable"] and not any(r["impl"] == "compile" for r in doc["records"])
    fast = by[("fastnorm", "3×65", "fwd")]
    assert fast["status"] == "ok" and "mismatch" not in fast
    assert (tmp_path / "layernorm.json").is_file() and (tmp_path / "layernorm_float32.png").is_file()
    assert common.read_json(tmp_path / "layernorm.json")["records"] == doc["records"]


def test_norms_suite_same_bytes_reference_on_cpu(tmp_path):
    """By default each case also times the same-bytes reference in both directions, after the implementations,
    with their fields and byte count, unchecked; its column comes last and the intro says what it is."""
    args = _args(norms, tmp_path, op="layernorm", shapes="4x40", dtypes="fp32", no_plots=True)
    args.compile = "none"
    doc = norms.run(args)
    assert doc["settings"]["impls"] == ["fastnorm", "torch", common.REFERENCE]
    assert [r["impl"] for r in doc["records"]][-2:] == [common.REFERENCE] * 2
    mine = {r["direction"]: r for r in doc["records"] if r["impl"] == "fastnorm"}
    for r in (r for r in doc["records"] if r["impl"] == common.REFERENCE):
        assert r["status"] == "ok" and "mismatch" not in r and "max_rel_err_vs_fp32" not in r, r
        assert r["bytes"] == norms.case_bytes(norms.Case("layernorm", torch.float32, 4, 40, "custom"), r["direction"],
                                              False)
        same = {k: v for k, v in mine[r["direction"]].items() if k in ("suite", "op", "dtype", "rows", "n", "group",
                                                                        "model", "label", "residual", "direction")}
        assert len(same) == 10 and same.items() <= r.items()
    assert sorted(r["direction"] for r in doc["records"] if r["impl"] == common.REFERENCE) == ["bwd", "fwd"]
    md = norms.markdown(doc)
    header = next(line for line in md.splitlines() if line.startswith("| rows×N"))
    assert [c.strip() for c in header.split("|")][-3:-1] == ["copy, same bytes GB/s (% copy)", "fastnorm vs best peer"]
    assert "the ceiling at this size, not a peer" in md

    args = _args(norms, tmp_path, op="rmsnorm", shapes="4x40", dtypes="fp32", impls="fastnorm", ops="fwd",
                 no_plots=True)
    doc = norms.run(args)
    assert doc["settings"]["impls"] == ["fastnorm"] and [r["impl"] for r in doc["records"]] == ["fastnorm"]
    assert "copy, same bytes" not in norms.markdown(doc)


def test_norms_suite_residual_skips_the_reference(tmp_path):
    args = _args(norms, tmp_path, op="rmsnorm", shapes="3x33", dtypes="bf16", impls="torch,copy", residual=True,
                 no_plots=True)
    doc = norms.run(args)
    ref = [r for r in doc["records"] if r["impl"] == common.REFERENCE]
    assert sorted(r["direction"] for r in ref) == ["bwd", "fwd"]
    assert all(r["status"] == "skipped" and "fused residual" in r["reason"] and "mismatch" not in r for r in ref)
    assert all(r["status"] == "ok" for r in doc["records"] if r["impl"] == "torch")
    assert "copy not measured: no single-kernel same-bytes reference with a fused residual" in norms.markdown(doc)


def test_norms_suite_residual_and_budget(tmp_path):
    args = _args(norms, tmp_path, op="rmsnorm", shapes="3x33", dtypes="bf16", impls="torch", residual=True,
                 no_plots=True)
    doc = norms.run(args)
    (fwd, bwd) = sorted(doc["records"], key=lambda r: r["direction"], reverse=True)
    assert fwd["status"] == bwd["status"] == "ok"
    assert fwd["bytes"] == common.rms_norm_bytes("fwd", 3, 33, 2, 2, residual_size=2, residual_out_size=2)
    assert "mismatch" not in bwd

    args = _args(norms, tmp_path, op="rmsnorm", shapes="3x33", dtypes="fp32", impls="torch", time_budget=0.0,
                 no_plots=True)
    doc = norms.run(args)
    assert {r["status"] for r in doc["records"]} == {"skipped"}


def test_batchnorm_suite_end_to_end_on_cpu(tmp_path):
    args = _args(batchnorm, tmp_path, shapes="4x3x5x5", dtypes="fp32", impls="torch,fastnorm",
                 ops="train_fwd,train_bwd,eval_fwd,frozen_bwd")
    doc = batchnorm.run(args)
    recs = [r for r in doc["records"] if r["impl"] == "torch"]
    assert {r["mode"] for r in recs} == set(common.BN_MODES)
    assert {r["layout"] for r in recs} == {"nchw", "channels_last"}
    for r in recs:
        assert r["status"] == "ok", r
        assert r["bytes"] == common.batch_norm_bytes(r["mode"], 300, 3, 4, 4)
        assert "mismatch" not in r
    assert sorted(doc["settings"]["impls"]) == ["fastnorm", "torch"]
    for r in doc["records"]:
        if r["impl"] == "fastnorm":
            assert r["status"] == "ok" and "mismatch" not in r, r
    assert (tmp_path / "batchnorm.json").is_file()
    assert (tmp_path / "batchnorm_float32_channels_last.png").is_file()


def test_batchnorm_suite_same_bytes_reference_on_cpu(tmp_path):
    """The BatchNorm suite's reference: one record per mode and layout, timed with the mode's bytes, never checked,
    the last column of its tables; left out when ``--impls`` omits it; the report's BatchNorm headline shows it as
    one column (a forward's / a backward's %), and its best peer is never the reference."""
    from fastnorm.report import headline_bn

    args = _args(batchnorm, tmp_path, shapes="4x3x5x5", dtypes="fp32", ops="train_fwd,train_bwd,eval_fwd,frozen_bwd",
                 impls="torch,fastnorm,copy")
    doc = batchnorm.run(args)
    refs = [r for r in doc["records"] if r["impl"] == common.REFERENCE]
    assert {(r["mode"], r["layout"]) for r in refs} == {(m, lay) for m in common.BN_MODES for lay in batchnorm.LAYOUTS}
    for r in refs:
        assert r["status"] == "ok" and "mismatch" not in r and "max_rel_err_vs_fp32" not in r, r
        assert r["bytes"] == common.batch_norm_bytes(r["mode"], 300, 3, 4, 4)
    assert doc["settings"]["impls"][-1] == common.REFERENCE
    table = batchnorm.markdown(doc)
    header = next(line for line in table.splitlines() if line.startswith("| shape, mode"))
    assert header.split("|")[-3].strip() == f"{common.REFERENCE_TITLE} GB/s (% copy)"  # then fastnorm vs best peer
    assert "not a peer" in table
    head = headline_bn(doc, "float32")
    assert f"{common.REFERENCE_TITLE} (fwd / bwd)" in head.splitlines()[0]
    # The reference made fastest everywhere: the best peer is still torch ("e"), never the reference.
    for r in refs:
        r["ms"], r["pct_copy"] = 1e-9, 1e9
    assert all(line.split("|")[3].strip().endswith(" e") for line in headline_bn(doc, "float32").splitlines()[2:])
    without = batchnorm.run(_args(batchnorm, tmp_path, shapes="4x3x5x5", dtypes="fp32", ops="eval_fwd",
                                  impls="torch,fastnorm"))
    assert not any(r["impl"] == common.REFERENCE for r in without["records"])
    assert common.REFERENCE_TITLE not in headline_bn(without, "float32")


def _graph_calls(monkeypatch) -> dict:
    """Make each suite record's GPU-time factory run on the CPU: the timer times ``make()``'s call, and its first
    result is kept per (implementation, label, layout, mode or direction)."""
    made = {}
    time = common.Measurer.time

    def timed(self, rec, nbytes, fn, make=None):
        if make is not None:
            out = make()()
            made[(rec["impl"], rec["label"], rec.get("layout"), rec.get("mode") or rec.get("direction"))] = out
        return time(self, rec, nbytes, fn, make)

    monkeypatch.setattr(common.Measurer, "time", timed)
    monkeypatch.setattr(common.Timer, "graph_ms", lambda self, make: self(make()))
    return made


def test_batchnorm_suite_graph_factories_compute_each_mode(tmp_path, monkeypatch):
    """Every record gets a GPU-time figure; each mode's factory gives that mode's result (a backward's after a
    forward of its own: fastnorm's dx, dγ, dβ equal torch's), the reference's its copy / add; ``--no-graphs``
    measures none."""
    made = _graph_calls(monkeypatch)
    args = _args(batchnorm, tmp_path, shapes="4x3x5x5", dtypes="fp32", impls="fastnorm,torch,copy", no_plots=True)
    doc = batchnorm.run(args)
    assert doc["settings"]["graphs"] is False  # asked for, but a CPU run measures none (here: the stand-in did)
    assert all(r["status"] == "ok" and r["graph_ms"] > 0 for r in doc["records"])
    for (impl, label, layout, mode), out in made.items():
        if impl == common.REFERENCE:
            continue
        theirs = made[("torch", label, layout, mode)]
        if mode.endswith("bwd"):
            assert len(out) == 3 and out[0].shape == (4, 3, 5, 5)
            for a, e in zip(out, theirs, strict=True):
                torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
        else:
            assert out.shape == (4, 3, 5, 5)
            torch.testing.assert_close(out, theirs, rtol=1e-4, atol=1e-4)
    assert f"%{common.GRAPH_MARK}" in batchnorm.markdown(doc) and common.GRAPH_NOTE in batchnorm.markdown(doc)
    doc = batchnorm.run(_args(batchnorm, tmp_path, shapes="4x3x5x5", dtypes="fp32", impls="fastnorm", ops="eval_fwd",
                              no_plots=True, no_graphs=True))
    assert doc["settings"]["graphs"] is False and not any("graph_ms" in r for r in doc["records"])


def test_same_bytes_reference_captures_kernels(monkeypatch):
    """The reference's forward is ``copy_`` as timed and an add of 0 in GPU time (a captured ``copy_`` is a graph
    memcpy node, NOTES.md session 29): both give x; the backward's add gives x + dy in both."""

    class Meter:
        def __init__(self):
            self.calls = {}

        def time(self, rec, nbytes, fn, make):
            self.calls[rec["key"]] = (fn().clone(), make)

    x, dy = torch.randn(3, 7), torch.randn(3, 7)
    meter = Meter()
    common.measure_reference(meter, {k: {"key": k} for k in ("fwd", "bwd")}, x, dy, lambda k: 4, lambda k: k == "fwd")
    fwd_eager, fwd_make = meter.calls["fwd"]
    bwd_eager, bwd_make = meter.calls["bwd"]
    assert torch.equal(fwd_eager, x) and torch.equal(bwd_eager, x + dy)
    monkeypatch.setattr(torch.Tensor, "copy_", lambda *a, **k: pytest.fail("captured a copy_"))
    assert torch.equal(fwd_make()(), x) and torch.equal(bwd_make()(), x + dy)
    # the tables say so where the suite recorded it (documents from before captured the copy itself)
    old, new = {"settings": {}}, {"settings": {"reference_captured_forward": common.REFERENCE_CAPTURED_FORWARD}}
    assert "GPU time" not in common.reference_calls(old)
    assert common.REFERENCE_CAPTURED_FORWARD in common.reference_calls(new, plural=True)


def test_norms_suite_graph_factories_compute_each_direction(tmp_path, monkeypatch):
    made = _graph_calls(monkeypatch)
    args = _args(norms, tmp_path, op="layernorm", shapes="4x40", dtypes="fp32", impls="fastnorm,torch",
                 no_plots=True)
    args.compile = "none"
    doc = norms.run(args)
    assert all(r["status"] == "ok" and r["graph_ms"] > 0 for r in doc["records"])
    fwd, bwd = made[("fastnorm", "4×40", None, "fwd")], made[("fastnorm", "4×40", None, "bwd")]
    torch.testing.assert_close(fwd[0], made[("torch", "4×40", None, "fwd")][0])
    assert len(bwd) == 3
    for a, e in zip(bwd, made[("torch", "4×40", None, "bwd")], strict=True):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)


def test_bench_cli(capsys):
    assert bench_main([]) == 2
    assert bench_main(["--help"]) == 0
    assert "layernorm" in capsys.readouterr().out
    assert bench_main(["nosuch"]) == 2
    if not torch.cuda.is_available():
        # without --shapes, a CPU run is refused: the benchmarks measure GPU memory bandwidth
        assert bench_main(["layernorm", "--device", "cpu"]) == 1
        assert "No CUDA device" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        bench_main(["batchnorm", "--device", "cpu", "--shapes", "2x3x4x4", "--ops", "train"])
    assert exc.value.code == 2


def test_compile_is_limited_to_its_subset(tmp_path):
    # custom shapes are not in the sweep subset: torch.compile is skipped there (nothing is compiled)
    args = _args(norms, tmp_path, op="layernorm", shapes="3x16", dtypes="fp32", impls="torch,compile",
                 no_plots=True)
    doc = norms.run(args)
    comp = [r for r in doc["records"] if r["impl"] == "compile"]
    assert len(comp) == 2 and all(r["status"] == "skipped" and "subset" in r["reason"] for r in comp)
    assert any("torch.compile measured only at N in {256, 1024, 4096, 16384}" in n for n in doc["notes"])
    args = _args(batchnorm, tmp_path, shapes="2x3x4x4", dtypes="fp32", impls="compile", layouts="nchw",
                 no_plots=True)
    doc = batchnorm.run(args)
    assert {r["status"] for r in doc["records"]} == {"skipped"} and len(doc["records"]) == 4


def test_syncbn_summary_overheads_ratios_and_tables(tmp_path):
    """Overheads are sync − local of the same library; the graph ratio compares fastnorm's captured step with
    torch's eager one; tables and the plot render every column."""
    from fastnorm.bench import syncbn

    ms = {"torch_local": 0.3, "torch_sync": 1.1, "fastnorm_local": 0.5, "fastnorm_sync": 0.9,
          "fastnorm_local_graph": 0.02, "fastnorm_sync_graph": 0.05}
    recs = [dict(shape=[16, 64, 8, 8], layout="nchw", dtype="bf16", impl=i, status="ok", ms=v) for i, v in ms.items()]
    recs.append(dict(shape=[16, 64, 4, 4], layout="nchw", dtype="bf16", impl="torch_sync", status="error", error="x"))
    s = syncbn.summarize(recs, [])
    row = s["layers"][0]
    assert row["torch_overhead"] == pytest.approx(0.8) and row["fastnorm_overhead"] == pytest.approx(0.4)
    assert row["ratio"] == pytest.approx(0.5) and row["meets_target"] is False
    assert row["fastnorm_graph_overhead"] == pytest.approx(0.03) and row["graph_ratio"] == pytest.approx(0.0375)
    assert row["graph_meets_target"] is True
    assert s["layers"][1]["ratio"] is None and s["all_meet_target"] is False and s["all_graph_meet_target"] is False
    doc = {"env": {"world_size": 2, "device_name": "dev", "torch": "t", "triton": "tr", "backend": "nccl"},
           "iters": 3, "warmup": 1, "summary": s, "layers": recs, "stack": []}
    text = syncbn.tables(doc)
    assert "graph ratio" in text and "0.04" in text and "NOT met everywhere" in text
    assert syncbn.plot(doc, tmp_path / "s.png").read_bytes().startswith(PNG_MAGIC)


def test_environment_names_the_source():
    import re

    env = common.environment("cpu")
    assert re.fullmatch(r"[0-9a-f]{12}", env["source_sha"]) and env["source_sha"] == common.source_sha()


def test_report_names_each_suites_run(tmp_path):
    """A report assembled from several runs says, per suite, when it ran and on which source."""
    import json
    import re
    from pathlib import Path

    from fastnorm.report import build_markdown

    committed = Path(__file__).resolve().parents[1] / "benchmarks" / "report"
    env = common.environment("cpu")
    results = []
    for suite, date, sha in (("layernorm", "2026-01-01 10:00 UTC", "aaaaaaaaaaaa"),
                             ("batchnorm", "2026-01-02 11:00 UTC", "bbbbbbbbbbbb")):
        doc = json.loads((committed / f"{suite}.json").read_text())
        doc["env"] = {**doc["env"], "date": date, "source_sha": sha}
        if results:  # the committed runs may come from two devices: one device first
            doc["env"].update({k: results[0]["doc"]["env"].get(k) for k in ("device_name", "sm_count", "memory_gib",
                                                                           "cuda")})
        results.append({"suite": suite, "json": f"{suite}.json", "reused": True, "doc": doc})
    text = build_markdown(env, "cpu", False, None, results, True, "fastnorm report", 0.0, tmp_path)
    assert "layernorm 2026-01-01 10:00 UTC (source aaaaaaaaaaaa)" in text
    assert "batchnorm 2026-01-02 11:00 UTC (source bbbbbbbbbbbb)" in text
    device = results[0]["doc"]["env"]["device_name"]
    assert f"- Device: {env['device_name']}" in text  # one device: this run's line
    results[1]["doc"]["env"] = {**results[1]["doc"]["env"], "device_name": "Other GPU"}  # two: each with its suites
    text = build_markdown(env, "cpu", False, None, results, True, "fastnorm report", 0.0, tmp_path)
    assert re.search(rf"- Devices: {re.escape(device)} \([^)]*\): layernorm; Other GPU \([^)]*\): batchnorm\n", text)


def test_compile_peers_compile_in_this_process(monkeypatch):
    """The torch.compile peers compile in the benchmark's process (no background pool of compile workers
    competing with the timed rows), and the compiled function computes what the eager one does."""
    import torch._inductor.config as inductor_config

    monkeypatch.setattr(inductor_config, "compile_threads", 4)  # restored afterwards for the other tests
    x = torch.randn(5, 7)
    compiled = common.compile_in_process(lambda t: torch.nn.functional.layer_norm(t, (7,)) * 2 + 1)
    assert inductor_config.compile_threads == 1
    torch.testing.assert_close(compiled(x), torch.nn.functional.layer_norm(x, (7,)) * 2 + 1)
