# Session 32, call 1 (one GPU): the CUDA tests session 31 could not run (the backward's shared merge form of 1058ca6,
# the mended graph test, LayerNorm's split-row graph test on the reserve), then the statistics pass's per-program
# timeline (scripts/bn_timeline.py, first run on a GPU) at three shapes.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 230 python -m pytest -q -p no:cacheprovider -n 8 --timeout 200 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py tests/test_sync_batch_norm.py tests/test_layer_norm.py \
  -k "backward or grad or merge or graph or sums or frozen or dx or reserved or counters or split_rows_cuda_graph" \
  > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
for a in "256 64 56 56" "--cl 256 64 56 56" "256 1024 14 14" "--cl 256 256 28 28"; do
  timeout 90 python benchmarks/scripts/bn_timeline.py --runs 3 $a 2>&1 | tail -16
done
