# Session 19, call 5: this GPU's device entries against the float64 reference (CUDA), then `fastnorm check` and the
# LayerNorm/RMSNorm suites with the same-bytes reference column and the device entries (Liger carried in .whl).
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 60 python -m pytest -q -x tests/test_layer_norm.py -k "device_entries or tuned_key" -p no:cacheprovider 2>&1 | tail -3
timeout 520 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|summary\|run time\|error\|^| " | tail -14
