# Session 41, call 4 (one GPU). Call 3's winners as table entries (LN forward's 16384 key 8192 + 8192; LN backward's
# 16384 key 8192 + 8192 with 16384 itself held whole in NORM_TUNED_EXACT; RMS backward's 12288 key 8192 + 4096;
# LN forward's 1536 key a second piece of 512; RMS forward's 4096 key the whole row, 4096 itself its chunk), through
# the library: HEAD (ab/base) against this tree, two rounds. Then explicit configs for LN forward's 3072 and 1536
# keys (call 3: 2560 68.8 with 4 warps, 93.9 with 2; 1280 59.0 with a 256 piece, 88.0 with 512). Then the CUDA tests
# of the compile path and the large rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --fwd --ns 1100,1280,1536,12544,14336,16128,16384 --rms-ns 3584,4096 --dtype bfloat16 --passes 1 > $OUT/fwd_$tree.log 2>&1
  echo "== fwd $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log | cut -c1-100
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --ns 12544,14336,16128,16384 --rms-ns 9216,10240,11264,12288 --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== bwd $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_$tree.log | cut -c1-100
done
PYTHONPATH=src timeout 120 python $A --fwd --ns 2304,2560,2816,3072,1088,1408 --rms-ns 1 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 2048, False, 2, block_n2=256);NormConfig(1, 2048, False, 2, block_n2=512);NormConfig(1, 2048, False, 2, block_n2=1024);NormConfig(1, 2048, False, 4, block_n2=1024);NormConfig(1, 2048, False, 4, block_n2=512);NormConfig(2, 1024, False, 2, block_n2=512);NormConfig(2, 1024, False, 2, block_n2=256);NormConfig(2, 1024, False, 2, block_n2=128);NormConfig(1, 1024, False, 2, block_n2=512);NormConfig(4, 1024, False, 4, block_n2=512)" > $OUT/small.log 2>&1
echo "== small (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/small.log | cut -c1-100
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "torch_compile or large_gpu or two_piece or exact" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED" $OUT/tests.log | tail -8
