# Session 26, call 1 (one H100): (1) l2_reuse.py with evict_last tails: how much of a just-read tensor the next
# kernel finds in L2 when the first kernel marks its last T MB evict_last; (2) the reduction passes' evict_last tails
# in BatchNorm (BN_KEEP_BYTES: the statistics pass and the backward's sums load each item's end evict_last, not
# pipelined) — bn_ab --graph, 2 rounds, training forward and backward.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python benchmarks/scripts/l2_reuse.py --mb 48,103,206 --tail-mb 16,24,32,40 > $OUT/l2_reuse.log 2>&1
cat $OUT/l2_reuse.log
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);fp32 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 NCHW (32, 64, 147, 147)"
PYTHONPATH=src timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src@BN_KEEP_BYTES=0' 'src@BN_KEEP_BYTES=16000000' 'src@BN_KEEP_BYTES=24000000' 'src@BN_KEEP_BYTES=32000000' \
  > $OUT/keep_ab.log 2>&1
tail -18 $OUT/keep_ab.log
