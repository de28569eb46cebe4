# session 43, call 9: LN backward 256 / 512 with call 8's best kernels-only configs (ab/new: 32 × 256 w16, 1 an SM,
# 3 stages; 4 × 512 w4, 4 an SM, 3 stages) against main (ab/base), in the suites' harness (GPU time), alternating
for r in 1 2; do for t in base new; do
  (cd ab/$t && PYTHONPATH=src timeout 100 python -m fastnorm.bench layernorm --shapes 256,512,768 --dtypes bf16 --no-models \
    --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/${t}_$r > $OUT/${t}_$r.log 2>&1)
  echo "== $t $r"; grep "^| 49152" $OUT/${t}_$r.log
done; done
