# Session 42, call 12 (carry ["ab"]; ab/base = 4a7ddce, the tree itself: the vector rows' table): (1) CUDA tests of the
# vector rows (the large test's new 18432 row, the boundary rows of the ranges); (2) the forward through the library's
# choice, --current per tree, kernels only, GPU time: LN bf16 16896-20000 and RMS fp32 8448-10760.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 240 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or vector_rows or (matches_reference and (16392- or 18432- or 18440- or 10240- or 10248- or 10752- or 10760-))" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
A=benchmarks/scripts/norm_configs_ab.py
for t in base head; do
  P=ab/$t; [ $t = head ] && P=.
  PYTHONPATH=$P/src timeout 90 python $P/$A --current --fwd --ns 16896,17408,18432,18440,20000 --rms-ns "" --dtype bfloat16 --passes 2 > $OUT/bf16_$t.log 2>&1
  echo "== bf16 $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/bf16_$t.log | cut -c1-90
  PYTHONPATH=$P/src timeout 90 python $P/$A --current --fwd --ns 8704 --rms-ns 8448,9216,10240,10500,10752,10760 --dtype float32 --passes 2 > $OUT/fp32_$t.log 2>&1
  echo "== fp32 $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_$t.log | cut -c1-90
done
