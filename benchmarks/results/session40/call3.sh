# Session 40, call 3 (one GPU). Call 2: at odd N below 16385 fastnorm loses to a peer in the forward (LN 3073 32 vs
# Liger 34, 6145 21 vs 24, 12289 25 vs 27; RMS 3073 35 vs 53, 6145 39 vs 47, 12289 31 vs 38) and the LN backward
# (3073 33 vs torch 38, 12289 9 vs 30: hold_loaded spills 232 bytes). The scalar rows' forward config (1024 x w8 u4)
# read LN 12289-16383 39-42 and RMS 62-64 there. Short chunks across the range below: the forward's 1024 x w8 u4,
# 1024 x w4 u4 and 512 x w4 u4; the backward's split rows 2048 x w8 (2/SM), 1024 x w4 (4/SM), 512 x w2 (8/SM).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 1024, True, 8, $E, unroll=4);NormConfig(1, 1024, True, 4, $E, unroll=4);NormConfig(1, 512, True, 4, $E, unroll=4)"
PYTHONPATH=src timeout 200 python $A --fwd --configs "$CF" --ns 1537,2305,3073,5121,6145,10241 --rms-ns 1537,2305,3073,5121,6145,10241 --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-110
S2="split=True, early_loads=True"
CF="NormConfig(1, 2048, False, 8, 1, 2 * sms, $S2);NormConfig(1, 1024, False, 4, 1, 4 * sms, $S2);NormConfig(1, 512, False, 2, 1, 8 * sms, $S2)"
PYTHONPATH=src timeout 200 python $A --configs "$CF" --ns 3073,4097,5121,10241 --rms-ns 3073,4097,5121,10241 --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-110
