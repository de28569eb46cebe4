# Session 40, call 9 (one GPU). Traced launches (torch.compile) take no split rows, so odd rows of 12289-16384 fall
# back to the tables' whole row held as loaded (LN 12289 9.1%: 232 bytes spilled, call 1). Unsplit configs for
# them: the whole row without hold_loaded (w16 st3 / w32), and short chunks (1024 x w4 4/SM, 2048 x w8 2/SM, two
# rows of 1024 x w8 2/SM).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
CF="NormConfig(1, 16384, False, 16, 3, sms, True);NormConfig(1, 16384, False, 32, 1, sms, True)"
CF="$CF;NormConfig(1, 1024, True, 4, 3, 4 * sms);NormConfig(1, 2048, True, 8, 3, 2 * sms);NormConfig(2, 1024, True, 8, 3, 2 * sms)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/norm_configs_ab.py --configs "$CF" --ns 12289,16383 --rms-ns 8193,12289 --dtype bfloat16 --passes 1 > $OUT/unsplit.log 2>&1
echo "== unsplit (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/unsplit.log | cut -c1-100
