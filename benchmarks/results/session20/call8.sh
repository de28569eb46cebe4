# Session 20, call 8: the generated replay programs on CUDA (replay, launch, BatchNorm/LayerNorm replay tests against
# the reference), then the BatchNorm suite (H100 report: the statistics wave and the host path of this session).
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider tests/test_replay.py tests/test_launch.py tests/test_batch_norm.py tests/test_layer_norm.py -k "replay or launch or apply_function or device_entries or stats_wave" 2>&1 | tail -3
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error\|^| " | tail -8
