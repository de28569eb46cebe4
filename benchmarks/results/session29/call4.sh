# Session 29, call 4 (one GPU): the frozen backward with dγ, dβ as the image-strided flat kernel (BN_FROZEN_FLAT, new)
# — its CUDA tests, then bn_ab's frozen_params over NCHW tensors: the flat kernel as built (blocks of 1024, 4 warps, 4
# programs an SM) against the tile kernel (None), blocks of 2048 with 8 warps, 8 and 2 programs an SM.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 140 -rf tests/test_batch_norm.py tests/test_replay.py \
  tests/test_robustness.py -k "frozen or robust or nan_inf or replay" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -4
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28;bf16 NCHW (8, 256, 128;bf16 NCHW (2, 256, 200' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 120 --ops frozen_params src \
  'src@BN_FROZEN_FLAT=None' 'src@BN_FROZEN_FLAT=(1048576, 2048, 8, 256, 4)' \
  'src@BN_FROZEN_FLAT=(1048576, 1024, 4, 256, 8)' 'src@BN_FROZEN_FLAT=(1048576, 1024, 4, 256, 2)' 2>&1 | tail -15
