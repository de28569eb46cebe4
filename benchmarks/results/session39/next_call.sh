# Prepared in session 39 for the next session's first device call; NOT RUN. Create ab/base with
# `git archive 2306196 src benchmarks/scripts | tar -x -C ab/base` and carry ["ab"].
# The backward's rows of odd length (NORM_BWD_SCALAR_ROWS, 291e043) through the library, against 2306196 (before the
# scalar rows), each tree with its own A/B script; the forward's as a check of call 6/7. Then the CUDA tests that
# reach them (the large test's 16385 case takes both now). Expect (session 39 calls 8-9, explicit configs): LN bwd
# 16385 23.6 -> 34.6, 24577 26.2 -> 35.1, 32769 26.4 -> 32.9, 40001 31.3 -> 34.7; RMS 27.6 -> 35.3, 28.5 -> 34.9,
# 29.5 -> 35.1; 65535 unchanged.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for tree in base src base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 90 python $P/benchmarks/scripts/norm_configs_ab.py --current --ns 16385,24577,32769,40001,65535 --rms-ns 16385,24577,32769,65535 --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_$tree.log | cut -c1-100
done
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or scalar_rows or split" > $OUT/tests.log 2>&1; echo "== tests (rc $?)"; tail -2 $OUT/tests.log
