# Session 35, call 2 (one GPU): call 1's row-strided kernel lost everywhere because its partial sums were added by
# _bn_frozen_sums_kernel one share at a time (528 dependent-latency steps a channel); now _bn_rows_sums_kernel adds
# 256 shares a step. Against the tile kernel (None), then the kernel's settings on the frozen mode.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 -rf tests/test_batch_norm.py \
  -k "frozen_rows" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 280 --ops frozen_params,train_bwd \
  src 'src@BN_FROZEN_ROWS=None' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
R='"min_numel": 1048576, "warps": 4, "steps": 16, "sums": 1'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;fp32 CL (128, 2048;fp32 CL (8, 256, 128' \
  timeout 220 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops frozen_params,train_bwd \
  "src@BN_FROZEN_ROWS={$R, \"block\": 1024, \"per_sm\": 2, \"stages\": 3}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 1024, \"per_sm\": 8, \"stages\": 3}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 1024, \"per_sm\": 4, \"stages\": 4}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 2048, \"per_sm\": 4, \"stages\": 3, \"warps\": 8}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
