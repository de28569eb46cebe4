# Session 33, call 6 (one GPU): the BatchNorm suite on 2580418 (session 32's fp32 single-read kernel at 8 warps,
# this session's merge-loop prefetch): the report's BatchNorm figures.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
