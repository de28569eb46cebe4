# Session 37, call 2 (one GPU). Call 1: bf16 LN fwd 32768 did not move (83.0 -> 83.0 / 82.3) though its loops lost
# 29% of their instructions (not issue-bound there); fp32 LN fwd 65536 lost 3.4 (shifted sums, no widening in fp32).
# The shifted sums are reverted (src = Welford again, _widen everywhere). Trees, kernels only, two rounds:
#   base = HEAD; src = _widen everywhere; nowc = src without _widen in the chunked forward (call 1: RMS fwd 8192
#   99.0 -> 94.5, LN 40000 63.3 -> 65.9); cg = src with x loaded L2-only (.cg, no L1 hint) in the forward (pass 1
#   and pass 2 of the chunked rows), so that L1 keeps the weight and bias that pass 2 re-reads each row.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for round in 1 2; do
for tree in base src nowc cg; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 120 python $A --current --fwd --ns 1024,16384,32768,40000 --rms-ns 8192,32768,40000 --dtype bfloat16 --passes 2 > $OUT/fwd_${tree}_$round.log 2>&1
  echo "== fwd $tree $round"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_${tree}_$round.log | cut -c1-75
done
for tree in base cg; do
  P=ab/$tree/src
  PYTHONPATH=$P timeout 100 python $A --current --fwd --ns 16384,65536 --rms-ns 65536 --dtype float32 --passes 2 > $OUT/fwd32_${tree}_$round.log 2>&1
  echo "== fp32 fwd $tree $round"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd32_${tree}_$round.log | cut -c1-75
done
for tree in base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 100 python $A --current --ns 16384,32768,65536 --rms-ns 16384,32768 --dtype bfloat16 --passes 2 > $OUT/bwd_${tree}_$round.log 2>&1
  echo "== bwd $tree $round"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_${tree}_$round.log | cut -c1-75
done
done
