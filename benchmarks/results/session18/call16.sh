# Session 18, call 16 (two trees, as call 15): call 15's LN forward at 9000 (two pieces) lost with ROW_ALIGN (bf16
# 72.4 -> 56.6) while RMS gained: LN/RMS forward at more unaligned N — two pieces (3000, 5000, 9000), one tile
# (1000, 2000), chunked/looped (20000, 40000) — bf16, kernels only.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for tree in base new; do
  P=src; [ $tree = base ] && P=ab/base/src
  PYTHONPATH=$P python $A --current --fwd --ns 1000,2000,3000,5000,9000,20000,40000 --rms-ns 3000,5000,20000 --passes 3 > $OUT/c16_fwd_$tree.log 2>&1
done
for f in $OUT/c16_*.log; do echo "== $(basename $f)"; grep -E "^  (LN|RMS|skip)" $f | cut -c1-110; done
