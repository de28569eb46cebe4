# Session 35, call 4 (one GPU): the row-strided kernel (now _bn_bwd_rows_kernel, config BN_BWD_ROWS: 3 an SM, 4
# stages) as the channels-last training backward's dx pass ("dx": 1) against the tile dx pass ("dx": 0), and the
# frozen mode against the tile kernel (None); CUDA tests of the row-strided passes first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py -k "rows or stages or channels_last" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
R='"min_numel": 1048576, "warps": 4, "steps": 16, "sums": 0, "block": 1024, "per_sm": 3, "stages": 4'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28;fp32 CL (256, 256' \
  timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 380 --ops train_bwd,frozen_params \
  src "src@BN_BWD_ROWS={$R, \"dx\": 0}" 'src@BN_BWD_ROWS=None' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
