# Session 30, call 3 (one GPU): the image-strided statistics pass with more bytes a thread in flight (call 2: rounding
# the shares down to one wave lost; 8 programs an SM gained): 2048-offset blocks of 4 warps (two 16-byte vectors a
# thread an image) at 4 and 8 programs an SM, 4096 of 8 warps at 4, 1024 of 4 warps at 8 with 5 stages; against the
# tile pass. Statistics alone, CUDA-graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
S='"min_numel": 1048576, "min_images": 32, "images": 16, "window": 256, "max_s": 1073741824'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;bf16 NCHW (32, 512, 28;bf16 NCHW (32, 64, 147;bf16 NCHW (32, 288, 35;bf16 NCHW (256, 256, 28' \
  timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats src \
  "src@BN_STATS_FLAT={$S, \"block\": 2048, \"warps\": 4, \"per_sm\": 4, \"stages\": 3}" \
  "src@BN_STATS_FLAT={$S, \"block\": 2048, \"warps\": 4, \"per_sm\": 8, \"stages\": 3}" \
  "src@BN_STATS_FLAT={$S, \"block\": 4096, \"warps\": 8, \"per_sm\": 4, \"stages\": 3}" \
  "src@BN_STATS_FLAT={$S, \"block\": 1024, \"warps\": 4, \"per_sm\": 8, \"stages\": 5}" \
  'src@BN_STATS_FLAT=None' 2>&1 | tail -12
