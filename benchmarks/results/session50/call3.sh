# Session 50, call 3 (one H200): branch col-sums-scratch (efbe094): the whole-row backward's dw/db summed over a tile's
# rows through scratch rows in global memory where the warps split the rows (bf16 128, 256, 512), not Triton's
# cross-warp tl.sum (32-way bank conflicts, call 2). (a) CUDA tests; (b) Nsight Compute of the row kernel at (49152,
# 256) bf16, RMS and LN; (c) the suites' harness, GPU time, bf16 backward 128-1024 (1024: no change, a control), two
# alternating rounds: ab/base = main (b036045), ab/new = the branch.
# Prediction: RMS 256 28.2 -> ~24.5 us (55 -> ~62% of copy), LN 256 36.2 -> ~29.5 (47 -> ~57), 512 +3..4 points,
# 128 LN 37 -> ~44, RMS 43 -> ~50.
export PYTHONUNBUFFERED=1
(cd ab/new && cp -r ../../tests . && PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 16 \
   tests/test_layer_norm.py -k "sums_via_scratch or equal_pieces or widen or hold_loaded or prefetched_backward_small" \
   > $OUT/tests.log 2>&1; echo "== tests (rc $?, ${SECONDS}s)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8)
M='gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed'
for op in rms ln; do echo "== ncu $op"
  (cd ab/new && PYTHONPATH=src timeout 80 ncu --kernel-name regex:_norm_bwd_kernel --launch-skip 2 --launch-count 1 \
    --metrics "$M" python ncu_norm_bwd.py $op 256 2>&1 | grep -E "gpu__time|bank|inst_executed|dram" | tr -s ' ')
done
run() {  # tree suite round
  (cd ab/$1 && PYTHONPATH=src timeout 100 python -m fastnorm.bench $2 --shapes 128,256,512,768,1024 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/runs/${2}_$1_$3 >/dev/null 2>&1) \
     || echo "FAILED $1 $2 $3"
}
for r in 1 2; do for t in base new; do
  [ $SECONDS -gt 520 ] && { echo "skipped round $r $t (${SECONDS}s)"; continue; }
  run $t layernorm $r; run $t rmsnorm $r; echo "round $r $t done (${SECONDS}s)"
done; done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
