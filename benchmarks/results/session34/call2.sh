# Session 34, call 2 (one GPU): CUDA tests of the single-read paths, then the BatchNorm suite on 73f742a
# (the single-read backward, its 16-bit channels-last budget): the report's BatchNorm figures.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 -rf tests/test_batch_norm.py \
  -k "resident or relu" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
timeout 470 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
