# Session 26, call 11 (one H100): after the review mends (the forward's aligned rows back to one loop, KEEPV not
# specialized on, the aligned sums' KEEPV rounded up), the BatchNorm and stages test files on CUDA.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 240 python -m pytest -q -p no:cacheprovider -n 8 --timeout 200 tests/test_batch_norm.py tests/test_batch_norm_stages.py 2>&1 | grep -v Warning | tail -4
