# Session 26, call 3 (one H100): the report's LayerNorm and RMSNorm suites and `fastnorm check` on the current code
# (sessions 21-26; the committed tables are session 20's), Liger carried in .whl; profile_host first (host speed).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|error" | tail -6
grep "^| " $OUT/profile_host.log
