# Session 46, call 9 (one H200, the last device seconds): the CUDA tests of the row-strided passes after the review's
# mends (rows counted in IDX, the sums-only choice explicit, no weight variants without dx).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 tests/test_batch_norm.py \
  -k "sums_rows or frozen_rows or stats_rows or relu" 2>&1 | tail -2
