# Session 20, call 6: the training backward over large tensors (fp32 channels-last 1-2 points below cuDNN in the H100
# report): the sums pass's wave and the dx pass's tile, items and prefetch depth against the default and torch.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="fp32 CL (256, 64, 56, 56);fp32 CL (8, 256, 128, 128);bf16 CL (256, 64, 56, 56);bf16 NCHW (256, 64, 56, 56);fp32 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14)"
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --rounds 2 --ops train_bwd \
  'src' 'torch' 'src@BN_SUMS_WAVE=1' 'src@BN_SUMS_WAVE=4' \
  'src@BN_DX_LARGE_TILE=8192' 'src@BN_DX_LARGE_TILE=2048' 'src@BN_STREAM_LARGE=(33554432, 16)' \
  'src@BN_LOOP_STAGES={"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 4}' > $OUT/bwd_knobs.log 2>&1
tail -16 $OUT/bwd_knobs.log
