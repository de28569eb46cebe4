# Session 30, call 4 (one GPU): the BatchNorm suite for the report, with the frozen pass's own plan key (50a0076) and
# session 29's flat sums for the training backward (BN_SUMS_FLAT, not in the report until now).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 450 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
