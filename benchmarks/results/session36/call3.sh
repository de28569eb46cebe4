# Session 36, call 3 (one GPU): the row-strided statistics pass (now tiles of 2048) with x's last 8 MB loaded
# evict_last (BN_KEEP_BYTES, as the tile pass keeps them), without (0) and with 16 MB, against the tile statistics
# pass (None); kernel records (flushed graph replays) of bf16 CL 56² and 8×256×128² both ways. Tests first.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 -rf tests/test_batch_norm.py \
  -k "stats_rows" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
for shape in "256 64 56 56" "8 256 128 128"; do
  for set in "BN_RESIDENT=False" "BN_RESIDENT=False;BN_STATS_ROWS=None"; do
    PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd --impls fastnorm \
      --dtype bf16 --cl --set "$set" $shape 2>&1 | grep -v Warning | grep -A4 "graph flushed"
  done
done
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 400 --ops train_fwd \
  'src@BN_STATS_ROWS=None' src 'src@BN_KEEP_BYTES=0' 'src@BN_KEEP_BYTES=16000000' \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
