# Session 20, call 12: channels-last statistics pass under the H100's 2 items per SM (this session's entry): prefetch
# depth, channel block and tile, training forward, report timing.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 CL (256, 64, 56, 56);fp32 CL (256, 64, 56, 56);fp32 CL (128, 2048, 7, 7);fp32 CL (8, 256, 128, 128)"
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_ab.py --rounds 2 --ops train_fwd \
  'src' 'src@BN_LOOP_STAGES={"stats": 4, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3}' \
  'src@BN_LOOP_STAGES={"stats": 2, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3}' \
  'src@BN_CL_CB={"fused": 64, "stream": 64, "sums": 32}' 'src@BN_TILE={"fwd": 2048, "bwd": 2048, "sums": 4096}' > $OUT/cl_wave2_knobs.log 2>&1
tail -10 $OUT/cl_wave2_knobs.log
