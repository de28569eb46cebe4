# Session 31, call 1 (one GPU): the training forward's statistics loop without cp.async (no barrier a tile).
# src: the tile loop as merged (cp.async, 3 stages, two barriers a tile); src@stages 1: plain loads, no prefetch;
# ab_r1: plain loads with the next tile loaded a loop iteration ahead into registers (no barrier); ab_ra: ab_r1 with
# the bf16 unpack in one instruction an element (inline PTX). Statistics pass alone and training forward, CUDA-graph
# replays, % of copy.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
L='"apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3, "frozen": 4'
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (8, 256, 128;fp32 NCHW (256, 256, 28;bf16 CL (256, 256, 28;bf16 NCHW (128, 2048, 7' \
  timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats,train_fwd src \
  "src@BN_LOOP_STAGES={$L, \"stats\": 1}" ab_r1 ab_ra 2>&1 | tail -24
