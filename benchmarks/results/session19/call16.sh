# Session 19, call 16: `fastnorm check` and the LayerNorm/RMSNorm suites on the current code (H100 device entries
# active on an H100), Liger carried in .whl.
export PYTHONUNBUFFERED=1
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|error" | tail -6
