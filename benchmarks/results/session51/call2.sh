# Session 51, call 2 (one H200): the RMSNorm suite of `fastnorm report` on main at 54bce8e, then the CUDA tests of
# test_layer_norm.py in full (session 50's run was cut at 92%).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 260 bash benchmarks/scripts/gpu_report.sh rmsnorm --skip-check > $OUT/report.log 2>&1
echo "== report rc $? (${SECONDS}s)"; tail -4 $OUT/report.log
timeout 300 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py > $OUT/tests.log 2>&1
echo "== tests rc $? (${SECONDS}s)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
