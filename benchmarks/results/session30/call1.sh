# Session 30, call 1 (one GPU): the CUDA tests of the new and session 29's unrun kernels (frozen, sums_flat, stats_flat,
# plans, NaN/Inf); then (a) the training forward's statistics image-strided (src) against the tile pass
# (BN_STATS_FLAT=None), and 8 programs an SM; ops stats (the pass alone) and train_fwd; (b) the frozen pass's own key:
# items per SM 16 -> 8 and loop stages 3 -> 4, alone and together (src = 8 / 4); frozen_params. CUDA-graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 170 python -m pytest -q -p no:cacheprovider -n 8 --timeout 160 -rf tests/test_batch_norm.py tests/test_replay.py \
  tests/test_robustness.py -k "frozen or sums_flat or stats_flat or nan_inf or plan or prefetch" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -5
S='"min_numel": 1048576, "min_images": 32, "images": 16, "block": 1024, "warps": 4, "window": 256, "max_s": 1073741824'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28;bf16 NCHW (32, 64, 147;bf16 NCHW (32, 288, 35' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 120 --ops stats,train_fwd src \
  'src@BN_STATS_FLAT=None' "src@BN_STATS_FLAT={$S, \"per_sm\": 8, \"stages\": 3}" 2>&1 | tail -20
I='"fused": 8, "stream": 16'
L='"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (128, 2048, 7;fp32 CL (8, 256, 128;bf16 CL (256, 1024, 14;bf16 CL (8, 256, 128;bf16 NCHW (8, 256, 128' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 100 --ops frozen_params src \
  "src@BN_ITEMS_PER_SM={$I, \"frozen\": 16};BN_LOOP_STAGES={$L, \"frozen\": 3}" \
  "src@BN_ITEMS_PER_SM={$I, \"frozen\": 8};BN_LOOP_STAGES={$L, \"frozen\": 3}" \
  "src@BN_ITEMS_PER_SM={$I, \"frozen\": 16};BN_LOOP_STAGES={$L, \"frozen\": 4}" 2>&1 | tail -12
