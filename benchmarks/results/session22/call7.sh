# Session 22, call 7 (one H100): the rest of tests/test_batch_norm.py + test_replay.py on CUDA (calls 4-5: 331 passed,
# a few never finished), 15 workers, a 150 s limit per test so that the slow ones are named, durations listed.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 480 python -m pytest -q -p no:cacheprovider -n 15 --timeout 150 --durations=12 -k "not spatial_size_as_an_argument" tests/test_batch_norm.py tests/test_replay.py > $OUT/pytest_bn_rest.log 2>&1
echo "rc=$?"; grep -v "Benchmark\|warner" $OUT/pytest_bn_rest.log | grep -E "passed|failed|FAILED|Timeout|s call|s setup" | head -40
