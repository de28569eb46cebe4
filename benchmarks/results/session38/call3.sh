# Session 38, call 3 (one GPU). Offline sm_90 SASS showed the chunked forward's unrolled loops, where N is no whole
# number of chunks, issuing their masked loads one at a time (each into the register the previous one used): 60000
# read 57.9% against 65536's 83.6 in call 2 with the same config. The tree peels the last, partial chunk off each
# loop (LayerNorm; ab/rmspeel: RMSNorm too), so the loops' loads carry no predicate. HEAD (ab/base) against both, at
# rows that are no whole number of chunks (and 49152 / 32768 as controls); then call 2's persistent grid with the
# peel at the 65536 key's rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src rmspeel base src rmspeel; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 100 python $A --current --fwd --ns 20000,24000,32768,33000,40000,45000,49152 --rms-ns 20000,24000,40000,45000,49152 --dtype bfloat16 --passes 1 > $OUT/peel_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/peel_$tree.log | cut -c1-100
done
G="NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=8, params_l2_only=True)"
PYTHONPATH=src timeout 100 python $A --fwd --configs "$G" --ns 57344,60000,61440,65536 --rms-ns 60000,65536 --dtype bfloat16 --passes 2 > $OUT/grid_peel.log 2>&1
echo "== grid with the peel (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/grid_peel.log | cut -c1-100
