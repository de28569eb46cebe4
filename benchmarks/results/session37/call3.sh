# Session 37, call 3 (one GPU). Call 2 (two rounds): _widen everywhere gained the backward 0.7-2.5 points and LN's
# chunked forward 1.1-1.8, and cost RMSNorm's chunked forward at 8192 4.3 (32 registers instead of 39, as session
# 17 saw): src now keeps the plain conversion in RMSNorm's chunked forward. x loaded L2-only (.cg) in the chunked
# forward took LN 40000 (the 49152 key) 63.2 -> 72.7 and cost RMSNorm 9-21 points. Here: (a) the LN tests on the GPU
# (call 1's run was cut at 150 s); (b) src against cg (= src with .cg x loads) at more rows of the 49152 key and at
# chunk configs for 32768 / 65536; (c) src's forward at the keys call 2 measured (RMS 8192 should read ~98.8 again).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 330 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py 2>&1 | tail -3
A=benchmarks/scripts/norm_configs_ab.py
C="NormConfig(1, 4096, True, 16, evict=True, unroll=8);NormConfig(1, 8192, True, 16, evict=True, unroll=4);NormConfig(1, 2048, True, 8, evict=True, unroll=8);NormConfig(1, 4096, True, 16, unroll=8)"
for tree in src cg src cg; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 60 python $A --current --fwd --ns 36000,40000,45000,49152 --rms-ns '' --dtype bfloat16 --passes 2 > $OUT/k49_$tree.log 2>&1
  echo "== 49152 key $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/k49_$tree.log | cut -c1-75
done
for tree in src cg; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 90 python $A --fwd --configs "$C" --ns 32768,65536 --rms-ns '' --dtype bfloat16 --passes 2 > $OUT/cfg_$tree.log 2>&1
  echo "== configs $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/cfg_$tree.log | cut -c1-90
done
PYTHONPATH=src timeout 60 python $A --current --fwd --ns 16384,32768 --rms-ns 8192,32768 --dtype bfloat16 --passes 2 > $OUT/fwd_src.log 2>&1
echo "== fwd src"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_src.log | cut -c1-75
