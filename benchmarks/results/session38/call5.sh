# Session 38, call 5 (one GPU). Call 4: LayerNorm's forward at 20000-28000 (the 32768 entry, 4096-column chunks
# unrolled 8) reads 57-62% (RMS 92-96); unroll matched to the whole chunks gained 7 points (u4 at 20000: 66.9).
# Peeling the partial chunk off the loops moved LN 20000 / 24000 by +2.5 / +3.2 but 33000 by -2.5 and RMS both ways
# (not kept). Now whole rows and two-piece rows against the chunked ones across 16385-32768 (keys 24576 and 32768).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 32768, False, 32);NormConfig(1, 32768, False, 32, hold_loaded=True)"
CF="$CF;NormConfig(1, 32768, False, 16, hold_loaded=True);NormConfig(1, 16384, False, 16, block_n2=8192)"
CF="$CF;NormConfig(1, 16384, False, 16, block_n2=8192, hold_loaded=True);NormConfig(1, 16384, False, 32, block_n2=16384)"
CF="$CF;NormConfig(1, 2048, True, 8, $E, unroll=8);NormConfig(1, 1024, True, 4, $E, unroll=8)"
CF="$CF;NormConfig(1, 4096, True, 16, $E, unroll=4);NormConfig(1, 2048, True, 16, $E, unroll=8)"
PYTHONPATH=src timeout 400 python $A --fwd --configs "$CF" --ns 17000,20000,22000,24576,26000,28000,30000,32768 --rms-ns 20000,28000 --dtype bfloat16 --passes 2 > $OUT/mid.log 2>&1
echo "== 16385-32768 (rc $?)"; grep -hE "^  (LN|RMS)|^(LN|RMS) " $OUT/mid.log | cut -c1-104
