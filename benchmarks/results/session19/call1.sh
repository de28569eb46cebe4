# Session 19, call 1: what the suites' timer costs a small call (zeroing vs reading flush vs CUDA-graph GPU time),
# copy/add references of the same bytes, and the backward's autograd host time, bf16 x (49152, N).
export PYTHONUNBUFFERED=1
PYTHONPATH=src python benchmarks/scripts/timing_floor.py --ns 32,128,256,512,1024,2048,4096 > $OUT/timing_floor.log 2>&1
tail -60 $OUT/timing_floor.log
