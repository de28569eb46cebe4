# Session 49, call 4 (one H200): the LayerNorm suite with bwd-int32-rows merged (8f2d13f), for the report.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 520 bash benchmarks/scripts/gpu_report.sh layernorm --skip-check 2>&1 | tail -5
