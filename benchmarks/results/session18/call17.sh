# Session 18, call 17 (working tree, ROW_ALIGN): the one forward that lost with aligned rows, bf16 LN 9000 (8192 +
# 1024, 8 warps: 72.9 -> 56.6): the two-piece sweep, and LN 10000 / 10240 / 11000 beside it.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
python $A --fwd --two-piece --ns 9000 --rms-ns "" --passes 2 > $OUT/c17_ln9000.log 2>&1
grep -A3 "== summary" $OUT/c17_ln9000.log
python $A --current --fwd --ns 8200,10000,10240,11000 --rms-ns "" --passes 2 > $OUT/c17_ln_more.log 2>&1
grep -E "^  (LN|RMS|skip)" $OUT/c17_ln_more.log | cut -c1-110
PYTHONPATH=ab/base/src python $A --current --fwd --ns 8200,10000,10240,11000 --rms-ns "" --passes 2 > $OUT/c17_ln_more_base.log 2>&1
grep -E "^  (LN|RMS|skip)" $OUT/c17_ln_more_base.log | cut -c1-110
