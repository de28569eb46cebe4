# Session 19, call 2: how fast a per-channel reduction reads a BatchNorm input (torch's sum / var_mean beside
# fastnorm's statistics pass), with copy and the evaluation forward for scale; suite timer and CUDA-graph replays.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_read_ceiling.py > $OUT/bn_read_ceiling.log 2>&1
tail -52 $OUT/bn_read_ceiling.log
