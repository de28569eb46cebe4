"""A/B of two source trees of fastnorm's BatchNorm on one GPU, in alternating subprocesses.

    python3 benchmarks/scripts/bn_ab.py SRC_A SRC_B [rounds]

For each tree and shape (bf16 input, fp32 parameters): the report's timing (triton.testing.do_bench with
its L2 flush, median), the GPU time of back-to-back calls (CUDA events around 50 calls, no flush: the
host runs ahead), and the host time of one call (perf_counter, right after a synchronize). A row whose
report timing exceeds its back-to-back GPU time is bounded by the host, not by the kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

SHAPES = [(8, 256, 128, 128), (256, 256, 28, 28), (256, 64, 56, 56), (128, 2048, 7, 7), (32, 512, 28, 28)]


def _case_ops(shape, cl):
    """The timed calls of one case: training forward, training backward (dx, dw, db), evaluation forward, frozen
    backward (dx, dw, db with the running statistics)."""
    import torch

    import fastnorm

    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(shape, device="cuda", generator=g).to(torch.bfloat16)
    if cl:
        x = x.to(memory_format=torch.channels_last)
    c = shape[1]
    w = torch.rand(c, device="cuda") + 0.5
    b = torch.randn(c, device="cuda")
    rm, rv = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
    dy = torch.randn_like(x)
    xg = x.detach().requires_grad_(True)
    wg, bg = w.detach().requires_grad_(True), b.detach().requires_grad_(True)
    y = fastnorm.batch_norm(xg, None, None, wg, bg, True, 0.1, 1e-5)
    y_frozen = fastnorm.batch_norm(xg, rm, rv, wg, bg, False, 0.1, 1e-5)
    return {
        "train_fwd": lambda: fastnorm.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5),
        "train_bwd": lambda: torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True),
        "eval_fwd": lambda: fastnorm.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5),
        "frozen_bwd": lambda: torch.autograd.grad(y_frozen, (xg, wg, bg), dy, retain_graph=True),
    }


def child(shape_list):
    import torch
    import triton

    out = []
    for shape in shape_list:
        for cl in (False, True):
            for name, fn in _case_ops(shape, cl).items():
                fn()
                torch.cuda.synchronize()
                rep = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(50):
                    fn()
                e.record()
                torch.cuda.synchronize()
                b2b = s.elapsed_time(e) / 50 * 1e3
                host = []
                for _ in range(20):
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    fn()
                    host.append((time.perf_counter() - t) * 1e6)
                host.sort()
                out.append(dict(shape=shape, cl=cl, op=name, report_us=rep, b2b_us=b2b, host_us=host[len(host) // 2]))
    print("RESULT " + json.dumps(out))


def main():
    if sys.argv[1] == "--child":
        child([tuple(s) for s in json.loads(sys.argv[2])])
        return
    srcs = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    res = {s: [] for s in srcs}
    for _ in range(rounds):
        for src in srcs:
            env = dict(os.environ, PYTHONPATH=src)
            p = subprocess.run([sys.executable, __file__, "--child", json.dumps(SHAPES)], env=env, capture_output=True,
                               text=True, timeout=280)
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            if not line:
                print(src, "failed:", p.stderr[-2000:])
                continue
            res[src].append(json.loads(line[0][7:]))
    print(f"{'shape':22s} {'op':10s} " + " | ".join(f"{s[-24:]:>36s}" for s in srcs))
    print(" " * 33 + " | ".join(f"{'report / b2b / host us (min over rounds)':>36s}" for _ in srcs))
    first = res[srcs[0]][0]
    for i, r in enumerate(first):
        cells = []
        for s in srcs:
            runs = [run[i] for run in res[s]]
            cells.append(f"{min(x['report_us'] for x in runs):10.1f} {min(x['b2b_us'] for x in runs):10.1f} "
                         f"{min(x['host_us'] for x in runs):10.1f}   ")
        tag = ("CL " if r["cl"] else "") + "x".join(map(str, r["shape"]))
        print(f"{tag:22s} {r['op']:10s} " + " | ".join(cells))


if __name__ == "__main__":
    main()
