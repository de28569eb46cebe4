# Session 39, call 9 (one GPU). Call 8: split rows of 2048 x w8, 2 an SM, at odd N: LN 16385 23.6 -> 34.6, 24577
# 26.2 -> 35.1, RMS 24577 28.5 -> 34.9 (torch eager 30). The same past 32768 (40001, 65535) and at 32769.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
S="split=True, early_loads=True"
CF="NormConfig(1, 2048, False, 8, 1, 2 * sms, $S);NormConfig(1, 4096, False, 16, 1, sms, $S)"
PYTHONPATH=src timeout 150 python $A --configs "$CF" --ns 32769,40001,65535 --rms-ns 32769,65535 --dtype bfloat16 --passes 1 > $OUT/odd_bwd_split2.log 2>&1
echo "== odd bwd split (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd_split2.log | cut -c1-100
