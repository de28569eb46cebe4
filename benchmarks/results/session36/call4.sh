# Session 36, call 4 (one GPU): the row-strided statistics pass (tiles of 2048, x's last 8 MB evict_last) against
# the tile statistics pass (None) over channel counts 64-2048 (calls 2-3: C = 64, 512, 1024 gained, 256 and 2048
# lost, on the H100 and the H200 alike), with ResNet-50's C = 128 and C = 256 / 512 layers added. Tests first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests/test_batch_norm.py \
  -k "stats_rows or running_stats or training_fp32 or training_bf16 or channels_last" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (32, 512, 28;CL (256, 128;CL (256, 512;CL (128, 64, 112;CL (256, 256, 56' \
  timeout 440 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 420 --ops train_fwd \
  'src@BN_STATS_ROWS=None' src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
