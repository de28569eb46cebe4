# Session 27, call 6 (one GPU): the training backward in two launches at every size (call 5). The BatchNorm and stages
# test files on CUDA (also the first GPU run of session 26's BatchNorm mends), then the BatchNorm
# suite with the GPU-time figures for the report.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 180 python -m pytest -q -p no:cacheprovider -n 8 --timeout 170 tests/test_batch_norm.py tests/test_batch_norm_stages.py 2>&1 | grep -v Warning | tail -4
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
