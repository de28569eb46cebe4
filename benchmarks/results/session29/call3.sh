# Session 29, call 3 (one GPU): the frozen backward with dγ, dβ (the suite's frozen mode, 8 of 40 cells at target;
# bn_ab's new op frozen_params) under other plans of its one-pass tile kernel (MODE 2, kind "stream"): tiles of 4096
# (8 warps), items of 128K elements, 8 items per SM, 4 loop stages; CUDA-graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (128, 2048, 7;bf16 CL (256, 64, 56;bf16 CL (128, 2048, 7;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28;fp32 CL (8, 256, 128' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 120 --ops frozen_params src \
  'src@BN_TILE={"fwd": 4096, "bwd": 4096, "sums": 4096}' 'src@BN_ITEM={"fused": 32768, "stream": 131072}' \
  'src@BN_ITEMS_PER_SM={"fused": 8, "stream": 8}' \
  'src@BN_LOOP_STAGES={"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 4, "dx": 3}' torch 2>&1 | tail -16
