# Session 47, call 4 (one H200): call 3's best small-row RMS forward tiles in the suites' harness (GPU time beside
# Liger; kernels-only figures at these sizes scatter with the flush's write-back): ab/base = HEAD's entries (128: 32
# rows × w4; 256: 8 rows × w2), ab/v1 (128: 8 rows × w2; 256: 8 rows × w4), ab/v2 (128: 2 rows × w4; 256: 16 rows ×
# w8), alternating, two rounds.
python -m pip install -q --no-index --no-deps .whl/*.whl 2>&1 | tail -1
for r in 1 2; do for t in base v1 v2; do
  (cd ab/$t && PYTHONPATH=src timeout 100 python -m fastnorm.bench rmsnorm --shapes 128,256 --dtypes bf16 --no-models \
    --compile none --no-plots --impls fastnorm,liger,copy --ops fwd --out $OUT/${t}_$r > $OUT/${t}_$r.log 2>&1)
  echo "== $t $r"; grep "^| 49152" $OUT/${t}_$r.log
done; done
