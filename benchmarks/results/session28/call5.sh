# Session 28, call 5 (nvidia-h100-x1): the BatchNorm backward rules measured so far on the H200 only, on an H100 —
# the flat dx pass (default, d04ed0e) against the tile one (BN_DX_FLAT=None), and the two-launch training backward
# (default since session 27) against one launch (BN_TRAIN_FUSED=True); CUDA-graph replays, two rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='NCHW (128, 2048, 7;NCHW (32, 256, 14;bf16 NCHW (256, 1024, 14;fp32 NCHW (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (32, 256, 14' \
  timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops train_bwd,frozen_bwd src \
  'src@BN_DX_FLAT=None' 'src@BN_TRAIN_FUSED=True' torch 2>&1 | tail -22
