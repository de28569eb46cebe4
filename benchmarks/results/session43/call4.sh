# session 43, call 4: RMS forward 40961-49152 held as 32768 + 16384 (NORM_FWD_VECTOR_ROWS), through the library:
# main (ab/base) against this tree, bf16 and fp16; beside the peers; the CUDA tests of the rows
export PYTHONPATH=src
python -m pip install -q --no-index --no-deps .whl/*.whl 2>&1 | tail -1
A=benchmarks/scripts/norm_configs_ab.py
NS=40968,41000,42000,43008,44000,45000,47000,49152,49160
for d in bfloat16 float16; do
  [ $d = float16 ] && NS=41000,45000,49152
  (cd ab/base && PYTHONPATH=src python $A --current --fwd --passes 2 --ns "" --rms-ns $NS --dtype $d 2>&1 | grep current)
  mv $OUT/norm_configs_ab.json $OUT/base_$d.json
  python $A --current --fwd --passes 2 --ns "" --rms-ns $NS --dtype $d 2>&1 | grep current
  mv $OUT/norm_configs_ab.json $OUT/new_$d.json
done
timeout 150 python -m fastnorm.bench rmsnorm --shapes 41000,45000,49152 --dtypes bf16 --no-models --compile none --no-plots \
  --impls fastnorm,torch,liger,copy --ops fwd --out $OUT/peers > $OUT/peers.log 2>&1; tail -9 $OUT/peers.log
timeout 200 python -m pytest -q -p no:cacheprovider tests/test_layer_norm.py -k "(large_gpu and (41000 or 45000 or 49152)) or vector_rows" 2>&1 | tail -3
