# Session 28, call 4 (one GPU): the BatchNorm suite for the report with the flat dx pass as committed (d04ed0e:
# channels-last rows keep the tile kernel in training, after call 2 had run them flat).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
