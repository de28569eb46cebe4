# Session 26, call 5 (asked for an H200 by kind; ran on an H100, the machine of calls 1-4): the evict_last tails
# (BN_KEEP_BYTES) again on the code as committed: none against 8 MB (the default) and 16 MB; bn_ab --graph, 3 rounds, training forward and backward.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);fp32 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 NCHW (32, 64, 147, 147)"
PYTHONPATH=src timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 3 --ops train_fwd,train_bwd \
  'src@BN_KEEP_BYTES=0' 'src' 'src@BN_KEEP_BYTES=16000000' > $OUT/keep_ab_h200.log 2>&1
tail -19 $OUT/keep_ab_h200.log
