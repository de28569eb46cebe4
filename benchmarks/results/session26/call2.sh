# Session 26, call 2 (one H100): call 1's backward gain (+0.5..+1.8 at every case with BN_KEEP_BYTES=16 MB, less at
# 24 and 32) — smaller tails (4, 8 MB) and the 16 MB tail without its hint (ab/nohint: the same split and
# unpipelined tail loop, plain loads) tell the hint's part from the loop's; 3 rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);fp32 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 NCHW (32, 64, 147, 147)"
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 3 --ops train_fwd,train_bwd \
  'src@BN_KEEP_BYTES=0' 'src@BN_KEEP_BYTES=4000000' 'src@BN_KEEP_BYTES=8000000' 'src@BN_KEEP_BYTES=16000000' \
  'ab/nohint/src@BN_KEEP_BYTES=16000000' > $OUT/keep_ab2.log 2>&1
tail -19 $OUT/keep_ab2.log
