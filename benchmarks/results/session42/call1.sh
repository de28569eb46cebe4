# Session 42, call 1: prepared in session 41 (next_call.sh). Carry [".whl"].
# (1) float32's two-piece entries just past their power of two, where bf16's short second pieces lost (session 41,
# call 5): the entries as they are (--current), then with a second piece of 2048 (the 12288 keys) or 256 (768 keys).
# (2) LN forward rows the session found slow and did not sweep: 18432 / 20480 (the 24576 key: 16384 + 8192 held,
# 70 / 77 in GPU time), 28672 (the 32768 key's whole row: 72), 57344 (the 65536 key's held row: 69).
# (3) The traced backward of LN's odd 12289-16383 rows (a 32-warp whole row, 21-24% of copy; torch.compile's own
# layer_norm 1451 GB/s at 12289 against fastnorm's 897): the two pieces that the aligned rows now take.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 120 python $A --fwd --ns 544,8448,9216 --rms-ns 544,8448,9216 --dtype float32 --passes 1 --configs "NormConfig(2, 512, False, 2, block_n2=256);NormConfig(1, 8192, False, 16, block_n2=2048);NormConfig(2, 8192, False, 32, block_n2=2048)" > $OUT/fp32_fwd.log 2>&1
echo "== fp32 fwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_fwd.log | cut -c1-100
PYTHONPATH=src timeout 120 python $A --ns 8448,9216 --rms-ns 8448,9216 --dtype float32 --passes 1 --configs "NormConfig(1, 8192, False, 16, 1, sms, block_n2=2048);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=2048)" > $OUT/fp32_bwd.log 2>&1
echo "== fp32 bwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_bwd.log | cut -c1-100
PYTHONPATH=src timeout 150 python $A --fwd --ns 18432,20480,28672,57344 --rms-ns 1 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 16384, False, 16, hold_loaded=True, block_n2=16384);NormConfig(1, 2048, True, 8, evict=True, unroll=8);NormConfig(1, 4096, True, 16, evict=True, unroll=8, x_l2_only=True);NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=4);NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=7)" > $OUT/ln_fwd.log 2>&1
echo "== LN fwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/ln_fwd.log | cut -c1-100
PYTHONPATH=src timeout 120 python $A --ns 12289,14337,16383 --rms-ns 1 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 16384, False, 32, 1, sms, True);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=8192);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=8192)" > $OUT/odd_traced.log 2>&1
echo "== odd traced (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/odd_traced.log | cut -c1-100
