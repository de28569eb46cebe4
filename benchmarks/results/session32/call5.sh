# Session 32, call 5 (one GPU): the BatchNorm suite on 1ceacbc (session 31's merge levels and reserved counters, this
# session's channels-last statistics wave): the report's BatchNorm figures.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 540 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
