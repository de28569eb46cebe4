# Session 24, call 1 (one GPU): the second launch of the two-launch training forward (apply) and backward (dx) walking
# the tensor from its end (config.BN_SECOND_PASS_REVERSE), against the order as before; bn_ab --graph, 2 rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (2, 256, 200, 304);bf16 NCHW (32, 512, 28, 28);bf16 NCHW (128, 2048, 7, 7);bf16 NCHW (128, 64, 112, 112);fp32 NCHW (32, 512, 28, 28);fp32 NCHW (256, 256, 28, 28);bf16 CL (256, 64, 56, 56)"
PYTHONPATH=src timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src@BN_SECOND_PASS_REVERSE=False' 'src' > $OUT/reverse_ab.log 2>&1
tail -26 $OUT/reverse_ab.log
