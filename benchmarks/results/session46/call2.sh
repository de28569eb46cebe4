# Session 46, call 2 (one H200): why call 1's graph replays (L2 flushed before each) show less of the row-strided sums
# pass's gain than the profiler's back-to-back kernel times: each launch's µs with the suites' flush before every call
# (bn_kernel_times --flush), then tiles of 2048 (call 1's best) with and without the kept tail, 3 or 4 stages.
# Ran against the working tree of the time: BN_SUMS_ROWS then took "channels" ranges and a "keep" flag (each share's
# last rows evict_last; dropped after call 2), and call 4's BN_ROWS_MERGE (the in-launch sums, lost) was removed after
# it: these overrides do not apply to later trees as written (the committed BN_SUMS_ROWS has "x_sizes" instead).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
R='"min_numel": 1048576, "warps": 4, "steps": 16, "channels": ((1, 4096),)'
NOKEEP="BN_SUMS_ROWS={$R, \"block\": 1024, \"per_sm\": 3, \"stages\": 4, \"keep\": 0}"
B2K="BN_SUMS_ROWS={$R, \"block\": 2048, \"per_sm\": 3, \"stages\": 3, \"keep\": 1}"
B2K0="BN_SUMS_ROWS={$R, \"block\": 2048, \"per_sm\": 3, \"stages\": 3, \"keep\": 0}"
B2K4="BN_SUMS_ROWS={$R, \"block\": 2048, \"per_sm\": 3, \"stages\": 4, \"keep\": 1}"
BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128)" timeout 120 \
  python benchmarks/scripts/bn_kernel_times.py --flush --ops train_bwd "" "$NOKEEP" "$B2K" "$B2K0" 2>&1 \
  | grep -v Warning | sed 's/BN_SUMS_ROWS={"min_numel": 1048576, "warps": 4, "steps": 16, "channels": ((1, 4096),), //' | tail -13
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (256, 64, 56, 56);bf16 CL (2, 256, 200, 304);fp32 CL (256, 64, 56, 56)"
BN_VARIANT_CASES="$CASES" timeout 250 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 src \
  "src@$B2K" "src@$B2K0" "src@$B2K4" > $OUT/bn_ab_bwd.txt 2>&1
tail -7 $OUT/bn_ab_bwd.txt
