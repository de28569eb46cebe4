# Session 31, call 5 (one GPU): calls 3-4's two wins in src: (1) the reductions' merge levels that change nothing
# skipped (a channel block of one item writes its own statistics / sums; one of a single sub-group takes the
# sub-group's merge as final), forward statistics and backward sums; (2) launches captured in a CUDA graph take
# their counters from a zeroed reserve made outside the capture (no fill node in the graph). CUDA tests first (the
# new graph test, the split rows' graph test, which now takes reserved counters and tag words, BatchNorm and
# SyncBatchNorm, replays); then src against HEAD (ab_head: the committed src), CUDA-graph replays / back-to-back.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 190 -rf tests/test_batch_norm.py \
  tests/test_layer_norm.py tests/test_replay.py tests/test_sync_batch_norm.py tests/test_batch_norm_stages.py \
  -k "cuda_graph or reserved or merge_levels or many_items or channel_groups or training or frozen or sums or stats or counters or replay or split_rows" \
  > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -4
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (32, 512, 28;fp32 NCHW (256, 256, 28;bf16 CL (256, 256, 28;bf16 NCHW (128, 2048, 7;bf16 NCHW (32, 256, 14;fp32 CL (8, 256, 128' \
  timeout 350 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats,train_fwd,train_bwd,frozen_params \
  ab_head src 2>&1 | tail -40
