# Session 33, call 1 (one GPU): (1) the channels-last statistics merge tail at 56², stamps inside the merge chain
# (scripts/bn_timeline.py, first run of the merge stamps); (2) the small fp32 training passes against cuDNN at 8
# warps (426beb8), forward and backward, NCHW and channels-last (scripts/bn_kernel_trace.py, backward capture's
# first run).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python benchmarks/scripts/bn_timeline.py --runs 2 --cl 256 64 56 56 2>&1 | tail -24
timeout 60 python benchmarks/scripts/bn_timeline.py --runs 1 --cl 256 256 28 28 2>&1 | tail -14
for a in "32 256 14 14" "--cl 32 256 14 14" "--cl 32 2048 7 7"; do
  PYTHONPATH=src timeout 120 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd,train_bwd \
    --impls fastnorm,torch --dtype fp32 $a 2>&1 | grep -v "Warning\|_warn_once" | tail -60
done
