# Session 17, call 8: the LayerNorm/RMSNorm suites and `fastnorm check` with session 17's kernels and entries (the
# BatchNorm suite is call 4's), then the norms' CUDA tests.
export PYTHONUNBUFFERED=1
timeout 500 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|summary\|run time\|error" | tail -12
PYTHONPATH=src timeout 80 python -m pytest -q -x tests/test_layer_norm.py -p no:cacheprovider > $OUT/gpu_pytest_ln.log 2>&1; tail -2 $OUT/gpu_pytest_ln.log
