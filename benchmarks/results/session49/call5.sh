# Session 49, call 5 (one H200): the RMSNorm suite with bwd-int32-rows merged (8f2d13f), for the report.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 400 bash benchmarks/scripts/gpu_report.sh rmsnorm --skip-check 2>&1 | tail -5
