# The report's three suites with session 16's configs (the SyncBatchNorm suites are reused on the CPU), then the
# norms' CUDA tests of the changed paths.
export PYTHONUNBUFFERED=1
timeout 450 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm,batchnorm 2>&1 | grep -v "^  \|Warning" | tail -30
PYTHONPATH=src timeout 90 python -m pytest -q -x tests/test_layer_norm.py -k "looped or chunked or tuned or config" -p no:cacheprovider > $OUT/gpu_pytest_ln.log 2>&1; tail -2 $OUT/gpu_pytest_ln.log
