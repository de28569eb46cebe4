# Session 26, call 4 (one H100): the report's BatchNorm suite on the current code (with this session's evict_last
# tails), Liger carried in .whl; then session 25's LayerNorm change measured on an H100 (the report's device; it was
# measured on the H200 only): the tree before it (4c14b06, ab/ln25) against the current, kernels only, two rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
A=benchmarks/scripts/norm_configs_ab.py
for tree in ln25 src ln25 src; do
  P=src; [ $tree = ln25 ] && P=ab/ln25/src
  PYTHONPATH=$P timeout 60 python $A --current --ns 12288,16384,32768 --rms-ns 32768 --dtype bfloat16 --passes 2 > $OUT/ln_bwd_$tree.log 2>&1
  PYTHONPATH=$P timeout 60 python $A --current --fwd --ns 8192,16384,32768,65536 --rms-ns 8192 --dtype bfloat16 --passes 2 > $OUT/ln_fwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/ln_bwd_$tree.log $OUT/ln_fwd_$tree.log | cut -c1-75
done
