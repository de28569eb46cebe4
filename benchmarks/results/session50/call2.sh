# Session 50, call 2 (one H200): (a) CUDA tests of main with equal-pieces merged (b036045); (b) Nsight Compute at
# (49152, 256) bf16, the backward's row kernel: shared-memory bank conflicts split into loads and stores, with and
# without the cp.async prefetch (1 stage), and SourceCounters for the instructions that conflict (tree ab/nt = HEAD
# + session49/ab_mr_knobs.patch); (c) the RMSNorm suite for the report.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 150 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py \
   -k "equal_pieces or widen or hold_loaded or prefetched_backward_small or large_gpu or 32_or_64" > $OUT/tests.log 2>&1
echo "== tests (rc $?, ${SECONDS}s)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
M='gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed.sum'
prof() {  # tag op NT [extra ncu args]
  echo "== $1"
  (cd ab/nt && NT="$3" timeout 80 ncu --kernel-name regex:_norm_bwd_kernel --launch-skip 2 --launch-count 1 \
    --metrics "$M" $4 python ncu_norm_bwd.py $2 256 > $OUT/ncu_${1// /_}.txt 2>&1)
  grep -E "gpu__time|bank|wavefronts|inst_executed" $OUT/ncu_${1// /_}.txt | tr -s ' '
}
prof "rms base" rms "{}" "--section SourceCounters"
prof "rms 1 stage" rms "{('bwd',True,256): (32,256,False,16,1,1)}"
prof "ln base" ln "{}" "--section SourceCounters"
prof "ln 1 stage" ln "{('bwd',False,256): (32,256,False,16,1,1)}"
echo "== ncu done (${SECONDS}s)"
timeout 330 bash benchmarks/scripts/gpu_report.sh rmsnorm --skip-check 2>&1 | tail -5
echo "== done (${SECONDS}s)"
