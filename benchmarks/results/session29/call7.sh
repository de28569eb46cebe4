# Session 29, call 7 (one GPU): the training backward's sums pass through the frozen flat kernel without its dx
# (BN_SUMS_FLAT, new) against the tile sums pass (False), NCHW, CUDA-graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;fp32 NCHW (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 90 --ops train_bwd src \
  'src@BN_SUMS_FLAT=False' 2>&1 | tail -9
