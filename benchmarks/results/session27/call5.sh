# Session 27, call 5 (one GPU): call 4's GPU-time figures show fastnorm's training backward behind torch / compile
# on small tensors (the one-launch backward, <= 2^24 elements): fp32 NCHW 128x2048x7^2 31% vs 52%, 32x256x14^2
# 18 vs 28. A/B in graph replays: the one-launch backward against two launches; then the small training forwards
# (single-read resident kernel) against the two-launch forward.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='7, 7);(32, 256, 14, 14);(32, 512, 28, 28)' timeout 360 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_bwd src 'src@BN_TRAIN_FUSED=False' torch 2>&1 | tail -22
BN_VARIANT_CASES='(32, 2048, 7, 7);(32, 256, 14, 14);(8, 2048' timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_fwd src 'src@BN_RESIDENT=False' torch 2>&1 | tail -14
