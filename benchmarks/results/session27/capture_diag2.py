"""Session 27, call 3: call 2 captured fastnorm's BatchNorm training backward alone without fault, so the failure
of call 1 comes from the suite's sequence. The suite itself on call 1's first case, its graph timer wrapped to print
each failed capture's whole message and traceback; the ops as given."""
import argparse
import sys
import traceback

from fastnorm.bench import batchnorm, common

real = common.Timer.graph_ms


def graph_ms(self, make):
    try:
        return real(self, make)
    except Exception as exc:
        print("CAPTURE FAILED:", repr(exc))
        traceback.print_exc(limit=-8)
        raise


common.Timer.graph_ms = graph_ms
p = argparse.ArgumentParser()
batchnorm.add_arguments(p)
args = p.parse_args(["--shapes", "256x64x56x56", "--dtypes", "bf16", "--layouts", sys.argv[2], "--ops", sys.argv[1],
                     "--impls", "fastnorm,torch", "--compile", "none", "--no-plots", "--out", "/tmp/diag"])
doc = batchnorm.run(args)
for r in doc["records"]:
    print(r["impl"], r["mode"], r["status"], r.get("graph_pct_copy"), r.get("graph_error"), r.get("reason"))
