# Session 49, call 3 (one H200): the whole-row forward at 1024 (and LN 1536) on a persistent grid whose loop prefetches
# the next row tiles (cp.async, 3 stages) against the entries (one program a tile, no prefetch). Tree ab/mr as in call 2
# (NT replaces entries). The suites' harness, GPU time, bf16 forward, two alternating rounds, one shape a process.
# p1: 4 x 1024 w4, 4 an SM; p2: 2 x 1024 w2, 8 an SM; p3: 4 x 1024 w4, 8 an SM; p4: 8 x 1024 w8, 2 an SM;
# q1 (LN 1536): 2 x (1024 + 512) w2, 8 an SM.
export PYTHONUNBUFFERED=1
run() {  # suite n variant round NT
  (cd ab/mr && NT="$5" PYTHONPATH=src timeout 60 python -m fastnorm.bench $1 --shapes $2 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops fwd --out $OUT/runs/${1}_$3_$4 >/dev/null 2>&1) \
     || echo "FAILED $1 $2 $3 $4"
  mv $OUT/runs/${1}_$3_$4/$1.json $OUT/runs/${1}_$3_$4/$1_$2.json 2>/dev/null
}
for r in 1 2; do
  for s in layernorm:False rmsnorm:True; do IFS=: read suite rms <<< "$s"
    run $suite 1024 base $r "{}"
    run $suite 1024 p1 $r "{('fwd',$rms,1024): (4,1024,False,4,3,4)}"
    run $suite 1024 p2 $r "{('fwd',$rms,1024): (2,1024,False,2,3,8)}"
    run $suite 1024 p3 $r "{('fwd',$rms,1024): (4,1024,False,4,3,8)}"
    run $suite 1024 p4 $r "{('fwd',$rms,1024): (8,1024,False,8,3,2)}"
  done
  run layernorm 1536 base $r "{}"
  run layernorm 1536 q1 $r "{('fwd',False,1536): (2,1024,False,2,3,8,{'least_n2':512})}"
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
