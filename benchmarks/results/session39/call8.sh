# Session 39, call 8 (one GPU). The backward at odd N loses to torch eager (call 4: LN 16385 24 vs 30, 24577 26 vs
# 30, RMS 24577 29 vs 30); call 5's chunked and whole-row configs were slower than the current split rows (8192 x
# w16, 1/SM). Smaller split pieces, more programs an SM (the forward's scalar rows gained from short chunks).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
S="split=True, early_loads=True"
CF="NormConfig(1, 4096, False, 8, 1, 2 * sms, $S);NormConfig(1, 2048, False, 4, 1, 4 * sms, $S);NormConfig(1, 4096, False, 16, 1, sms, $S)"
CF="$CF;NormConfig(1, 2048, False, 8, 1, 2 * sms, $S);NormConfig(1, 4096, False, 8, 1, 2 * sms, True, split=True, early_loads=True)"
PYTHONPATH=src timeout 150 python $A --configs "$CF" --ns 16385,24577 --rms-ns 16385,24577 --dtype bfloat16 --passes 1 > $OUT/odd_bwd_split.log 2>&1
echo "== odd bwd split (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd_split.log | cut -c1-100
