# Session 34, call 12 (one GPU): the BatchNorm suite on d8a2692 (call 2's code plus the 16-bit channels-last
# single-read forward and the channels-last sums plan): the report's BatchNorm figures.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 540 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
