# Session 18, call 18: the CUDA tests of the norms after ROW_ALIGN (call 15's run lost its log), and fastnorm check.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 230 python -m pytest -q tests/test_layer_norm.py -p no:cacheprovider > $OUT/c18_pytest.log 2>&1; tail -3 $OUT/c18_pytest.log
timeout 150 python -m fastnorm check > $OUT/c18_check.log 2>&1; tail -2 $OUT/c18_check.log
