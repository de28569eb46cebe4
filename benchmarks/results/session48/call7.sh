# Session 48, call 7 (one H200; run with a BN_CL_APPLY_TILE constant in the tree then, not kept): the channels-last apply's own tile (8192) against BN_TILE["fwd"]'s
# 4096 (None), the statistics pass's tile unchanged: evaluation and training forward, bf16 and fp32 channels-last,
# CUDA-graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
export BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14);bf16 CL (128, 2048, 7, 7);fp32 CL (256, 64, 56, 56);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7);fp32 CL (32, 512, 28, 28)"
timeout 330 python benchmarks/scripts/bn_ab.py --graph --ops eval_fwd,train_fwd --rounds 2 --timeout 120 \
  'src@BN_CL_APPLY_TILE=None' src 2>&1 | tail -22
