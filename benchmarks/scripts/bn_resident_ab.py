"""The BatchNorm training forward's GPU time, single-read (resident) kernel against the two-launch design.

    PYTHONPATH=src python3 benchmarks/scripts/bn_resident_ab.py [--out FILE.json]

Each variant's training forward (and torch eager's) is captured in a CUDA graph and the graph's replay timed
(``tune_batchnorm.bench``: ``do_bench``, median, L2 flushed before every replay), so the figures are GPU time
without the host's per-call cost, which at these sizes is larger than the GPU work (the suites' timings include it).
Every variant's output and running statistics are compared with torch's first. Cases, timing, copy bandwidth and
the fewest bytes are tune_batchnorm's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
import tune_batchnorm as TB  # noqa: E402

import fastnorm  # noqa: E402
from fastnorm.kernels import config  # noqa: E402

SHAPES = [(32, 2048, 7, 7), (16, 1024, 14, 14), (32, 256, 14, 14), (8, 64, 56, 56), (32, 512, 7, 7),
          (128, 2048, 7, 7), (32, 512, 28, 28)]  # the last two do not fit: two launches in every variant
VARIANTS = {"resident": {}, "two_launch": {"BN_RESIDENT": False},
            "res_w16": {"BN_RESIDENT_WARPS": {2: 16, 4: 16, 8: 16}},
            "res_16K": {"BN_RESIDENT_BYTES": 16384 * 4}}


def train_forward(bn, case):
    """A training forward of ``case`` with ``bn`` on copies of its running statistics."""
    x, w, b = case["x"], case["w"], case["b"]
    rm, rv = case["rm"].clone(), case["rv"].clone()
    return lambda: bn(x, rm, rv, w, b, True, 0.1, 1e-5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    copy = TB.copy_bandwidth()
    saved = {k: getattr(config, k) for v in VARIANTS.values() for k in v}
    rows = []
    print(f"{torch.cuda.get_device_name()} copy {copy / 1e9:.0f} GB/s", flush=True)
    for dtype_name in TB.DTYPES:
        for cl in (False, True):
            for shape in SHAPES:
                case = TB.make_case(shape, dtype_name, cl)
                x = case["x"]
                nbytes = TB.fewest_bytes("train_fwd", case)
                rm, rv = case["rm"].clone(), case["rv"].clone()
                expected = (F.batch_norm(x, rm, rv, case["w"], case["b"], True, 0.1, 1e-5), rm, rv)
                xv = fastnorm.kernels.batch_norm.view(x)
                elem = config.batch_norm_resident_held_bytes(xv.flat, 4, x.element_size())
                plan = config.batch_norm_resident_plan(xv.flat, xv.c, xv.v, elem, config.multiprocessor_count(0), xv.l,
                                                       x.element_size())
                row = {"shape": shape, "dtype": dtype_name, "layout": "CL" if cl else "NCHW",
                       "plan": None if plan is None else plan._asdict(),
                       "torch": 100 * nbytes / TB.bench(TB.graphed(train_forward(F.batch_norm, case))) / copy}
                for name, ov in VARIANTS.items():
                    TB._apply_overrides({**saved, **ov})
                    rm, rv = case["rm"].clone(), case["rv"].clone()
                    got = (fastnorm.batch_norm(x, rm, rv, case["w"], case["b"], True, 0.1, 1e-5), rm, rv)
                    t = TB.bench(TB.graphed(train_forward(fastnorm.batch_norm, case)))
                    row[name] = 100 * nbytes / t / copy
                    row[name + "_us"] = t * 1e6
                    row[name + "_err"] = max(TB.rel_err(a, e) for a, e in zip(got, expected, strict=True))
                TB._apply_overrides(saved)
                rows.append(row)
                bad = [n for n in VARIANTS if row[n + "_err"] > (2e-2 if dtype_name == "bf16" else 1e-4)]
                print(f"{dtype_name:5s} {row['layout']:4s} {str(shape):18s} torch {row['torch']:5.1f}  " +
                      "  ".join(f"{n} {row[n]:5.1f} ({row[n + '_us']:6.1f} us)" for n in VARIANTS) +
                      (f"  ERR {bad}" if bad else "") + ("" if plan else "  (no resident plan)"), flush=True)
                del case
                torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), copy_GBps=copy / 1e9, date=time.strftime("%F %T"),
                           rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
