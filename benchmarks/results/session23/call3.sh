# Session 23, call 3 (one GPU): where the odd-size BatchNorm time goes — each kernel's GPU time (torch.profiler) for
# the training forward, evaluation and training backward, aligned rows on (default) and off.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14)"
PYTHONPATH=src timeout 300 python benchmarks/scripts/bn_kernel_times.py --ops train_fwd,eval_fwd,train_bwd,stats '' 'BN_ALIGNED_ROWS={}' > $OUT/kernel_times.log 2>&1
cat $OUT/kernel_times.log | cut -c1-330
