# session 43, call 6: RMS forward's 65536 key rows as 32768 + 32768 held, through the library (main in ab/base ->
# this tree); the forward sweep at the small rows where a peer is within 3 points; the CUDA test of the new rows
export PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
NS=49160,53248,57344,61440,65536,65544
(cd ab/base && PYTHONPATH=src python $A --current --fwd --passes 2 --ns "" --rms-ns $NS 2>&1 | grep current)
mv $OUT/norm_configs_ab.json $OUT/base_65536key.json
python $A --current --fwd --passes 2 --ns "" --rms-ns $NS 2>&1 | grep current
mv $OUT/norm_configs_ab.json $OUT/new_65536key.json
timeout 200 python $A --fwd --passes 2 --ns 256,1024 --rms-ns 128,256,1024 2>&1 | grep "current"
mv $OUT/norm_configs_ab.json $OUT/sweep_small.json
timeout 120 python -m pytest -q -p no:cacheprovider tests/test_layer_norm.py -k "large_gpu and 57344" 2>&1 | tail -2
