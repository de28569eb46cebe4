# Session 19, call 17 (twice: the CPU key test failed on the H100 first — its baseline took the real entries —
# mended, then 4 passed): this GPU's device entries against the float64 reference (runs on an H100, skips elsewhere).
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider tests/test_layer_norm.py -k "device_entries or tuned_key or held_forward" -rs 2>&1 | tail -4
