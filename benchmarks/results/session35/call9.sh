# Session 35, call 9 (one GPU): CUDA tests of the final form (35146af: the sums launch capped at 256 channels a
# program, the tests' shared pass counter): the frozen, NaN/Inf, resident and ReLU tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 150 -rf tests/test_batch_norm.py \
  tests/test_robustness.py -k "frozen or nan_inf or resident or relu" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
