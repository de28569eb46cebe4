# Session 20, call 2: fp32 channels-last training forwards (1-5 points below cuDNN in the H100 report) and the bf16
# channels-last statistics pass: the statistics pass's knobs against the default and torch, report timing.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="fp32 CL (256, 64, 56, 56);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7);bf16 CL (256, 64, 56, 56)"
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --rounds 2 --ops stats,train_fwd \
  'src' 'torch' \
  'src@BN_STATS_WAVE=2' 'src@BN_STATS_WAVE=8' \
  'src@BN_LOOP_STAGES={"stats": 2, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3}' \
  'src@BN_LOOP_STAGES={"stats": 4, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3}' \
  'src@BN_CL_CB={"fused": 16, "stream": 64, "sums": 32}' \
  'src@BN_TILE={"fwd": 8192, "bwd": 2048, "sums": 4096}' > $OUT/cl_stats_knobs.log 2>&1
tail -16 $OUT/cl_stats_knobs.log
