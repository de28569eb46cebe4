# Session 36, call 6 (one GPU): CUDA tests of the row-strided statistics pass (its channel ranges, the tiles of at
# most 1024 lanes) and the NaN/Inf paths, then the BatchNorm suite (the report's BatchNorm figures) with it.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 -rf tests/test_batch_norm.py \
  tests/test_robustness.py -k "stats_rows or nan_inf or running_stats or training_bf16" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
timeout 420 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check > $OUT/suite.log 2>&1
tail -5 $OUT/suite.log
ls $OUT
