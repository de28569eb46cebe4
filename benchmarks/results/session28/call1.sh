# Session 28, call 1 (one GPU): measure branch flat-dx (rebased on main as ab/flatdx): the flat pointwise dx pass
# (BN_DX_FLAT, threshold 0 so every eligible case takes it) against main's tile dx pass and torch, in CUDA-graph
# replays, training backward and the dx-alone frozen backward. Small tensors first, then large.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='NCHW (128, 2048, 7;NCHW (32, 2048, 7;NCHW (32, 256, 14;fp32 CL (32, 256, 14' timeout 250 \
  python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 120 --ops train_bwd,frozen_bwd src \
  'ab/flatdx/src@BN_DX_FLAT=(0, 1024, 4, 256)' torch 2>&1 | tail -20
BN_VARIANT_CASES='NCHW (256, 1024, 14;NCHW (256, 256, 28;NCHW (256, 64, 56;NCHW (8, 256, 128;fp32 CL (256, 64;fp32 CL (8, 256, 128;NCHW (32, 512, 28' timeout 330 \
  python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 160 --ops train_bwd,frozen_bwd src \
  'ab/flatdx/src@BN_DX_FLAT=(0, 1024, 4, 256)' torch 2>&1 | tail -30
