# Session 45, call 1 (one H200): the CUDA run of the autograd tests added in session 44 (double backward, forward-mode
# AD, forward-over-reverse, vectorized Jacobians), then the BatchNorm suite on an H200 (the report's BatchNorm section
# was an H100's, session 36).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 120 -rf tests \
  -k "double_backward or gradient_penalty or create_graph or forward_ad or forward_over_reverse or vectorized or gradgrad" \
  > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check > $OUT/suite.log 2>&1
tail -5 $OUT/suite.log
ls $OUT
