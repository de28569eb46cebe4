# Session 40, call 7 (one GPU). After call 6, RMS's forward at 12289-16384 takes 1024-column chunks (16383: 64.1
# against 512's 50.7, call 2 / call 6); LN's keeps 512. The current configs there, then the CUDA tests that reach the
# scalar rows (the large test now has 3073 and 12289 too).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 60 python benchmarks/scripts/norm_configs_ab.py --current --fwd --ns 12289,16383 --rms-ns 12289,14337,16383 --dtype bfloat16 --passes 1 > $OUT/fwd_src.log 2>&1
echo "== fwd src (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_src.log | cut -c1-90
PYTHONPATH=src timeout 420 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or scalar_rows" > $OUT/tests.log 2>&1; echo "== tests (rc $?)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
