# session 43, call 1: PDL probe (toy pair) + the norms' backward with the partial-sum launch under PDL modes
set -x
export PYTHONPATH=src
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
python benchmarks/scripts/pdl_probe.py 2>&1 | tail -40
for m in off sums trigger all; do
  FASTNORM_PDL=$m timeout 100 python -m fastnorm.bench layernorm --shapes 256,1024,4096,16384 --dtypes bf16 --no-models \
    --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/ln_$m > $OUT/ln_$m.log 2>&1; echo rc=$?
  tail -12 $OUT/ln_$m.log
done
for m in off all; do
  FASTNORM_PDL=$m timeout 100 python -m fastnorm.bench rmsnorm --shapes 256,1024,4096 --dtypes bf16 --no-models \
    --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/rms_$m > $OUT/rms_$m.log 2>&1; echo rc=$?
  tail -10 $OUT/rms_$m.log
done
FASTNORM_PDL=all timeout 150 python -m pytest -q -x -p no:cacheprovider tests/test_layer_norm.py -k "large_gpu or backward" \
  --deselect tests/test_layer_norm.py::test_prefetched_backward_flags \
  --deselect tests/test_layer_norm.py::test_traced_backward_of_odd_rows_takes_its_whole_row 2>&1 | tail -5
