# Session 46, call 4 (one H200): the row-strided backward's partial sums added in the launch itself (BN_ROWS_MERGE:
# the last of each 16 or 32 shares of a channel block adds theirs, the last group the rest) against their own launch
# (_bn_rows_sums_kernel), for the training backward's sums pass (BN_SUMS_ROWS in tiles of 2048, 4 stages, no kept
# tail: call 3) and the frozen backward (BN_FROZEN_ROWS); graph replays, two rounds.
# Ran against the working tree of the time: BN_SUMS_ROWS then took "channels" ranges and a "keep" flag (each share's
# last rows evict_last; dropped after call 2), and call 4's BN_ROWS_MERGE (the in-launch sums, lost) was removed after
# it: these overrides do not apply to later trees as written (the committed BN_SUMS_ROWS has "x_sizes" instead).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
ROWS='BN_SUMS_ROWS={"min_numel": 1048576, "warps": 4, "steps": 16, "channels": ((1, 4096),), "block": 2048, "per_sm": 3, "stages": 4}'
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14);bf16 CL (128, 2048, 7, 7);fp32 CL (256, 64, 56, 56);fp32 CL (32, 512, 28, 28)"
BN_VARIANT_CASES="$CASES" timeout 400 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd,frozen_params --rounds 2 \
  src "src@$ROWS" "src@$ROWS;BN_ROWS_MERGE=16" "src@$ROWS;BN_ROWS_MERGE=32" > $OUT/bn_ab.txt 2>&1
tail -18 $OUT/bn_ab.txt
