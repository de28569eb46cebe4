# Session 34, call 11 (one GPU): the channels-last sums plan as committed (BN_CL_SUMS: 2048-value tiles, 3 items an
# SM) against it off (None: the generic plan), on the channels-last cases and two NCHW ones it must leave alone;
# CUDA tests of the sums, stages and training paths first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py -k "sums or plan or wave or keep or training or channels_last" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='CL (128, 2048;fp32 CL (32, 512, 28;CL (256, 64, 56;fp32 CL (8, 256, 128;bf16 NCHW (8, 256, 128;bf16 NCHW (256, 64, 56' \
  timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 250 --ops train_bwd \
  src 'src@BN_CL_SUMS=None' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
