# Session 39, call 5 (one GPU). Call 4: at odd N (rows not 16-byte aligned: scalar loads) torch eager reads 23-30% and
# fastnorm ties or loses (LN backward 16385 24 vs 30, 24577 26 vs 30; RMS forward 24577 30 vs Liger 36). Explicit
# configs found LN forward 24577 23.8 -> 33.7 (2048 x w8, u2), 49151 23.4 -> 41.8 (whole row, w16), RMS 49151 35.4
# -> 63.7. Now a wider sweep for unaligned rows' own entries: forward and backward at 8193-49151, LN and RMS, bf16.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 2048, True, 8, $E, unroll=2);NormConfig(1, 2048, True, 8, $E, unroll=4);NormConfig(1, 1024, True, 8, $E, unroll=4)"
CF="$CF;NormConfig(1, 4096, True, 16, $E, unroll=2);NormConfig(1, 2048, True, 4, $E, unroll=2)"
PYTHONPATH=src timeout 170 python $A --fwd --configs "$CF" --ns 8193,16385,24577,32769,49151 --rms-ns 8193,16385,24577,32769,49151 --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd chunked (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-100
CF="NormConfig(1, 32768, False, 16);NormConfig(1, 32768, False, 32);NormConfig(1, 16384, False, 16);NormConfig(1, 16384, False, 8)"
PYTHONPATH=src timeout 90 python $A --fwd --configs "$CF" --ns 32769,49151 --rms-ns 16385,32769,49151 --dtype bfloat16 --passes 1 > $OUT/odd_fwd_whole.log 2>&1
echo "== odd fwd whole (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd_whole.log | cut -c1-100
CF="NormConfig(1, 2048, True, 8, 3, sms);NormConfig(1, 2048, True, 8, 3, 2 * sms);NormConfig(2, 2048, True, 8, 3, 2 * sms)"
CF="$CF;NormConfig(1, 4096, True, 16, 3, sms);NormConfig(1, 32768, False, 32, 1, sms, True)"
PYTHONPATH=src timeout 170 python $A --configs "$CF" --ns 8193,16385,24577 --rms-ns 8193,16385,24577 --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-100
