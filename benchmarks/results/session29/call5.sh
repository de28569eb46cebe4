# Session 29, call 5 (one GPU): the frozen flat backward with BN_FROZEN_FLAT as a dict (call 4: more programs an SM won
# at large tensors, lost at 7² and small batches): the default (8 programs an SM, at least 16 images a program, the
# loop not pipelined) against the tile kernel (None), the loop pipelined 2 and 3 deep, and 4 programs an SM 3 deep;
# frozen_params, CUDA-graph replays. First the frozen and NaN/Inf CUDA tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 140 -rf tests/test_batch_norm.py tests/test_replay.py \
  tests/test_robustness.py -k "frozen or nan_inf" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -4
F='"min_numel": 1048576, "min_images": 1, "images": 16, "block": 1024, "warps": 4, "window": 256'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28;bf16 NCHW (8, 256, 128;bf16 NCHW (2, 256, 200' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 120 --ops frozen_params src \
  'src@BN_FROZEN_FLAT=None' "src@BN_FROZEN_FLAT={$F, \"per_sm\": 8, \"stages\": 2}" \
  "src@BN_FROZEN_FLAT={$F, \"per_sm\": 8, \"stages\": 3}" "src@BN_FROZEN_FLAT={$F, \"per_sm\": 4, \"stages\": 3}" \
  2>&1 | tail -15
