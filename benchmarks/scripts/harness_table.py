"""Summarize the suites' harness runs of a device A/B call: OUT/<suite>_<tree>_<round>/*.json (one ``fastnorm.bench``
run a shape, as ``ab_run.sh`` leaves them; tree and round without underscores; the direction and N are read from the
records) -> GPU-time % of copy of fastnorm per (suite, direction, N), one column per tree, rounds joined by '/'.

    python benchmarks/scripts/harness_table.py OUT

The call scripts under ``results/session4x-5x`` copied it into ``ab/`` (it sat in ``results/session48/`` until
session 51) and ran it there."""
import json
import sys
from collections import defaultdict
from pathlib import Path

out = Path(sys.argv[1])
cells = defaultdict(lambda: defaultdict(list))
trees = []
for f in sorted(out.glob("*_*_*/*.json")):
    _, tree, rnd = f.parent.name.split("_")
    if tree not in trees:
        trees.append(tree)
    for r in json.load(open(f))["records"]:
        if r["impl"] == "fastnorm" and r.get("graph_pct_copy"):
            cells[(r["suite"], r["direction"], r["n"])][tree].append(f"{r['graph_pct_copy']:.1f}")
print("| suite dir N | " + " | ".join(trees) + " |")
for key in sorted(cells):
    print(f"| {key[0]} {key[1]} {key[2]} | " + " | ".join("/".join(cells[key][t]) or "-" for t in trees) + " |")
