# Session 41, call 5 (one GPU). Calls 3-4: a two-piece entry's second piece of next_pow2(N - block_n) is slow when
# it is short (LN forward 2304: 2048 + 256 63.6, + 512 93.9; 1100: 1024 + 128 54.6, + 512 71.2). The other two-piece
# keys (6144: 4096 + next_pow2(N - 4096); 12288: 8192 + ...) at rows just past their power of two, forward and
# backward, LN and RMS: the entries as they are, then with a fixed, longer second piece and fewer warps.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
NS=4352,4608,5120,8448,8704,9216,10240
PYTHONPATH=src timeout 200 python $A --fwd --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 --configs "NormConfig(1, 4096, False, 4, block_n2=1024);NormConfig(1, 4096, False, 2, block_n2=1024);NormConfig(1, 4096, False, 2, block_n2=512);NormConfig(1, 8192, False, 8, block_n2=2048);NormConfig(1, 8192, False, 4, block_n2=2048);NormConfig(1, 8192, False, 4, block_n2=1024)" > $OUT/fwd.log 2>&1
echo "== fwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fwd.log | cut -c1-100
PYTHONPATH=src timeout 250 python $A --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 --configs "NormConfig(1, 4096, False, 8, 3, 2 * sms, True, block_n2=1024);NormConfig(1, 4096, False, 4, 3, 2 * sms, True, block_n2=1024);NormConfig(2, 4096, False, 16, 3, sms, True, block_n2=1024);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=2048);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=2048)" > $OUT/bwd.log 2>&1
echo "== bwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/bwd.log | cut -c1-100
