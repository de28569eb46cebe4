# Session 31, call 8 (one GPU): call 5's A/B again (its src child had failed, message cut off; call 7 ran src fine
# on one case), on six of its cases: src (merge levels skipped, reserved counters under capture) against ab_head (the
# committed src). CUDA-graph replays / back-to-back, % of copy.
export PYTHONUNBUFFERED=1
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (32, 512, 28;bf16 NCHW (128, 2048, 7;fp32 CL (8, 256, 128' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops stats,train_fwd,train_bwd,frozen_params \
  ab_head src 2>&1 | head -80
