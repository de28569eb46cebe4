# Session 46, call 3 (one H200): the row-strided sums pass in tiles of 2048 with 4 stages (call 2's best), its kept
# tail on or off, against the tile sums pass over more channel counts (which ranges to take), training backward,
# graph replays, two rounds.
# Ran against the working tree of the time: BN_SUMS_ROWS then took "channels" ranges and a "keep" flag (each share's
# last rows evict_last; dropped after call 2), and call 4's BN_ROWS_MERGE (the in-launch sums, lost) was removed after
# it: these overrides do not apply to later trees as written (the committed BN_SUMS_ROWS has "x_sizes" instead).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
R='"min_numel": 1048576, "warps": 4, "steps": 16, "channels": ((1, 4096),), "block": 2048, "per_sm": 3, "stages": 4'
K1="BN_SUMS_ROWS={$R, \"keep\": 1}"
K0="BN_SUMS_ROWS={$R, \"keep\": 0}"
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (32, 512, 28, 28);bf16 CL (256, 512, 28, 28);bf16 CL (256, 1024, 14, 14);bf16 CL (128, 2048, 7, 7);fp32 CL (8, 256, 128, 128);fp32 CL (32, 512, 28, 28);fp32 CL (128, 2048, 7, 7);bf16 CL (256, 128, 28, 28)"
BN_VARIANT_CASES="$CASES" timeout 330 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 src \
  "src@$K1" "src@$K0" > $OUT/bn_ab_bwd.txt 2>&1
tail -12 $OUT/bn_ab_bwd.txt
