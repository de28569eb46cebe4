# Session 47, call 5 (one H200): more RMS forward tiles at N = 128 in the suites' harness (GPU time beside Liger),
# against call 4's better one (ab/v1: 8 rows × w2): ab/v3 16 rows × w4, ab/v4 4 rows × w1, ab/v5 8 rows × w4 (all 16 or
# 8 elements a thread, one tile a program), alternating, two rounds.
python -m pip install -q --no-index --no-deps .whl/*.whl 2>&1 | tail -1
for r in 1 2; do for t in v1 v3 v4 v5; do
  (cd ab/$t && PYTHONPATH=src timeout 100 python -m fastnorm.bench rmsnorm --shapes 128 --dtypes bf16 --no-models \
    --compile none --no-plots --impls fastnorm,liger,copy --ops fwd --out $OUT/${t}_$r > $OUT/${t}_$r.log 2>&1)
  echo "== $t $r"; grep "^| 49152" $OUT/${t}_$r.log
done; done
