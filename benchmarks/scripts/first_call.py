"""What a model's first training step costs in kernel compiles: the ResNet-50 BatchNorm stack, cold and warm.

    python benchmarks/scripts/first_call.py [--configs nchw:fp32,channels_last:bf16] SRC [SRC ...]

For each source tree (the directory put on PYTHONPATH) and configuration, a fresh process with an empty Triton cache
runs the 53 BatchNorm layers of ResNet-50 (``bench.syncbn.resnet50_bn_layers``, batch 8) through one training step
each (forward, then ``autograd.grad`` of x, weight and bias), synchronizing after every layer: the first step compiles
every kernel the stack needs. A second step in the same process (warm) shows what the compile added. Prints per tree
and configuration the cold and warm step in seconds and the layers whose first step took longest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def child(layout: str, dtype_name: str) -> None:
    import torch

    import fastnorm
    from fastnorm.bench.syncbn import resnet50_bn_layers

    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    layers = []
    for shape in resnet50_bn_layers(8):
        c = shape[1]
        x = torch.randn(shape, device="cuda", dtype=dtype).to(memory_format=fmt).requires_grad_(True)
        w = torch.randn(c, device="cuda", requires_grad=True)
        b = torch.randn(c, device="cuda", requires_grad=True)
        layers.append((shape, x, w, b, torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")))
    torch.cuda.synchronize()
    steps = []
    for _ in range(2):
        per_layer = []
        for shape, x, w, b, rm, rv in layers:
            t = time.perf_counter()
            y = fastnorm.batch_norm(x, rm, rv, w, b, training=True)
            torch.autograd.grad(y, (x, w, b), torch.ones_like(y))
            torch.cuda.synchronize()
            per_layer.append((time.perf_counter() - t, shape))
        steps.append(per_layer)
    cold, warm = steps
    print(json.dumps({"cold_s": sum(t for t, _ in cold), "warm_s": sum(t for t, _ in warm),
                      "slowest": sorted(([round(t, 2), list(s)] for t, s in cold), reverse=True)[:4]}))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("trees", nargs="+")
    p.add_argument("--configs", default="nchw:fp32,channels_last:bf16")
    args = p.parse_args()
    for config in args.configs.split(","):
        layout, dtype_name = config.split(":")
        for tree in args.trees:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), TRITON_CACHE_DIR=cache)
                out = subprocess.run([sys.executable, __file__, "--child", layout, dtype_name], env=env,
                                     capture_output=True, text=True, check=False)
            if out.returncode:
                print(f"{tree} {config}: failed\n{out.stderr[-2000:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{tree:14s} {config:20s} first step {r['cold_s']:7.2f} s, second {r['warm_s']:6.3f} s; "
                  f"slowest first layers {r['slowest']}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
