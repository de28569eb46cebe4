# Session 32, call 2 (one GPU): the graph test with its count of captured launches mended (at 32×1024×14² the sums
# take the image-strided pass, which has no counters), then the profiler's kernel records of each pass's CUDA-graph
# replays (scripts/bn_kernel_trace.py): call 1's timeline put the statistics programs' span ~11 µs under the pass's
# GPU time — is that inside the kernel (before the first program, after the last) or between kernels?
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider -n 3 --timeout 90 -rf tests/test_batch_norm.py \
  -k "training_step_in_a_cuda_graph" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -8
for a in "256 64 56 56" "--cl 256 64 56 56" "256 1024 14 14"; do
  PYTHONPATH=src timeout 120 python benchmarks/scripts/bn_kernel_trace.py $a 2>&1 | grep -v Warning | tail -40
done
PYTHONPATH=src timeout 90 python benchmarks/scripts/bn_kernel_trace.py --ops stats \
  --set 'BN_LOOP_STAGES={"stats": 1, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3, "frozen": 4}' 256 64 56 56 2>&1 | tail -12
