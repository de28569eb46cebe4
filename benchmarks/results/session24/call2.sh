# Session 24, call 2 (one GPU): the reversed second pass with L2 eviction hints (experimental values of
# BN_SECOND_PASS_REVERSE: 2 = its y / dx stores evict_first, 3 = and its x loads evict_first); bn_ab --graph, 2 rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (2, 256, 200, 304);fp32 NCHW (32, 512, 28, 28);fp32 NCHW (256, 256, 28, 28);bf16 CL (256, 64, 56, 56)"
PYTHONPATH=src timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src@BN_SECOND_PASS_REVERSE=0' 'src@BN_SECOND_PASS_REVERSE=1' 'src@BN_SECOND_PASS_REVERSE=2' \
  'src@BN_SECOND_PASS_REVERSE=3' > $OUT/hints_ab.log 2>&1
tail -22 $OUT/hints_ab.log
