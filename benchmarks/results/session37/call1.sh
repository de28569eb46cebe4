# Session 37, call 1 (one GPU). (a) LayerNorm/RMSNorm, kernels only, HEAD (ab/base/src) against the tree, two
# rounds each: the chunked LN forward's shifted sums (3 instructions an element against Welford's 5) and bf16 loads
# widened by a shift and a mask (_widen: 1 instruction an element against 1.5), sm_90 offline: LN fwd 32768 loops
# 537 + 652 -> 289 + 554 per 64 elements; LN bwd 16384 936 -> 891; split backward 519-651 -> 495-630.
# (b) the CUDA tests of session 36's final BatchNorm form (never run on a GPU) and of this change.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src base src; do
  P=src; [ $tree = base ] && P=ab/base/src
  PYTHONPATH=$P timeout 150 python $A --current --fwd --ns 1024,1536,4096,8192,16384,32768,40000,65536 --rms-ns 1024,8192,32768,40000,65536 --dtype bfloat16 --passes 2 > $OUT/fwd_$tree.log 2>&1
  PYTHONPATH=$P timeout 150 python $A --current --ns 256,1024,4096,12288,16384,32768,65536 --rms-ns 1024,16384,32768 --dtype bfloat16 --passes 2 > $OUT/bwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log $OUT/bwd_$tree.log | cut -c1-75
done
for tree in base src; do
  P=src; [ $tree = base ] && P=ab/base/src
  PYTHONPATH=$P timeout 100 python $A --current --fwd --ns 16384,65536 --rms-ns 16384,65536 --dtype float32 --passes 2 > $OUT/fwd32_$tree.log 2>&1
  echo "== fp32 $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd32_$tree.log | cut -c1-75
done
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 tests/test_layer_norm.py -k "shifted or chunked or looped or hold or split or constant or offset or nan or fp16 or residual or 32768 or 65536" 2>&1 | tail -3
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 tests/test_batch_norm.py tests/test_batch_norm_stages.py tests/test_robustness.py -k "stats_rows or rows or nan or running_stats" 2>&1 | tail -3
