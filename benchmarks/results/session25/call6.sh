# Session 25, call 6 (one GPU): the LayerNorm/RMSNorm kernels with (a) HAS_OFFSET (no weight-offset add unless the
# offset is non-zero) and (b) dx formed straight from the held loads (offline sm_90, bf16 LN backward at 16384: a loop
# of 1035 -> 936 instructions). Kernels only, current configs, HEAD (ab/base/src) against src, two rounds each;
# backward and forward; then the CUDA LN tests that take the changed paths.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=src; [ $tree = base ] && P=ab/base/src
  PYTHONPATH=$P timeout 80 python $A --current --ns 4096,8192,12288,16384,32768 --rms-ns 16384,32768 --dtype bfloat16 --passes 2 > $OUT/c6_bwd_$tree.log 2>&1
  PYTHONPATH=$P timeout 80 python $A --current --fwd --ns 16384,32768,65536 --rms-ns 8192,32768 --dtype bfloat16 --passes 2 > $OUT/c6_fwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/c6_bwd_$tree.log $OUT/c6_fwd_$tree.log | cut -c1-75
done
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 110 tests/test_layer_norm.py -k "hold or offset or residual or 16384 or degenerate" 2>&1 | tail -2
