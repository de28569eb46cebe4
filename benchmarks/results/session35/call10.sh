# Session 35, call 10 (one GPU): the final read's mend — the row-strided frozen pass's partials in _sum_partials'
# layout [2, C, SPLIT], added by _sum_partials (src) — against the committed form (ab/head: its own [JB, CB] loop
# over [2, SPLIT, NB·W]); CUDA tests of the frozen and NaN/Inf paths first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  tests/test_robustness.py -k "frozen or nan_inf" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;fp32 CL (256, 64, 56;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 250 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 230 --ops frozen_params \
  src ab/head/src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -20
