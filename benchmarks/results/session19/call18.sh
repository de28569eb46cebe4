# Session 19, call 18: after the review's mends — the flat-kernel, replay and device-entry tests on CUDA.
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "apply_flat or eval" tests/test_replay.py tests/test_layer_norm.py -k "apply_flat or eval or device_entries or tuned_key or replay" -rs 2>&1 | tail -4
