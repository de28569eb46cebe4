# Session 20, call 9: the mended direct-launch test, then `fastnorm check` and the LayerNorm/RMSNorm suites on the
# current code (the host path of this session), Liger carried in .whl.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 60 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "direct_launch" 2>&1 | tail -1
timeout 500 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|error" | tail -6
