# Session 38, call 9 (an H100, asked for by name). The 24576 entries (calls 5-7) and session 37's x L2-only flag at
# the 49152 key were measured on the H200 only, and the tables serve the H100 too: HEAD before the entries (ab/base)
# against the tree at the 24576 key's rows, and the 49152 entry with and without the flag.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 60 python $A --current --fwd --ns 17000,20000,22000,24576 --rms-ns 17000,20000,24576 --dtype bfloat16 --passes 1 > $OUT/k24576_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/k24576_$tree.log | cut -c1-92
done
CF="NormConfig(1, 4096, True, 16, evict=True, unroll=8);NormConfig(1, 4096, True, 16, evict=True, unroll=8, x_l2_only=True)"
PYTHONPATH=src timeout 90 python $A --fwd --configs "$CF" --ns 33000,40000,49152 --rms-ns '' --dtype bfloat16 --passes 2 > $OUT/xl2.log 2>&1
echo "== x_l2_only (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/xl2.log | cut -c1-92
