# Session 38, call 8 (one GPU). The LayerNorm/RMSNorm suites with Liger, for the report: its norm tables are session
# 32's; session 37's widened bf16 loads and x L2-only at the 49152 key, and this session's 24576 entries, since.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check > $OUT/suite.log 2>&1
echo "rc $?"; grep -E "^\| (LN|RMS|copy)" $OUT/suite.log | head -20; tail -5 $OUT/suite.log
