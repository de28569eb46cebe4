# Session 39, call 7 (one GPU). Call 6's A/B of the tree against 2306196 failed in the base (the tree's A/B script
# passes scalar_loads, which 2306196's config does not take). Now each tree with its own script, at the odd N that
# calls 4-5 did not measure in the base: 40001, 57343, 65535 (and 24577 as the anchor).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for tree in base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 80 python $P/benchmarks/scripts/norm_configs_ab.py --current --fwd --ns 24577,40001,57343,65535 --rms-ns 40001,57343,65535 --dtype bfloat16 --passes 1 > $OUT/cur_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/cur_$tree.log | cut -c1-100
done
