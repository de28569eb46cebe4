# Session 48, call 3 (one H200): bf16 channels-last evaluation (the tiled one-pass apply, 84.6% of copy at 256×256×28²
# and 256×64×56² against the target 85 and the copy's 90.4): its plan's knobs, CUDA-graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
export BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14)"
timeout 590 python benchmarks/scripts/bn_ab.py --graph --ops eval_fwd --rounds 2 --timeout 120 \
  src \
  'src@BN_CL_CB={"fused": 32, "stream": 128, "sums": 32}' \
  'src@BN_CL_CB={"fused": 32, "stream": 256, "sums": 32}' \
  'src@BN_STREAM_LARGE=(33554432, 16)' \
  'src@BN_STREAM_LARGE=(33554432, 64)' \
  'src@BN_ITEM={"fused": 32768, "stream": 262144};BN_STREAM_LARGE=(33554432, 4)' \
  'src@BN_LOOP_STAGES={"stats": 3, "apply": 2, "apply_row32": 2, "bwd": 3, "dx": 3, "frozen": 4}' \
  'src@BN_WARPS=4' \
  torch 2>&1 | tail -25
