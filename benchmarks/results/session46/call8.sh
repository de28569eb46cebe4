# Session 46, call 8 (one H200): the final form (the row-strided sums pass grid-strided, the channels-last training
# dx pass after it from x's end down; ab/base = fb205af..d39a794's contiguous shares and ascending dx) against the
# committed one, training backward, graph replays, two rounds; fp32 channels-last 56² (the tile sums pass, the dx
# pass ascending in both) as a control; then the CUDA tests of the row-strided passes.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14);bf16 CL (128, 2048, 7, 7);fp32 CL (256, 64, 56, 56)"
BN_VARIANT_CASES="$CASES" timeout 200 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 \
  ab/base/src src > $OUT/bn_ab.txt 2>&1
tail -9 $OUT/bn_ab.txt
timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 tests/test_batch_norm.py \
  -k "sums_rows or frozen_rows or stats_rows or relu" 2>&1 | tail -2
