# Session 36, call 5 (one GPU): kernel records of the training forward with the row-strided statistics pass (and a
# read of x's bytes beside) at three bf16 channels-last tensors, to see why C = 256 lost in call 4 (8×256×128²
# call 3: 35.8 µs for 67 MB, where 256×64×56² took 37.8 for 103 MB); the tile pass at the C = 256 ones.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for shape in "256 64 56 56" "256 256 28 28" "8 256 128 128"; do
  echo "== $shape rows"
  PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd,read --impls fastnorm \
    --dtype bf16 --cl --set "BN_RESIDENT=False" $shape 2>&1 | grep -v Warning | grep -v "^ *$" | tail -16
done
for shape in "256 256 28 28" "8 256 128 128"; do
  echo "== $shape tile"
  PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd --impls fastnorm \
    --dtype bf16 --cl --set "BN_RESIDENT=False;BN_STATS_ROWS=None" $shape 2>&1 | grep -v Warning | grep -v "^ *$" | tail -8
done
