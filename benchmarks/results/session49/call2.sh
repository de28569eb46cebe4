# Session 49, call 2 (one H200): more resident warps for the small-row backwards through a register cap (maxnreg).
# Tree ab/mr = branch bwd-int32-rows + two knobs read from the environment: MR (the backward's maxnreg) and NT (entries
# replacing NORM_TUNED's). The suites' harness, GPU time, bf16 backward, two alternating rounds; one shape a process.
# base: the branch's entries. a: 32 x 256 w16 at 64 registers, 2 programs an SM (32 warps; LN spills 6 in its loop,
# RMS none); b: 16 x 256 w16 at 64, 2 an SM (no spills); c (512): 4 x 512 w4 at 96 registers, 5 an SM (was 4; LN no
# spills, RMS 10); d (1024): no cap, LN 5 an SM (96 registers), RMS 6 (80).
export PYTHONUNBUFFERED=1
run() {  # suite n variant round MR NT
  (cd ab/mr && MR=$5 NT="$6" PYTHONPATH=src timeout 60 python -m fastnorm.bench $1 --shapes $2 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/runs/${1}_$3_$4 >/dev/null 2>&1) \
     || echo "FAILED $1 $2 $3 $4"
  mv $OUT/runs/${1}_$3_$4/$1.json $OUT/runs/${1}_$3_$4/$1_$2.json 2>/dev/null
}
for r in 1 2; do
  for s in layernorm:False rmsnorm:True; do IFS=: read suite rms <<< "$s"
    run $suite 256 base $r 0 "{}"
    run $suite 256 a $r 64 "{('bwd',$rms,256): (32,256,False,16,3,2)}"
    run $suite 256 b $r 64 "{('bwd',$rms,256): (16,256,False,16,3,2)}"
    run $suite 512 base $r 0 "{}"
    run $suite 512 c $r 96 "{('bwd',$rms,512): (4,512,False,4,3,5)}"
    run $suite 1024 base $r 0 "{}"
    [ $rms = True ] && d="(2,1024,False,4,3,6)" || d="(2,1024,False,4,3,5)"
    run $suite 1024 d $r 0 "{('bwd',$rms,1024): $d}"
  done
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
