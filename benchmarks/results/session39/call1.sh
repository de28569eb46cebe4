# Session 39, call 1 (one GPU). Verify branch exact-entries (ab/exact = `git archive exact-entries src tests
# pyproject.toml`) against main (ab/base = `git archive main src`) through the library, LN / RMS bf16 forward at the
# 32768 and 65536 keys' rows; the tree itself is branch matched-unroll (flag off by default: its cost to the
# current configs). Then the CUDA norm tests of exact-entries. Expect (H200, session 38 calls 2, 5): LN 26000-30000
# +7..+11, 32768 unchanged, 65536 73 -> 83; RMS 65536 83 -> 88; 57344 / 60000 unchanged.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=$PWD/benchmarks/scripts/norm_configs_ab.py
for tree in base exact src base exact src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 75 python $A --current --fwd --ns 24577,26000,28000,30000,32768,57344,60000,65536 --rms-ns 32768,60000,65536 --dtype bfloat16 --passes 1 > $OUT/exact_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/exact_$tree.log | cut -c1-96
done
cd ab/exact && PYTHONPATH=src timeout 240 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py 2>&1 | tail -3
