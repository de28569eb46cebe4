# Session 48, call 2 (one H200): the suites' harness (GPU time, two alternating rounds), trees under ab/ that differ from
# main (ab/base) in table entries only. Backward at 256 / 512 (LN and RMS): one 32-warp program an SM (64 registers a
# thread, 32 warps an SM against 16 now), 3 stages (w32s3) or 4 (w32s4). Forward at 1024 (LN (4 × w4) and RMS (2 × w2)
# now): f2 LN 2 × w2, RMS 4 × w4; f8 both 8 × w8; f48 LN 4 × w8, RMS 2 × w4.
export PYTHONUNBUFFERED=1
run() {  # tree suite shapes ops tag
  (cd ab/$1 && PYTHONPATH=src timeout 100 python -m fastnorm.bench $2 --shapes $3 --dtypes bf16 --no-models \
     --compile none --no-plots --impls fastnorm,copy --ops $4 --out $OUT/runs/${2}_$1_$5 >/dev/null 2>&1) || echo "FAILED $1 $2 $5"
}
for r in 1 2; do
  for t in base w32s3 w32s4; do run $t layernorm 256,512 bwd $r; run $t rmsnorm 256,512 bwd $r; done
  echo "round $r bwd done (${SECONDS}s)"
  for t in base f2 f8 f48; do run $t layernorm 1024 fwd $r; run $t rmsnorm 1024 fwd $r; done
  echo "round $r fwd done (${SECONDS}s)"
done
python benchmarks/results/session48/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
