# Session 20, call 3: the statistics pass as one wave of 1 / 2 / 3 items per SM against 4 (call 2: 2 was faster in
# every channels-last case), over NCHW and channels-last, bf16 and fp32, report timing.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (128, 2048, 7, 7);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (128, 2048, 7, 7);fp32 NCHW (256, 256, 28, 28);fp32 NCHW (32, 512, 28, 28);fp32 CL (256, 64, 56, 56);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7)"
PYTHONPATH=src timeout 580 python benchmarks/scripts/bn_ab.py --rounds 2 --ops stats,train_fwd \
  'src' 'src@BN_STATS_WAVE=1' 'src@BN_STATS_WAVE=2' 'src@BN_STATS_WAVE=3' > $OUT/stats_wave.log 2>&1
tail -30 $OUT/stats_wave.log
