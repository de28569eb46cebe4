# Session 46, call 6 (one H200): with BN_SUMS_ROWS (the channels-last sums pass of 16-bit x row-strided), the CUDA
# tests of the row-strided passes and the training backward's paths, then the BatchNorm suite again (the report's
# BatchNorm section).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 tests/test_batch_norm.py \
  -k "sums_rows or stats_rows or frozen_rows or row_shares or relu or large" 2>&1 | tail -2
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check > $OUT/suite.log 2>&1
tail -3 $OUT/suite.log
