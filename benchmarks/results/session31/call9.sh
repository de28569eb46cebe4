# Session 31, call 9 (one GPU): call 8's src failed to compile the frozen backward in channels-last (Triton 3.6's
# TritonGPUOptimizeThreadLocality asserted one use of the merge loop's sums, which the one-level merge gave two; the
# sm_90 gate now records that shape). Fixed: the sums leave _sum_partials through a select. CUDA tests, then src
# against ab_head (the committed src), CUDA-graph replays / back-to-back, % of copy.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 130 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  tests/test_sync_batch_norm.py -k "cuda_graph or merge_levels or frozen or sums or reserved or many_items or counters" \
  > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED" | head -8
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (32, 512, 28;fp32 CL (8, 256, 128;bf16 CL (256, 256, 28' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 160 --ops stats,train_fwd,train_bwd,frozen_params \
  ab_head src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
