# Session 18, call 8 (a fresh machine: call 7's host ran Python ~2.5x slower than session 17's, so its host-bound
# cells fell): the LayerNorm/RMSNorm suites and `fastnorm check` with session 18's final entries.
export PYTHONUNBUFFERED=1
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|summary\|run time\|error" | tail -12
