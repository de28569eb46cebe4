# Session 25, call 7 (one GPU): call 6's change made the forward's whole rows skip the offset's add as well, and LN
# forward 16384 lost 4 points (91.7 -> 87.6: fewer instructions between the weight's loads and the stores). Now the
# forward takes HAS_OFFSET in its chunked rows only, and the held backward forms dx as dy·(w·rstd) - ... (call 5's
# experiment, 75.2%). Kernels only, HEAD (ab/base/src) against src, two rounds; then the CUDA LN tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=src; [ $tree = base ] && P=ab/base/src
  PYTHONPATH=$P timeout 60 python $A --current --ns 12288,16384,32768 --rms-ns 32768 --dtype bfloat16 --passes 2 > $OUT/c7_bwd_$tree.log 2>&1
  PYTHONPATH=$P timeout 60 python $A --current --fwd --ns 8192,16384,32768,65536 --rms-ns 8192 --dtype bfloat16 --passes 2 > $OUT/c7_fwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/c7_bwd_$tree.log $OUT/c7_fwd_$tree.log | cut -c1-75
done
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 tests/test_layer_norm.py -k "hold or offset or residual or 16384 or degenerate" 2>&1 | tail -2
