# Session 51, call 4 (one H200): call 3 found Inductor's forward tiles at 32 elements a thread in the smallest CTAs
# (LN 256 and RMS 256: 4 rows, 1 warp; LN and RMS 1024: 1 row, 1 warp) and LN 1024's 2 x 1024 w2 ahead of the entry
# (86.1 / 86.1 against 85.2 / 85.5). The suites' harness as in call 3 (tree ab/nt, GPU time, bf16 forward, two
# alternating rounds): the entries against those one-warp tiles and 1024's 2 x 1024 w2 again.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
run() {  # suite n variant round NT
  (cd ab/nt && NT="$5" PYTHONPATH=src timeout 60 python -m fastnorm.bench $1 --shapes $2 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops fwd --out $OUT/runs/${1}_$3_$4 >/dev/null 2>&1) \
     || echo "FAILED $*"
  mv $OUT/runs/${1}_$3_$4/$1.json $OUT/runs/${1}_$3_$4/$1_$2.json 2>/dev/null
}
for r in 1 2; do
  run layernorm 1024 entry $r "{}"
  run layernorm 1024 twoWtwo $r "{('fwd',False,1024): (2,1024,False,2,1,0)}"
  run layernorm 1024 oneWone $r "{('fwd',False,1024): (1,1024,False,1,1,0)}"
  run layernorm 256 entry $r "{}"
  run layernorm 256 fourWonePieces $r "{('fwd',False,256): (4,128,False,1,1,0,{'block_n2':128})}"
  run layernorm 256 fourWone $r "{('fwd',False,256): (4,256,False,1,1,0)}"
  run rmsnorm 256 entry $r "{}"
  run rmsnorm 256 fourWonePieces $r "{('fwd',True,256): (4,128,False,1,1,0,{'block_n2':128})}"
  run rmsnorm 256 fourWone $r "{('fwd',True,256): (4,256,False,1,1,0)}"
  run rmsnorm 1024 entry $r "{}"
  run rmsnorm 1024 oneWone $r "{('fwd',True,1024): (1,1024,False,1,1,0)}"
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
