# Session 47, call 2 (one H200): the running statistics' reads issued ahead of the last merge of each training-forward
# statistics pass (`_running_loads`; before: read after it, a DRAM round trip on the launch's critical path — the
# channels-last merge launch's SASS had them after its last barrier). ab/base = 1895b59's src. (1) Kernel µs with the
# suites' flush, both trees; (2) training forward, graph replays, two rounds; (3) the CUDA tests of the running
# statistics, the statistics passes and the single-read kernels.
export PYTHONUNBUFFERED=1
mkdir -p $OUT
CASES="bf16 CL (8, 256, 128, 128);bf16 CL (256, 64, 56, 56);bf16 NCHW (256, 64, 56, 56);bf16 NCHW (8, 256, 128, 128);bf16 CL (32, 256, 14, 14);bf16 NCHW (32, 256, 14, 14);bf16 NCHW (32, 2048, 7, 7);fp32 CL (128, 2048, 7, 7)"
for t in ab/base/src src; do
  echo "== $t"
  PYTHONPATH=$t BN_VARIANT_CASES="$CASES" timeout 90 python benchmarks/scripts/bn_kernel_times.py --flush --ops train_fwd "" \
    2>&1 | grep -v -i warn | grep train_fwd
done
PYTHONPATH=src BN_VARIANT_CASES="$CASES" timeout 300 python benchmarks/scripts/bn_ab.py --graph --ops train_fwd --rounds 2 \
  ab/base/src src > $OUT/bn_ab.txt 2>&1
tail -11 $OUT/bn_ab.txt
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 tests/test_batch_norm.py \
  -k "running or momentum or stats_rows or resident or num_batches" 2>&1 | tail -2
