# Session 29, call 2 (one GPU): the graph-replayed copy_ at large sizes (graph_copy.py, as rewritten after call 1),
# then the BatchNorm test files on CUDA under -n 8 (the rare dweight failure of session 27).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 90 python benchmarks/scripts/graph_copy.py 2>&1 | grep -v Warn | tail -12
timeout 180 python -m pytest -q -p no:cacheprovider -n 8 --timeout 170 -rf tests/test_batch_norm.py tests/test_batch_norm_stages.py > $OUT/bn_tests.log 2>&1
grep -v Warning $OUT/bn_tests.log | tail -8
