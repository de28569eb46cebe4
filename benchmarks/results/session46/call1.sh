# Session 46, call 1 (one H200): the channels-last training backward's sums pass as the row-strided frozen kernel
# without dx (BN_SUMS_ROWS, experimental: None by default) against the tile sums pass (BN_CL_SUMS); each share's last
# rows evict_last or not, 3 or 4 programs an SM, tiles of 1024 or 2048. Graph replays, two rounds; then each
# launch's µs at two shapes; then the CUDA tests of the row-strided passes.
# Ran against the working tree of the time: BN_SUMS_ROWS then took "channels" ranges and a "keep" flag (each share's
# last rows evict_last; dropped after call 2), and call 4's BN_ROWS_MERGE (the in-launch sums, lost) was removed after
# it: these overrides do not apply to later trees as written (the committed BN_SUMS_ROWS has "x_sizes" instead).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
R='"min_numel": 1048576, "warps": 4, "steps": 16, "channels": ((1, 4096),)'
KEEP="BN_SUMS_ROWS={$R, \"block\": 1024, \"per_sm\": 3, \"stages\": 4, \"keep\": 1}"
NOKEEP="BN_SUMS_ROWS={$R, \"block\": 1024, \"per_sm\": 3, \"stages\": 4, \"keep\": 0}"
PS4="BN_SUMS_ROWS={$R, \"block\": 1024, \"per_sm\": 4, \"stages\": 4, \"keep\": 1}"
B2K="BN_SUMS_ROWS={$R, \"block\": 2048, \"per_sm\": 3, \"stages\": 3, \"keep\": 1}"
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (256, 64, 56, 56);bf16 CL (256, 1024, 14, 14);bf16 CL (128, 2048, 7, 7);fp32 CL (256, 64, 56, 56);fp32 CL (128, 2048, 7, 7)"
BN_VARIANT_CASES="$CASES" timeout 330 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 src \
  "src@$KEEP" "src@$NOKEEP" "src@$PS4" "src@$B2K" > $OUT/bn_ab_bwd.txt 2>&1
tail -12 $OUT/bn_ab_bwd.txt
BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56)" timeout 90 \
  python benchmarks/scripts/bn_kernel_times.py --ops train_bwd "" "$KEEP" "$NOKEEP" 2>&1 | grep -v Warning | tail -8
timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 tests/test_batch_norm.py -k "frozen_rows or stats_rows" 2>&1 | tail -2
