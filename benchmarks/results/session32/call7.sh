# Session 32, call 7 (one GPU): (1) the small fp32 training passes where torch (cuDNN) is faster in GPU time
# (32×256×14², NCHW and channels-last): each implementation's kernels and gaps (scripts/bn_kernel_trace.py
# --impls fastnorm,torch); (2) the channels-last statistics timeline at 56² with 2 items an SM (1ceacbc).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for a in "32 256 14 14" "--cl 32 256 14 14"; do
  PYTHONPATH=src timeout 120 python benchmarks/scripts/bn_kernel_trace.py --ops copy,train_fwd,train_bwd \
    --impls fastnorm,torch --dtype fp32 $a 2>&1 | grep -v "Warning\|_warn_once" | tail -60
done
timeout 90 python benchmarks/scripts/bn_timeline.py --runs 2 --cl 256 64 56 56 2>&1 | tail -14
