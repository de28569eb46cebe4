# Session 37, call 4 (one GPU). Call 3's GPU run of the LN tests failed 12 (e.g. N = 513 bf16): the widening's inline
# assembly takes two elements a register and a tile of rows not 16-byte aligned is loaded one element a thread.
# Now the launchers pass WIDEN (config.norm_widens: bf16, rows and addresses 16-byte aligned, pieces >= 2 elements
# a thread, not traced) and the kernels widen only then (offline: all 756 norm specializations of the sm_90 gate and
# 440 launches of the reference cases compile). Here: (a) the LN tests and the norms' robustness tests on the GPU;
# (b) one A/B round, HEAD (ab/base/src) against src, at the keys calls 1-3 measured.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 360 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py tests/test_robustness.py -k "not test_robustness or layer_norm or rms_norm" 2>&1 | tail -15
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 60 python $A --current --fwd --ns 1024,16384,32768,40000 --rms-ns 1024,8192,32768 --dtype bfloat16 --passes 2 > $OUT/fwd_$tree.log 2>&1
  PYTHONPATH=$P timeout 60 python $A --current --ns 1024,16384,32768,65536 --rms-ns 1024,16384,32768 --dtype bfloat16 --passes 2 > $OUT/bwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log $OUT/bwd_$tree.log | cut -c1-75
done
