# Session 33, call 8 (one GPU): the LayerNorm/RMSNorm forward at N = 65536 on the H200 as calls 4 and 7 measured it
# (a persistent grid of one 32-warp program an SM over 8192-column chunks, unrolled 8: LN 74.8 -> 79.8, RMS 85.4 ->
# 87.3 kernels only at 49152 rows; the held whole rows stay the H100's). (1) The CUDA tests that run the forward at
# 65536 and 40000 against the float64 reference; (2) the LayerNorm and RMSNorm suites for the report.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 140 -rf tests/test_layer_norm.py \
  -k "split_rows_gpu or eager_matches_reference_large_gpu or device_entries" > $OUT/tests.log 2>&1; tail -3 $OUT/tests.log
timeout 440 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
