# Session 30, call 5 (one GPU): the LayerNorm / RMSNorm suites for the report (last run in session 28, before the
# same-bytes reference's forward was captured as torch.add(x, 0) in GPU time); Liger 0.8.5 from .whl.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
