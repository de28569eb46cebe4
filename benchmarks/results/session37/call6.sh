# Session 37, call 6 (one GPU): call 5's base run failed (the tree's fmt_cfg read x_l2_only from HEAD's NormConfig,
# which lacks it; now getattr), and src read 19.0% at N = 32769 (rows not 16-byte aligned). HEAD against src there.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 40 python $A --current --fwd --ns 32769,33000,40000 --rms-ns '' --dtype bfloat16 --passes 2 > $OUT/fwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log | cut -c1-100
done
