# Session 31, call 2 (one GPU): call 1 took the barriers and 12% of the instructions out of the statistics loop and
# gained nothing. Where does the statistics pass's time go? Time against size (N = 32..512) for the statistics pass,
# the evaluation forward and the training forward, beside a read (torch's sum) and a copy of x's bytes: the fitted
# t0 (fixed cost) and rate (streaming). bf16 NCHW and channels-last 64×56², bf16 NCHW 1024×14², fp32 NCHW 64×56².
export PYTHONUNBUFFERED=1
export PYTHONPATH=src
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python benchmarks/scripts/bn_size_sweep.py 64 56 56
timeout 120 python benchmarks/scripts/bn_size_sweep.py --cl 64 56 56
timeout 120 python benchmarks/scripts/bn_size_sweep.py --batches 16,32,64,128,256 1024 14 14
timeout 120 python benchmarks/scripts/bn_size_sweep.py --dtype fp32 --batches 16,32,64,128,256 64 56 56
