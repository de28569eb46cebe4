# Session 22, call 5 (one H100): call 4's CUDA test run again with its output kept (call 4's was cut by its timeout at
# ~330 of ~335 tests, its first line of results not printed): tests/test_batch_norm.py and tests/test_replay.py on
# CUDA, 15 workers, at HEAD (the flat apply with S's power-of-two factor compiled in).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 540 python -m pytest -q -p no:cacheprovider -n 15 tests/test_batch_norm.py tests/test_replay.py > $OUT/pytest_bn_replay_cuda.log 2>&1
echo "rc=$?"; grep -E "passed|failed|FAILED|[0-9]+ error" $OUT/pytest_bn_replay_cuda.log | tail -15
