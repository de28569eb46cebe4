# Session 36, call 1 (one GPU): the row-strided statistics pass for the channels-last training forward
# (BN_STATS_ROWS: tiles of 1024, 3 an SM, 4 stages) against the tile statistics pass (None), and its settings:
# tiles of 2048, 2 or 4 an SM. CUDA tests of the new pass first; kernel records of the bf16 56² forward both ways.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  -k "stats_rows or running_stats or training_fp32 or training_bf16 or channels_last" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
R='"min_numel": 1048576, "warps": 4, "steps": 16'
for set in "BN_RESIDENT=False" "BN_RESIDENT=False;BN_STATS_ROWS=None"; do
  PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd --impls fastnorm \
    --dtype bf16 --cl --set "$set" 256 64 56 56 2>&1 | grep -v Warning | tail -9
done
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;bf16 CL (32, 2048;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28;fp32 CL (256, 256;fp32 CL (32, 2048' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 400 --ops train_fwd \
  src 'src@BN_STATS_ROWS=None' \
  "src@BN_STATS_ROWS={$R, \"block\": 2048, \"per_sm\": 3, \"stages\": 4}" \
  "src@BN_STATS_ROWS={$R, \"block\": 1024, \"per_sm\": 2, \"stages\": 4}" \
  "src@BN_STATS_ROWS={$R, \"block\": 1024, \"per_sm\": 4, \"stages\": 4}" \
  torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
