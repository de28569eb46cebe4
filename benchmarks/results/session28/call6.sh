# Session 28, call 6 (one GPU): where the small fp32 training passes lose to cuDNN (H200 GPU time, report: fp32
# 32x256x14² backward 24.1 vs torch 31.8, forward 20.9 vs 28.1): each kernel's time, fastnorm's launches beside
# torch's, from the CUDA profiler.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
BN_VARIANT_CASES='fp32 NCHW (32, 256, 14;fp32 CL (32, 256, 14;fp32 NCHW (32, 2048, 7;fp32 NCHW (128, 2048, 7;bf16 NCHW (32, 256, 14' \
  timeout 150 python benchmarks/scripts/bn_kernel_times.py --ops train_fwd,train_bwd '' torch 2>&1 | grep -v Warn | tail -24
