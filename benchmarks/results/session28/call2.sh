# Session 28, call 2 (one GPU): the flat dx pass on by default from 2^20 elements (call 1). The BatchNorm and stages
# test files on CUDA (the flat dx pass's first GPU run of its tests; the rare dweight failure of session 27 names its
# worst element now), then the BatchNorm suite for the report.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 180 python -m pytest -q -p no:cacheprovider -n 8 --timeout 170 -rf tests/test_batch_norm.py tests/test_batch_norm_stages.py > $OUT/bn_tests.log 2>&1
grep -v Warning $OUT/bn_tests.log | tail -6
timeout 390 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
