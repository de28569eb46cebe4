# Session 50, call 1 (one H200): branch equal-pieces (rows held as two pieces of one width; each row sum reduced
# once). (a) the branch's CUDA tests (equal pieces, widening, held loads); (b) the suites' harness (GPU time, bf16,
# two alternating rounds, one shape a process): ab/base = main with the NT knob (session49/ab_mr_knobs.patch), ab/ep
# = the branch with it. Variants (NT entries): bwd 256 ep = 32 x (128+128) w16 3 stages 1/SM; ep8 = 16 x (128+128)
# w8, 2/SM; bwd 128 ep = 64 x (64+64) w16; fwd 256 ep = 8 x (128+128) w2; ep16 = 16 x (128+128) w4; fwd 128 ep =
# the entry's rows x (64+64) w2.
export PYTHONUNBUFFERED=1
(cd ab/ep && PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py \
   -k "equal_pieces or widen or hold_loaded or prefetched_backward_small" > $OUT/tests.log 2>&1; \
   echo "== tests (rc $?, ${SECONDS}s)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8)
run() {  # tree suite n op variant round NT
  (cd ab/$1 && NT="$7" PYTHONPATH=src timeout 60 python -m fastnorm.bench $2 --shapes $3 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops $4 --out $OUT/runs/${2}_$5$4_$6 >/dev/null 2>&1) \
     || echo "FAILED $*"
  mv $OUT/runs/${2}_$5$4_$6/$2.json $OUT/runs/${2}_$5$4_$6/$2_$3.json 2>/dev/null
}
for r in 1 2; do
  for s in layernorm:False:16 rmsnorm:True:8; do IFS=: read suite rms m128 <<< "$s"
    run base $suite 256 bwd base $r "{}"
    run ep $suite 256 bwd ep $r "{('bwd',$rms,256): (32,128,False,16,3,1,{'block_n2':128})}"
    run ep $suite 256 bwd epeight $r "{('bwd',$rms,256): (16,128,False,8,3,2,{'block_n2':128})}"
    run base $suite 128 bwd base $r "{}"
    run ep $suite 128 bwd ep $r "{('bwd',$rms,128): (64,64,False,16,1,1,{'block_n2':64})}"
    run base $suite 256 fwd base $r "{}"
    run ep $suite 256 fwd ep $r "{('fwd',$rms,256): (8,128,False,2,1,0,{'block_n2':128})}"
    run ep $suite 256 fwd epsixteen $r "{('fwd',$rms,256): (16,128,False,4,1,0,{'block_n2':128})}"
    run base $suite 128 fwd base $r "{}"
    run ep $suite 128 fwd ep $r "{('fwd',$rms,128): ($m128,64,False,2,1,0,{'block_n2':64})}"
  done
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
