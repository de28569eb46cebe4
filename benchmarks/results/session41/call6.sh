# Session 41, call 6 (one GPU). Call 5's finding as entries: a two-piece entry's second piece at least the entry's
# own block_n2 (LN/RMS forward 6144 key + 1024, 12288 key + 2048; backward likewise, LN's with fewer warps: 6144 key
# 4 warps, 12288 key 8), through the library, HEAD (ab/base) against this tree, two rounds, with the keys' ends
# (5632, 6144, 11264, 12288) that call 5 did not measure. Then explicit configs for the 768 key's forward (512 + 32
# at 544) and RMS backward's 1536 / 3072 keys (1024 + 128 at 1100, 2048 + 256 at 2304). Then the CUDA tests of the
# tables' rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
NS=4352,4608,5632,6144,8448,8704,9216,11264,12288
for tree in base src base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --fwd --ns $NS,2304,2560,2816,3072 --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/fwd_$tree.log 2>&1
  echo "== fwd $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log | cut -c1-100
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== bwd $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_$tree.log | cut -c1-100
done
PYTHONPATH=src timeout 100 python $A --fwd --ns 544,640,704,768 --rms-ns 544,640,704,768 --dtype bfloat16 --passes 1 --configs "NormConfig(2, 512, False, 1, block_n2=256);NormConfig(2, 512, False, 2, block_n2=256);NormConfig(4, 512, False, 2, block_n2=256);NormConfig(1, 512, False, 1, block_n2=256);NormConfig(2, 512, False, 1, block_n2=128)" > $OUT/small_fwd.log 2>&1
echo "== small fwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/small_fwd.log | cut -c1-100
PYTHONPATH=src timeout 100 python $A --ns 1 --rms-ns 1088,1280,1536,2304,2560,3072 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 1024, False, 2, 3, 4 * sms, block_n2=512);NormConfig(1, 1024, False, 2, 3, 4 * sms, block_n2=256);NormConfig(1, 1024, False, 4, 3, 4 * sms, block_n2=512);NormConfig(1, 2048, False, 4, 3, 4 * sms, block_n2=1024);NormConfig(1, 2048, False, 4, 3, 4 * sms, block_n2=512);NormConfig(1, 2048, False, 2, 3, 4 * sms, block_n2=1024)" > $OUT/small_bwd.log 2>&1
echo "== small bwd (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/small_bwd.log | cut -c1-100
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "two_piece or exact or large_gpu or torch_compile" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED" $OUT/tests.log | tail -8
