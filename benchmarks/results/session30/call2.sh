# Session 30, call 2 (one GPU): call 1's image-strided statistics lost at bf16 56², 14², 147². Their grids were a
# little over one wave (56²: 3 shares × 196 blocks = 588 programs for 528 slots), the shares rounded up. src now rounds
# them down (at most one wave where the blocks allow); ab_ceil is call 1's rule. Statistics pass alone and training
# forward: src at 4 and 8 programs an SM, 8 with 2048-offset blocks, the tile pass, ab_ceil at 4; then the frozen
# backward with dγ, dβ (the same share rule): src at 4 and 8 programs an SM, ab_ceil (as merged). CUDA-graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
S='"min_numel": 1048576, "min_images": 32, "images": 16, "window": 256, "max_s": 1073741824, "stages": 3'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28;bf16 NCHW (32, 64, 147;bf16 NCHW (32, 288, 35;bf16 NCHW (32, 768, 17;bf16 NCHW (256, 256, 28' \
  timeout 380 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats,train_fwd src \
  "src@BN_STATS_FLAT={$S, \"block\": 1024, \"warps\": 4, \"per_sm\": 8}" \
  "src@BN_STATS_FLAT={$S, \"block\": 2048, \"warps\": 8, \"per_sm\": 8}" \
  'src@BN_STATS_FLAT=None' ab_ceil 2>&1 | tail -26
F='"min_numel": 1048576, "min_images": 32, "images": 16, "block": 1024, "warps": 4, "window": 256, "stages": 3'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28' \
  timeout 180 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops frozen_params src \
  "src@BN_FROZEN_FLAT={$F, \"per_sm\": 8}" ab_ceil 2>&1 | tail -10
