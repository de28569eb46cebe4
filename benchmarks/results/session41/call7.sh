# Session 41, call 7 (one GPU). (1) The tables' two-piece entries now give rows a second piece of at least the
# entry's block_n2; rows of odd length below 16385 keep those entries (session 40: two pieces faster there than the
# scalar rows' configs, with the short second piece), so they change too: HEAD (ab/base) against this tree at odd
# rows just past a power of two, and call 6's small keys (768 forward, RMS backward 1536) through the library.
# (2) The suites' harness beside the peers at call 2's slow aligned rows (GPU time). (3) CUDA tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install -q --no-index --no-deps .whl/*.whl
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --fwd --ns 544,545,640,1089,2305,4099,4353,8193,8449 --rms-ns 544,545,1089,4099,4353,8193,8449 --dtype bfloat16 --passes 1 > $OUT/fwd_$tree.log 2>&1
  echo "== fwd $tree (rc $?)"
  PYTHONPATH=$P/src timeout 100 python $P/$A --current --ns 4097,4353,8193,8449 --rms-ns 1088,1089,4353,8449 --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== bwd $tree (rc $?)"
done
for op in layernorm rmsnorm; do
  S=2560,4352,8704,14336; [ $op = rmsnorm ] && S=3584,4352,8704,10240
  PYTHONPATH=src timeout 150 python -m fastnorm.bench $op --shapes $S --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/bench_$op > $OUT/bench_$op.log 2>&1
  echo "== $op (rc $?)"; grep -E "^\|" $OUT/bench_$op.log | cut -c1-230 | grep -v -- "---" | sed -E 's/ +/ /g'
done
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "two_piece or exact or large_gpu or torch_compile or scalar_rows" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED" $OUT/tests.log | tail -8
