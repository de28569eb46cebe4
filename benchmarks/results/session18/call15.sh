# Session 18, call 15 (two trees: HEAD in ab/base/src, the working tree in src): rows and strides passed as
# quotients of ROW_ALIGN (the largest power of two up to 16 dividing them), so rows of 8k elements load 16 bytes at
# a time: bf16 LN/RMS backward and forward at N = 8200, 9000, 9300, 1000 (unaligned for Triton's own divisibility-16
# specialization) and 12000 (control: aligned), kernels only, current configs; then the CUDA LN tests.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for tree in base new; do
  P=src; [ $tree = base ] && P=ab/base/src
  for d in bfloat16 float32; do
    PYTHONPATH=$P python $A --current --ns 1000,8200,9000,9300,12000 --rms-ns 1000,9000 --dtype $d --passes 2 > $OUT/c15_bwd_${tree}_$d.log 2>&1
    PYTHONPATH=$P python $A --current --fwd --ns 1000,9000,12000 --rms-ns 9000 --dtype $d --passes 2 > $OUT/c15_fwd_${tree}_$d.log 2>&1
  done
done
for f in $OUT/c15_*.log; do echo "== $(basename $f)"; grep -E "^  (LN|RMS|skip)" $f | cut -c1-110; done
PYTHONPATH=src timeout 150 python -m pytest -q -x tests/test_layer_norm.py -k "not large and not 2_31" -p no:cacheprovider > $OUT/c15_pytest.log 2>&1; tail -2 $OUT/c15_pytest.log
