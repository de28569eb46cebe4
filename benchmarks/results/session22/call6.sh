# Session 22, call 6 (one H100): calls 4-5 ran tests/test_batch_norm.py + test_replay.py on CUDA with 12-15 workers:
# every finished test passed (331), but a few never finished within 420-540 s. Here the GPU-only spatial-size tests
# (model sizes, 35) alone, 15 workers, a 200 s limit per test (pytest-timeout), their durations listed.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 500 python -m pytest -q -p no:cacheprovider -n 15 -m gpu -k "spatial_size" --timeout 200 --durations=40 tests/test_batch_norm.py > $OUT/pytest_spatial_gpu.log 2>&1
echo "rc=$?"; grep -v "Benchmark\|warner" $OUT/pytest_spatial_gpu.log | grep -E "passed|failed|FAILED|Timeout|s call|s setup" | head -60
