# Session 47, call 7 (one H200): the float32 cells where a peer led in call 1's suite (GPU time), after
# `_running_loads`, against torch's F.batch_norm (cuDNN) in the same pattern: graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
CASES="fp32 NCHW (32, 256, 14, 14);fp32 NCHW (32, 512, 28, 28);fp32 NCHW (128, 2048, 7, 7);fp32 CL (32, 2048, 7, 7);fp32 CL (128, 2048, 7, 7)"
BN_VARIANT_CASES="$CASES" timeout 400 python benchmarks/scripts/bn_ab.py --graph --ops train_fwd,train_bwd --rounds 2 \
  src torch > $OUT/bn_ab.txt 2>&1
tail -13 $OUT/bn_ab.txt
