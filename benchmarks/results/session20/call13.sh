# Session 20, call 13: the final code (after the review's mends) on CUDA: replay, launch, BatchNorm and LayerNorm
# replay-vs-reference, statistics-plan and training tests.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 280 python -m pytest -q -p no:cacheprovider tests/test_replay.py tests/test_launch.py tests/test_batch_norm.py tests/test_layer_norm.py -k "replay or launch or apply_function or device_entries or stats_wave or train or program" 2>&1 | tail -3
