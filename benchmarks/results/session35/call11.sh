# Session 35, call 11 (one GPU): the final read's kept mend — the row-strided frozen pass and its sums launch with
# the half-offset of their partials formed in the kernels (no HALF argument) — CUDA tests, and against the committed
# form (ab/head) on the frozen mode.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  tests/test_robustness.py -k "frozen or nan_inf" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (128, 2048;bf16 CL (256, 1024;fp32 CL (32, 512, 28' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 180 --ops frozen_params \
  src ab/head/src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -12
