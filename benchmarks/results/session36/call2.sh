# Session 36, call 2 (one GPU): the row-strided statistics pass with more bytes in flight (call 1: tiles of 2048
# did best, the rows kernel streams at ~71% of copy), its merge launch in smaller tiles (more programs), the tile
# statistics pass (None) beside; kernel records of bf16 CL 56² at tiles of 2048. CUDA tests of the pass first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 -rf tests/test_batch_norm.py \
  -k "stats_rows" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
R='"min_numel": 1048576, "steps": 16'
B="BN_STATS_ROWS={$R, \"warps\": 4, \"block\": 2048, \"per_sm\": 3, \"stages\": 4}"
PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd --impls fastnorm \
  --dtype bf16 --cl --set "BN_RESIDENT=False;$B" 256 64 56 56 2>&1 | grep -v Warning | tail -4
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 400 --ops train_fwd \
  'src@BN_STATS_ROWS=None' "src@$B" \
  "src@$B;BN_ROWS_SUMS_TILE={\"shares\": 512, \"elements\": 1024, \"channels\": 256}" \
  "src@BN_STATS_ROWS={$R, \"warps\": 4, \"block\": 2048, \"per_sm\": 4, \"stages\": 6}" \
  "src@BN_STATS_ROWS={$R, \"warps\": 4, \"block\": 2048, \"per_sm\": 3, \"stages\": 8}" \
  "src@BN_STATS_ROWS={$R, \"warps\": 8, \"block\": 4096, \"per_sm\": 2, \"stages\": 4}" \
  "src@BN_STATS_ROWS={$R, \"warps\": 4, \"block\": 2048, \"per_sm\": 6, \"stages\": 4}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
