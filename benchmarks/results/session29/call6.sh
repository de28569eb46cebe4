# Session 29, call 6 (one GPU): the BatchNorm suite for the report with the frozen flat backward on (BN_FROZEN_FLAT as
# committed after call 5) and the same-bytes reference's forward captured as torch.add(x, 0).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 420 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
