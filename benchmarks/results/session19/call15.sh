# Session 19, call 15: the BatchNorm CUDA tests at the flat-kernel commit, then the BatchNorm suite (check skipped:
# call 16 runs it with the norm suites).
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 230 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py tests/test_replay.py tests/test_convert.py 2>&1 | tail -3
timeout 330 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error\|^| " | tail -4
