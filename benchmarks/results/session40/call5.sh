# Session 40, call 5 (one GPU). Calls 3-4: the backward's split rows of 512 x w2, 8/SM, beat the current configs at
# odd N in 3073-16384 (LN 12289 9.1 -> 38.6, RMS 8193 29.6 -> 42.6) except over two pieces whose second is one element
# (LN 4097 54.9 vs 40.4, 8193 43.5 vs 38.4) and RMS 3073's two rows a tile (46.3 vs 39.9); two pieces with a long
# second piece lost (LN 5121 30.7 vs 41.1). Where between does the rest piece stop winning, and what of the N not yet
# measured (1537, 2305, 6145, 14337, 16383)? 512 x w2 compiles only up to 32 pieces (PassManager failure at 16385).
# Forward: 256 x w2 u4 (best at 2305-3073) and 512 x w4 u4 at the one-piece rows 1537 and at 4099 / 4609 (two pieces).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
S2="split=True, early_loads=True"
CF="NormConfig(1, 512, False, 2, 1, 8 * sms, $S2)"
NS=1537,2305,4099,4609,6145,7169,8195,8705,14337,16383
PYTHONPATH=src timeout 200 python $A --configs "$CF" --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-100
E="evict=True"
CF="NormConfig(1, 256, True, 2, $E, unroll=4);NormConfig(1, 512, True, 4, $E, unroll=4)"
NS=1537,1793,4099,4609,14337
PYTHONPATH=src timeout 100 python $A --fwd --configs "$CF" --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-100
