"""The BatchNorm training forward's GPU time, single-read (resident) kernel against the two-launch design.

    PYTHONPATH=src python3 benchmarks/scripts/bn_resident_ab.py [--out FILE.json]

Each variant's training forward (and torch eager's) is captured in a CUDA graph and the graph's replay timed
(``triton.testing.do_bench``, median, L2 flushed before every replay), so the figures are GPU time without the
host's per-call cost, which at these sizes is larger than the GPU work (the suites' timings include it). Every
variant's output and running statistics are compared with torch's first. % of copy on the fewest bytes (x read,
y written, parameters and statistics).
"""

from __future__ import annotations

import argparse
import json
import time

import torch
import torch.nn.functional as F
import triton

import fastnorm
from fastnorm.kernels import config

SHAPES = [(32, 2048, 7, 7), (16, 1024, 14, 14), (32, 256, 14, 14), (8, 64, 56, 56), (32, 512, 7, 7),
          (128, 2048, 7, 7), (32, 512, 28, 28)]  # the last two do not fit: two launches in every variant
VARIANTS = {"resident": {}, "two_launch": {"BN_RESIDENT": False},
            "res_w16": {"BN_RESIDENT_WARPS": {2: 16, 4: 16, 8: 16}},
            "res_16K": {"BN_RESIDENT_BYTES": 16384 * 4}}


def graphed(fn):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g.replay


def bench(fn):
    return triton.testing.do_bench(fn, warmup=20, rep=100, return_mode="median") * 1e-3


def copy_bandwidth():
    src = torch.empty(1 << 29, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    return 2 * src.numel() * 2 / bench(lambda: dst.copy_(src))


def train_forward(bn, x, rm, rv, w, b):
    return lambda: bn(x, rm, rv, w, b, True, 0.1, 1e-5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    copy = copy_bandwidth()
    saved = {k: getattr(config, k) for v in VARIANTS.values() for k in v}
    rows = []
    print(f"{torch.cuda.get_device_name()} copy {copy / 1e9:.0f} GB/s", flush=True)
    for dt in (torch.bfloat16, torch.float32):
        for cl in (False, True):
            for shape in SHAPES:
                g = torch.Generator(device="cuda").manual_seed(0)
                x = (torch.randn(shape, device="cuda", generator=g) * 2 + 0.5).to(dt)
                if cl:
                    x = x.to(memory_format=torch.channels_last)
                c = shape[1]
                w = torch.rand(c, device="cuda", generator=g) + 0.5
                b = torch.randn(c, device="cuda", generator=g)
                nbytes = 2 * x.numel() * x.element_size() + 24 * c
                rm_t, rv_t = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
                y_t = F.batch_norm(x, rm_t.clone(), rv_t.clone(), w, b, True, 0.1, 1e-5)
                rm_r, rv_r = rm_t.clone(), rv_t.clone()
                F.batch_norm(x, rm_r, rv_r, w, b, True, 0.1, 1e-5)
                row = {"shape": shape, "dtype": str(dt)[6:], "layout": "CL" if cl else "NCHW"}
                rm_e, rv_e = rm_t.clone(), rv_t.clone()
                row["torch"] = 100 * nbytes / bench(graphed(train_forward(F.batch_norm, x, rm_e, rv_e, w, b))) / copy
                for name, ov in VARIANTS.items():
                    for k, v in saved.items():
                        setattr(config, k, v)
                    for k, v in ov.items():
                        setattr(config, k, v)
                    config.batch_norm_resident_plan.cache_clear()
                    rm, rv = rm_t.clone(), rv_t.clone()
                    y = fastnorm.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
                    err = max(float((a.float() - e.float()).abs().max() / e.float().abs().max())
                              for a, e in ((y, y_t), (rm, rm_r), (rv, rv_r)))
                    rm2, rv2 = rm_t.clone(), rv_t.clone()
                    t = bench(graphed(train_forward(fastnorm.batch_norm, x, rm2, rv2, w, b)))
                    row[name] = 100 * nbytes / t / copy
                    row[name + "_us"] = t * 1e6
                    row[name + "_err"] = err
                    xv = fastnorm.kernels.batch_norm.view(x)
                    plan = config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, 4 if dt != torch.float64 else 8,
                                                           config.multiprocessor_count(0), xv.l, x.element_size())
                    if name == "resident":
                        row["plan"] = None if plan is None else plan._asdict()
                for k, v in saved.items():
                    setattr(config, k, v)
                config.batch_norm_resident_plan.cache_clear()
                rows.append(row)
                bad = [n for n in VARIANTS if row[n + "_err"] > (2e-2 if dt == torch.bfloat16 else 1e-4)]
                print(f"{row['dtype']:8s} {row['layout']:4s} {str(shape):18s} torch {row['torch']:5.1f}  " +
                      "  ".join(f"{n} {row[n]:5.1f} ({row[n + '_us']:6.1f} us)" for n in VARIANTS) +
                      (f"  ERR {bad}" if bad else "") + ("" if row.get("plan") else "  (no resident plan)"),
                      flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), copy_GBps=copy / 1e9, date=time.strftime("%F %T"),
                           rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
