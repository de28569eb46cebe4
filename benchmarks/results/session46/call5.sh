# Session 46, call 5 (one H200): BN_SUMS_ROWS as committed (tiles of 2048, 4 warps, 3 an SM, 4 stages) against
# tiles of 4096 on 8 warps, 2 an SM with 6 stages, 4 an SM with 3 stages; training backward, bf16 channels-last,
# graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
R='"min_numel": 1048576, "steps": 16, "x_sizes": (2,)'
W8="BN_SUMS_ROWS={$R, \"block\": 4096, \"warps\": 8, \"per_sm\": 3, \"stages\": 4}"
P2="BN_SUMS_ROWS={$R, \"block\": 2048, \"warps\": 4, \"per_sm\": 2, \"stages\": 6}"
P4="BN_SUMS_ROWS={$R, \"block\": 2048, \"warps\": 4, \"per_sm\": 4, \"stages\": 3}"
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (128, 2048, 7, 7);bf16 CL (32, 512, 28, 28)"
BN_VARIANT_CASES="$CASES" timeout 300 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 \
  src "src@$W8" "src@$P2" "src@$P4" > $OUT/bn_ab.txt 2>&1
tail -7 $OUT/bn_ab.txt
