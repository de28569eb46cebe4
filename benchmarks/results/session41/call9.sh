# Session 41, call 9 (one GPU). The final form: rows read one element a load keep next_pow2(N - block_n) as the
# second piece (the entries' least_n2 serves rows read in vectors only), LayerNorm's odd 12289-16384 forward rows keep
# the chunks. HEAD (ab/base) against it at call 7's odd rows, one round; then the CUDA tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 80 python $P/$A --current --fwd --ns 545,1089,2049,2305,4099,8193,8449,14337 --rms-ns 545,4099,8193,8449 --dtype bfloat16 --passes 1 > $OUT/fwd_$tree.log 2>&1
  echo "== fwd $tree (rc $?)"
  PYTHONPATH=$P/src timeout 60 python $P/$A --current --ns 4097,8193 --rms-ns 1089,4353 --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== bwd $tree (rc $?)"
done
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "two_piece or exact or large_gpu or torch_compile or scalar_rows or least" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED" $OUT/tests.log | tail -8
