# Session 38, call 1 (one GPU). Where LayerNorm's chunked forward's second pass finds its re-read: with two 63-register
# programs an SM at 32768 (sm_90 offline), the SM re-reads 128 KB of x and 128 KB of weight and bias each row pair,
# more than its L1. params_l2_only loads the weight and bias .cg (L2 only), so L1 keeps x. Explicit configs at the
# long rows, LN and RMS; then the unaligned N = 32769 with fewer unrolled chunks.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=8);NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=8, params_l2_only=True)"
CF="$CF;NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=8, x_l2_only=True)"
CF="$CF;NormConfig(1, 4096, True, 32, 1, 0, $E, unroll=8, params_l2_only=True)"
CF="$CF;NormConfig(1, 8192, True, 32, 1, 0, $E, unroll=4, params_l2_only=True)"
CF="$CF;NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=8, params_l2_only=True)"
CF="$CF;NormConfig(1, 2048, True, 16, 1, 0, $E, unroll=8, params_l2_only=True)"
PYTHONPATH=src timeout 330 python $A --fwd --configs "$CF" --ns 32768,40000,49152,65536 --rms-ns 32768,65536 --dtype bfloat16 --passes 2 > $OUT/pl2.log 2>&1
echo "== params_l2_only (rc $?)"; grep -hE "^  (LN|RMS|skip)|^(LN|RMS) " $OUT/pl2.log | cut -c1-150
CU="NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=2);NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=1)"
CU="$CU;NormConfig(1, 2048, True, 8, 1, 0, $E, unroll=2);NormConfig(1, 4096, True, 8, 1, 0, $E, unroll=4)"
CU="$CU;NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=4, params_l2_only=True)"
PYTHONPATH=src timeout 150 python $A --fwd --configs "$CU" --ns 32769 --rms-ns 32769 --dtype bfloat16 --passes 2 > $OUT/odd.log 2>&1
echo "== 32769 (rc $?)"; grep -hE "^  (LN|RMS|skip)|^(LN|RMS) " $OUT/odd.log | cut -c1-150
