"""A/B of source trees and config overrides of fastnorm's BatchNorm on one GPU, in alternating subprocesses.

    python3 benchmarks/scripts/bn_ab.py [--ops train_fwd,eval_fwd] [--rounds 2] SPEC [SPEC ...]

SPEC is a source tree (the directory put on PYTHONPATH, e.g. ``src``), optionally followed by overrides of
``fastnorm.kernels.config``: ``src@BN_ITEM={"fused": 131072, "stream": 65536};BN_WARPS=4`` (Python literals); or
``torch``: torch's own ``F.batch_norm``, timed the same way (the peer to beat, in the same process pattern; run from
the repository root, whose ``src`` builds the cases; its ERR flag is fastnorm's check, the same in every column).
The cases are ``tune_batchnorm.VARIANT_CASES`` filtered by ``$BN_VARIANT_CASES`` (';'-separated substrings of
their keys), built, timed and checked with ``tune_batchnorm``'s own functions. Per case and op each spec reports
the report's timing (``do_bench``, L2 flushed, median), the GPU time of back-to-back calls (CUDA events around
50 calls, no flush: the host runs ahead, so this is the kernels' time once the host is faster than they are) and
the host time of one call (after a synchronize); as % of copy on the fewest bytes, the best of the rounds. A
result further than the suite's tolerance from torch's is flagged ``ERR``. With ``--graph`` the first column is
the op captured in a CUDA graph, its replays timed the same way: GPU time alone, for hosts whose per-call time
reaches the GPU's (the report timing then measures the host); the op is then made on a side stream, so the other two
columns of a backward include its cross-stream waits and compare only with other ``--graph`` runs.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _overrides(text: str) -> dict:
    out = {}
    for item in filter(None, text.split(";")):
        name, value = item.split("=", 1)
        out[name.strip()] = ast.literal_eval(value.strip())
    return out


def child(ops: list[str], overrides: dict, impl: str, graph: bool = False) -> None:
    import torch
    import tune_batchnorm as tb

    tb._apply_overrides(overrides)
    copy_bw = tb.copy_bandwidth()
    out = []
    for shape, dtype_name, cl in tb.selected_cases():
        case = tb.make_case(shape, dtype_name, cl)
        for op in ops:
            err = tb.compare(op, case)
            if graph:
                stream = torch.cuda.Stream()
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):
                    fn, _ = tb.runner(op, impl, case)
                    report = tb.bench(tb.graphed(fn, stream))
                torch.cuda.current_stream().wait_stream(stream)
            else:
                fn, _ = tb.runner(op, impl, case)
                report = tb.bench(fn)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(50):
                fn()
            end.record()
            torch.cuda.synchronize()
            b2b = start.elapsed_time(end) / 50 * 1e-3
            host = []
            for _ in range(20):
                torch.cuda.synchronize()
                t = time.perf_counter()
                fn()
                host.append(time.perf_counter() - t)
            nbytes = tb.fewest_bytes(op, case)
            out.append(dict(case=tb.case_key(shape, dtype_name, cl), op=op, err=err,
                            ok=err <= (2e-2 if dtype_name == "bf16" else 1e-4),
                            report_pct=100 * nbytes / report / copy_bw, b2b_pct=100 * nbytes / b2b / copy_bw,
                            host_us=sorted(host)[len(host) // 2] * 1e6))
        del case
        torch.cuda.empty_cache()
    print("RESULT " + json.dumps(dict(copy_GBps=copy_bw / 1e9, rows=out)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--ops", default="train_fwd,train_bwd,eval_fwd,frozen_bwd")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=280)
    ap.add_argument("--graph", action="store_true", help="time the op captured in a CUDA graph (GPU time alone)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--impl", default="fastnorm", help=argparse.SUPPRESS)
    args = ap.parse_args()
    ops = args.ops.split(",")
    if args.child is not None:
        child(ops, _overrides(args.child), args.impl, args.graph)
        return
    runs: list[list] = [[] for _ in args.specs]  # by position: a spec given twice is timed twice (noise)
    for _ in range(args.rounds):
        for k, spec in enumerate(args.specs):
            src, _, ov = spec.partition("@")
            impl = "torch" if src == "torch" else "fastnorm"
            if impl == "torch" and ov:
                raise SystemExit(f"{spec}: the torch spec takes no config overrides")
            env = dict(os.environ, PYTHONPATH=os.path.abspath("src" if impl == "torch" else src))
            try:
                cmd = [sys.executable, __file__, "--ops", args.ops, "--impl", impl,
                       *(["--graph"] if args.graph else []), "--child", ov, "x"]
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(spec, f"timed out after {args.timeout} s")
                continue
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            if not line:
                print(spec, "failed:", p.stderr[-2000:])
                continue
            runs[k].append(json.loads(line[0][7:]))
    done = [k for k in range(len(args.specs)) if runs[k]]
    if not done:
        raise SystemExit("no spec produced a result")
    for i, k in enumerate(done):
        copies = ", ".join(f"{r['copy_GBps']:.0f}" for r in runs[k])
        print(f"[{i}] {args.specs[k]}  (copy {copies} GB/s)")
    timing = "CUDA-graph replay" if args.graph else "report timing"
    print(f"% of copy, {timing} / back-to-back, best of the rounds; host µs of one call; ERR: off torch's result")
    table = []
    for j, row in enumerate(runs[done[0]][0]["rows"]):
        cells = []
        for k in done:
            rs = [r["rows"][j] for r in runs[k]]
            flag = "" if all(r["ok"] for r in rs) else " ERR"
            cells.append(f"{max(r['report_pct'] for r in rs):5.1f} {max(r['b2b_pct'] for r in rs):5.1f} "
                         f"{min(r['host_us'] for r in rs):6.0f}{flag}")
        table.append((row, cells))
    width = max(len(c) for _, cells in table for c in cells)
    print(f"{'case':30s} {'op':10s} " + " | ".join(f"{f'[{i}]':>{width}s}" for i in range(len(done))))
    for row, cells in table:
        print(f"{row['case']:30s} {row['op']:10s} " + " | ".join(f"{c:>{width}s}" for c in cells))

if __name__ == "__main__":
    main()
