# Session 45, call 5 (one H200): with C = 256 in tiles of 64 lanes (BN_ROWS_LANES_256: statistics and frozen rows
# passes), the CUDA tests of the row-strided passes, then the BatchNorm suite again (the report's BatchNorm section).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 tests/test_batch_norm.py \
  -k "stats_rows or frozen_rows or row_shares" 2>&1 | tail -2
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check > $OUT/suite.log 2>&1
tail -3 $OUT/suite.log
