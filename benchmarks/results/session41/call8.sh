# Session 41, call 8 (one GPU). Rows of odd length (read one element a load) keep next_pow2(N - block_n) as the
# second piece (call 7: the least pieces lost there), but the entries' new warps reach some of them: LN forward
# 2049-3071 (4 -> 2 warps), LN backward 4097 / 8193 and, traced, 4097-6143 (8 -> 4) and 8193-12287 (16 -> 8), RMS
# backward traced 8193-12287 (16384's whole row -> 8192 + the rest). Old against new config at such rows, explicit.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 90 python $A --fwd --ns 2049,2305,2817,3071 --rms-ns 1 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 2048, False, 4, block_n2=1);NormConfig(1, 2048, False, 2, block_n2=1);NormConfig(1, 2048, False, 4, block_n2=512);NormConfig(1, 2048, False, 2, block_n2=512);NormConfig(1, 2048, False, 4, block_n2=1024);NormConfig(1, 2048, False, 2, block_n2=1024)" > $OUT/fwd.log 2>&1
echo "== fwd (rc $?)"; grep -hE "^  (LN)" $OUT/fwd.log | cut -c1-100
PYTHONPATH=src timeout 150 python $A --ns 4097,5121,8193,10241 --rms-ns 8449,10241,12287 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 4096, False, 8, 3, 2 * sms, True, block_n2=1);NormConfig(1, 4096, False, 4, 3, 2 * sms, True, block_n2=1);NormConfig(1, 4096, False, 8, 3, 2 * sms, True, block_n2=1024);NormConfig(1, 4096, False, 4, 3, 2 * sms, True, block_n2=1024);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=1);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=1);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=2048);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=2048);NormConfig(1, 16384, False, 16, 1, sms, True);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=512);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=4096)" > $OUT/bwd.log 2>&1
echo "== bwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/bwd.log | cut -c1-100
