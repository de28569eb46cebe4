# Session 19, call 7 (H200, warm): the BatchNorm suite with the same-bytes reference column (check skipped: call 5).
export PYTHONUNBUFFERED=1
timeout 560 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error\|^| " | tail -8
