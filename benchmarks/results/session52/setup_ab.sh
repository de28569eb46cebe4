#!/usr/bin/env bash
# Session 52: the A/B trees for the device calls, from the repository root (ab/ is gitignored; carry ["ab", ".whl"]).
#   ab/new: this checkout's src (NormConfig.one_round and .maxnreg); ab/pre: src at c60569a, before 601f881 (rows of
#   two equal pieces reduce each row sum once), to see whether that change cost LN forward 16384 its 2 points.
# Both get the knobs of an A/B tree: NT / NTX (a dict's repr, merged into NORM_TUNED / NORM_TUNED_EXACT) and PAIR=1
# (LayerNorm's backward takes its paired row sums on every whole-row tile: norm_bwd_pair_sums); ab/new also JP (for
# NORM_JOINT_PIECES_MAX, from call 2 on) and JH=0 (norm_joint_pieces without its held-rows clause, call 3).
set -euo pipefail
rm -rf ab/new ab/pre && mkdir -p ab/new ab/pre
cp -r src ab/new/
git archive c60569a src | tar -x -C ab/pre
for tree in ab/new ab/pre; do
python - "$tree/src/fastnorm/kernels/config.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("\nclass RowRange(NamedTuple):", "\nimport os\nNORM_TUNED.update(eval(os.environ.get('NT', '{}')))\n"
              "NORM_TUNED_EXACT.update(eval(os.environ.get('NTX', '{}')))\n\n\nclass RowRange(NamedTuple):", 1)
old = "    return not cfg.chunked and (cfg.block_n <= 4096 or cfg.block_n2 > 0)"
assert old in s
s = s.replace(old, "    import os\n    return not cfg.chunked and (os.environ.get('PAIR') == '1' or cfg.block_n <= 4096 or cfg.block_n2 > 0)")
if "NORM_JOINT_PIECES_MAX = 1024" in s:
    s = s.replace("NORM_JOINT_PIECES_MAX = 1024", "import os\nNORM_JOINT_PIECES_MAX = int(os.environ.get('JP', '1024'))")
s = s.replace("or cfg.hold_loaded)", "or (cfg.hold_loaded and os.environ.get('JH', '1') == '1'))")
open(p, "w").write(s)
PY
done
cp benchmarks/scripts/ab_run.sh benchmarks/scripts/harness_table.py ab/
cp benchmarks/results/session52/call*.sh ab/ 2>/dev/null || true
