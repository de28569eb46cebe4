# Session 20, call 14: after the final read's refactor of the ops' replay calls (options named once): the replay
# and launch tests and the BatchNorm/LayerNorm replay-vs-reference tests on CUDA.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider tests/test_replay.py tests/test_launch.py tests/test_batch_norm.py tests/test_layer_norm.py -k "replay or launch or program or residual" 2>&1 | tail -2
