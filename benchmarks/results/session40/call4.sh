# Session 40, call 4 (one GPU). Call 3 at odd N: in the forward, 512 x w4 chunks unrolled 4 beat 1024 x w8 / w4
# (LN 6145 20.7 -> 41.2, RMS 6145 39.2 -> 63.4) wherever the current config is one piece; the two-piece entries
# (2305, 5121, 10241) stay ahead. In the backward, split rows of 512 x w2, 8/SM, beat 2048 x w8 and 1024 x w4 at
# 3073-10241 (LN 3073 32.8 -> 40.2, RMS 10241 33.5 -> 42.4) except over LN 4097's two pieces and RMS 3073's two rows
# a tile. Now the narrow configs across the whole odd range, against the current ones (the scalar rows past 16384):
# forward 512 x w4 u4 / u8, 256 x w2 u4, 1024 x w8 u4; backward 512 x w2 8/SM, 256 x w1 16/SM, 1024 x w4 4/SM.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 512, True, 4, $E, unroll=4);NormConfig(1, 512, True, 4, $E, unroll=8);NormConfig(1, 256, True, 2, $E, unroll=4)"
CF="$CF;NormConfig(1, 1024, True, 8, $E, unroll=4)"
NS=2305,3073,6145,8193,12289,16385,32769,65535
PYTHONPATH=src timeout 220 python $A --fwd --configs "$CF" --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-100
S2="split=True, early_loads=True"
CF="NormConfig(1, 512, False, 2, 1, 8 * sms, $S2);NormConfig(1, 256, False, 1, 1, 16 * sms, $S2);NormConfig(1, 1024, False, 4, 1, 4 * sms, $S2)"
NS=3073,5121,8193,12289,16385,24577,32769,65535
PYTHONPATH=src timeout 280 python $A --configs "$CF" --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-100
