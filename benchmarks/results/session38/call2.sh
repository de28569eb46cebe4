# Session 38, call 2 (one GPU). Call 1: a persistent grid of one 32-warp program an SM over 8192-column chunks,
# unrolled 8, with the weight and bias L2-only, read LN 65536 at 83.2% (the held whole row 73.2) and RMS 65536 at 88.1
# (83.3); without the grid (two programs an SM) the flag gained nothing at 32768. One row an SM keeps x's row in
# L1. Now: that grid's neighbours (chunk, warps, unroll, programs an SM, the flag off) across each key's rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
P="params_l2_only=True"
CF="NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=8, $P);NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=4, $P)"
CF="$CF;NormConfig(1, 4096, True, 32, 1, sms, $E, unroll=8, $P);NormConfig(1, 4096, True, 16, 1, sms, $E, unroll=8, $P)"
CF="$CF;NormConfig(1, 4096, True, 16, 1, 2 * sms, $E, unroll=8, $P);NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=8)"
CF="$CF;NormConfig(1, 8192, True, 16, 1, sms, $E, unroll=8, $P);NormConfig(1, 16384, True, 32, 1, sms, $E, unroll=4, $P)"
PYTHONPATH=src timeout 400 python $A --fwd --configs "$CF" --ns 32768,40000,49152,57344,60000,65536 --rms-ns 40000,49152,57344,65536 --dtype bfloat16 --passes 2 > $OUT/grid.log 2>&1
echo "== persistent grids (rc $?)"; grep -hE "^  (LN|RMS|skip)|^(LN|RMS) " $OUT/grid.log | cut -c1-118
