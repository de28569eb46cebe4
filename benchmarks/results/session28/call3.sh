# Session 28, call 3 (one GPU): the LayerNorm and RMSNorm suites with the GPU-time figures (session 27's harness),
# for the report (its check, session 26's, kept: the norm kernels have not changed since).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -4
