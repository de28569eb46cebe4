# Session 35, call 1 (one GPU): the row-strided channels-last frozen backward and sums pass (BN_FROZEN_ROWS) against
# the tile kernel (None), frozen backward with dγ, dβ and training backward; its settings on the frozen mode; the
# CUDA tests of the new kernel, of session 34's `_resident_plan` and of the relu_bwd check.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 150 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py -k "frozen or sums or resident or relu or channels_last" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (256, 256;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 300 --ops frozen_params,train_bwd \
  src 'src@BN_FROZEN_ROWS=None' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
R='"min_numel": 1048576, "warps": 4, "steps": 16, "sums": 1'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;fp32 CL (128, 2048;fp32 CL (8, 256, 128' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 180 --ops frozen_params \
  "src@BN_FROZEN_ROWS={$R, \"block\": 1024, \"per_sm\": 8, \"stages\": 3}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 1024, \"per_sm\": 4, \"stages\": 4}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 2048, \"per_sm\": 4, \"stages\": 3, \"warps\": 8}" \
  "src@BN_FROZEN_ROWS={$R, \"block\": 512, \"per_sm\": 8, \"stages\": 3, \"warps\": 2}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
BN_VARIANT_CASES='bf16 CL (8, 64, 56;bf16 CL (32, 256, 14;fp32 CL (32, 256, 14' \
  timeout 100 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 90 --ops relu_bwd src 2>&1 \
  | grep -v "^  \|^Traceback\|^    " | head -12
