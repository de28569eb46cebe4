# Session 39, call 6 (one GPU). Verify dce9a37 (rows read one element a load, 16385-65536: 1024-column chunks,
# unroll 4) through the library against 2306196 (ab/base): LN / RMS bf16 forward at odd N (expect call 5's 23-39 ->
# 34-62) and at even N (unchanged); the suites' forward at odd N beside torch and Liger; a few smaller variants at
# two N; then the CUDA tests of the change.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install -q --no-index --no-deps .whl/*.whl
A=$PWD/benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 70 python $A --current --fwd --ns 8193,16385,24577,32769,49151,65535,24576 --rms-ns 16385,24577,49151,65535 --dtype bfloat16 --passes 1 > $OUT/cur_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/cur_$tree.log | cut -c1-100
done
E="evict=True"
CF="NormConfig(1, 1024, True, 8, $E, unroll=4);NormConfig(1, 512, True, 4, $E, unroll=4);NormConfig(1, 1024, True, 4, $E, unroll=4)"
CF="$CF;NormConfig(1, 1024, True, 8, $E, unroll=8);NormConfig(1, 512, True, 8, $E, unroll=8);NormConfig(1, 1024, True, 8, unroll=4)"
PYTHONPATH=src timeout 110 python $A --fwd --configs "$CF" --ns 24577,49151 --rms-ns 24577,49151 --dtype bfloat16 --passes 1 > $OUT/variants.log 2>&1
echo "== variants (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/variants.log | cut -c1-100
for op in layernorm rmsnorm; do
  PYTHONPATH=src timeout 80 python -m fastnorm.bench $op --shapes 16385,24577,32769,49151 --ops fwd --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/bench_$op > $OUT/bench_$op.log 2>&1
  echo "== $op (rc $?)"; grep -E "^\| 49152" $OUT/bench_$op.log | cut -c1-200
done
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "scalar_rows or two_piece or large_gpu or exact or looped_forward" > $OUT/tests.log 2>&1; echo "== tests (rc $?)"; tail -2 $OUT/tests.log
