# Session 30, call 6 (one GPU): two losses in call 4's suite. (a) The frozen key (8 items an SM, 4 stages) at the NCHW
# tile cells of few images (bf16 2×256×200×304 77.6 -> 74.0, fp32 86.9 -> 84.9): src against the old 16 / 3;
# frozen_params. (b) The training backward at the smallest NCHW tensors (bf16 32×256×14² 15.2 -> 12.8, fp32 24.3 ->
# 22.4; session 29's flat sums, BN_SUMS_FLAT): src against BN_SUMS_FLAT=None; train_bwd. CUDA-graph replays. First
# the CUDA tests of the plan rules and the frozen paths.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 170 python -m pytest -q -p no:cacheprovider -n 8 --timeout 160 -rf tests/test_batch_norm.py tests/test_replay.py \
  tests/test_robustness.py -k "frozen or sums_flat or nan_inf or plan or prefetch" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -4
I='"fused": 8, "stream": 16'
L='"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3'
BN_VARIANT_CASES='bf16 NCHW (2, 256, 200;bf16 NCHW (8, 256, 128;fp32 NCHW (8, 256, 128;bf16 NCHW (8, 128, 56;bf16 NCHW (8, 2048, 7;bf16 NCHW (16, 1024, 14;bf16 NCHW (8, 64, 56' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops frozen_params src \
  "src@BN_ITEMS_PER_SM={$I, \"frozen\": 16};BN_LOOP_STAGES={$L, \"frozen\": 3}" 2>&1 | tail -9
BN_VARIANT_CASES='bf16 NCHW (32, 256, 14;fp32 NCHW (32, 256, 14;bf16 NCHW (32, 2048, 7;fp32 NCHW (32, 2048, 7;bf16 NCHW (32, 512, 28;fp32 NCHW (32, 512, 28;bf16 NCHW (128, 2048, 7' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops train_bwd src \
  'src@BN_SUMS_FLAT=None' 2>&1 | tail -9
