# Session 49, call 1 (one H200): branch bwd-int32-rows, commit by commit. (a) the branch's CUDA tests (large rows,
# 32/64-bit offsets, widening, the held and prefetched backwards); (b) the suites' harness (GPU time, bf16 backward,
# two alternating rounds): ab/base = main, ab/c1 = + 32-bit offsets (308e5c4), ab/c12 = + constant row means
# (6457478), ab/new = + shift-and-mask widening of multi-row tiles (8f2d13f).
export PYTHONUNBUFFERED=1
(cd ab/new && PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py \
   -k "large_gpu or 2_pow_31 or 32_or_64 or widen or hold_loaded or prefetched_backward_small or weight_in_loop" \
   > $OUT/tests.log 2>&1; echo "== tests (rc $?, ${SECONDS}s)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8)
run() {  # tree suite round
  (cd ab/$1 && PYTHONPATH=src timeout 100 python -m fastnorm.bench $2 --shapes 256,512,1024,2048,4096 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/runs/${2}_$1_$3 >/dev/null 2>&1) \
     || echo "FAILED $1 $2 $3"
}
for r in 1 2; do for t in base c1 c12 new; do
  [ $SECONDS -gt 500 ] && { echo "skipped round $r $t (${SECONDS}s)"; continue; }
  run $t layernorm $r; run $t rmsnorm $r; echo "round $r $t done (${SECONDS}s)"
done; done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
