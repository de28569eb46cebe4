# Session 40, call 6 (one GPU). The scalar rows' new ranges (calls 3-5) through the library: main (ab/base, a34a69a)
# against this tree, each with its own A/B script, forward and backward at odd N; then the peers side by side there.
# Expect (explicit configs, calls 3-5): forward LN 3073 32 -> 41, 6145 21 -> 41, 12289 24 -> 43, RMS 2305 42 -> 58,
# 3073 35 -> 61, 6145 39 -> 63, 12289 31 -> 60; backward LN 2305 27 -> 42, 12289 9 -> 39, 16383 11 -> 39, RMS 8193-
# 12289 30-37 -> 42; the two-piece rows (LN fwd 4609, 10241) and RMS bwd 3073 / 7169 unchanged.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install -q --no-index --no-deps .whl/*.whl
NS=2305,3073,4609,6145,7169,8705,10241,12289,14337,16383
for tree in base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  for dir in fwd bwd; do
    F=""; [ $dir = fwd ] && F="--fwd"
    PYTHONPATH=$P/src timeout 70 python $P/benchmarks/scripts/norm_configs_ab.py --current $F --ns $NS --rms-ns $NS --dtype bfloat16 --passes 1 > $OUT/${dir}_$tree.log 2>&1
    echo "== $dir $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/${dir}_$tree.log | cut -c1-90
  done
done
S=2305,3073,6145,12289,16383
for op in layernorm rmsnorm; do
  PYTHONPATH=src timeout 100 python -m fastnorm.bench $op --shapes $S --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/bench_$op > $OUT/bench_$op.log 2>&1
  echo "== $op (rc $?)"; grep -E "^\|" $OUT/bench_$op.log | cut -c1-200 | head -40
done
