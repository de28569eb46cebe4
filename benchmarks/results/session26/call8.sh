# Session 26, call 8 (one H100): the BatchNorm tests on CUDA (the whole file, and the SyncBatchNorm stage tests), then
# the report's BatchNorm suite on the code as committed: the evict_last tails, 64-channel channels-last sums for 16-bit
# x (fp32 keeps 32, call 7); Liger carried in .whl.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 150 tests/test_batch_norm.py tests/test_batch_norm_stages.py 2>&1 | tail -2
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
