# Session 47, call 6 (one H200; no 2-GPU machine was lent, so SyncBatchNorm's NCCL checks did not run): the CUDA tests
# of the SyncBatchNorm and stage-API paths one process can run (their merges now read the running statistics before
# folding the shards: `_running_loads`), then the norms' large CUDA tests at the rows whose RMSNorm forward tile changed.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 150 tests/test_sync_batch_norm.py \
  tests/test_batch_norm_stages.py 2>&1 | tail -3
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 tests/test_layer_norm.py \
  -k "large_gpu and (128 or 256)" 2>&1 | tail -2
