# Prepared in session 38 for the next session's first device call; NOT RUN. Create ab/base with `git archive main src | tar -x -C ab/base` and carry ["ab/base"].
# Verify the exact-entries branch (session 38's d2268c2) in one call: the tree (the branch) against main (ab/base, as
# `git archive main src`): LN / RMS bf16 forward through the library at the 32768 and 65536 keys' rows, then the
# CUDA tests of the norm forward. Expect (H200, session 38 calls 2, 5): LN 26000-30000 +7..+11, 32768 unchanged,
# 65536 73 -> 83; RMS 65536 83 -> 88; 57344 / 60000 unchanged.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 90 python $A --current --fwd --ns 24577,26000,28000,30000,32768,57344,60000,65536 --rms-ns 32768,60000,65536 --dtype bfloat16 --passes 1 > $OUT/exact_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/exact_$tree.log | cut -c1-96
done
PYTHONPATH=src timeout 330 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py 2>&1 | tail -3
