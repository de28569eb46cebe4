# Session 50, call 4 (one H200): where the scratch column sums lost or were not measured (call 3: RMS bf16 128 43.8 ->
# 40.3). The suites' harness, GPU time, backward, two alternating rounds, one shape a process; trees ab/base = main
# (b036045), ab/new = the branch (efbe094), both with the NT knob (session49/ab_mr_knobs.patch, config part).
# RMS bf16 128: the entry 64 x 128 w16 1 stage on both trees; on the branch also 32 x 128 w16 1 stage (t32), 32 x 128
# w16 3 stages (t32s), 64 x 128 w16 3 stages (t64s). float32 256 (entry 16 x 256 w8, 1 stage, 2/SM), LN and RMS.
export PYTHONUNBUFFERED=1
run() {  # tree suite n dtype variant round NT
  (cd ab/$1 && NT="$7" PYTHONPATH=src timeout 60 python -m fastnorm.bench $2 --shapes $3 --dtypes $4 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/runs/${2}_$5$4_$6 >/dev/null 2>&1) \
     || echo "FAILED $*"
  mv $OUT/runs/${2}_$5$4_$6/$2.json $OUT/runs/${2}_$5$4_$6/$2_$3.json 2>/dev/null
}
for r in 1 2; do
  run base rmsnorm 128 bf16 base $r "{}"
  run new rmsnorm 128 bf16 new $r "{}"
  run new rmsnorm 128 bf16 tthirtytwo $r "{('bwd',True,128): (32,128,False,16,1,1)}"
  run new rmsnorm 128 bf16 tthirtytwos $r "{('bwd',True,128): (32,128,False,16,3,1)}"
  run new rmsnorm 128 bf16 tsixtyfours $r "{('bwd',True,128): (64,128,False,16,3,1)}"
  for s in layernorm rmsnorm; do
    run base $s 256 fp32 base $r "{}"
    run new $s 256 fp32 new $r "{}"
  done
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
