# Session 42, call 9 (tree c181537): RMSNorm's backward past 16384 as whole rows of two pieces held as loaded
# (16384 + 4096 or 8192, 16 warps, one program an SM, the weight re-read per row) against the split rows of the 24576
# key (2048 x w4, 4 an SM: 71.5 / 72.9 at 17408 / 20480, call 5). Offline sm_90 (sass_loops): 16384 + 4096 no
# spills, 840 instructions a row; + 8192: 72 bytes of stack (32 warps: 80).
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 100 python $A --ns "" --rms-ns 16896,18432,20480 --dtype bfloat16 --passes 2 --configs "NormConfig(1, 16384, False, 16, 1, sms, True, block_n2=4096, hold_loaded=True)" > $OUT/held_4096.log 2>&1
echo "== + 4096 (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/held_4096.log | cut -c1-110
PYTHONPATH=src timeout 100 python $A --ns "" --rms-ns 22528,24576 --dtype bfloat16 --passes 2 --configs "NormConfig(1, 16384, False, 16, 1, sms, True, block_n2=8192, hold_loaded=True);NormConfig(1, 16384, False, 32, 1, sms, True, block_n2=8192, hold_loaded=True)" > $OUT/held_8192.log 2>&1
echo "== + 8192 (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/held_8192.log | cut -c1-110
