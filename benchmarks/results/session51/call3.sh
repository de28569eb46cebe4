# Session 51, call 3 (one H200): the small-N forwards where a peer leads in GPU time (report of calls 1-2: LN 256 62
# vs compile 65, LN 1024 85 vs 86; RMS 128 49 vs Liger 52, 256 65 vs compile 67, 1024 87 vs 88).
# (a) inductor_peek.py on those cases: Inductor's kernel source and autotuned config, timed beside fastnorm and Liger
#     (graph replays, % of copy on the fewest bytes).
# (b) the suites' harness (GPU time, bf16 forward, two alternating rounds, one shape a process) on tree ab/nt = main
#     with the NT knob (config part of session49/ab_mr_knobs.patch): the entries against the peers' tile shapes and
#     persistent prefetched grids. NT tuple: (rows, block_n, chunked, warps, stages, programs an SM [0: one a tile]).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
python -m pip install -q --no-index --no-deps .whl/*.whl
mkdir -p $OUT/peek
timeout 240 python benchmarks/scripts/inductor_peek.py --out $OUT/peek ln_bf16_256 ln_bf16_1024 rms_bf16_128 \
   rms_bf16_256 rms_bf16_1024 > $OUT/peek.log 2>&1
echo "== peek rc $? (${SECONDS}s)"; grep -A8 "^case" $OUT/peek.log; grep -E "configs|warps=" $OUT/peek.log | head -40
run() {  # suite n variant round NT
  (cd ab/nt && NT="$5" PYTHONPATH=src timeout 60 python -m fastnorm.bench $1 --shapes $2 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops fwd --out $OUT/runs/${1}_$3_$4 >/dev/null 2>&1) \
     || echo "FAILED $*"
  mv $OUT/runs/${1}_$3_$4/$1.json $OUT/runs/${1}_$3_$4/$1_$2.json 2>/dev/null
}
for r in 1 2; do
  run layernorm 1024 entry $r "{}"
  run layernorm 1024 oneWfour $r "{('fwd',False,1024): (1,1024,False,4,1,0)}"
  run layernorm 1024 twoWtwo $r "{('fwd',False,1024): (2,1024,False,2,1,0)}"
  run layernorm 1024 eightWeight $r "{('fwd',False,1024): (8,1024,False,8,1,0)}"
  run layernorm 1024 persist $r "{('fwd',False,1024): (4,1024,False,4,2,4)}"
  run rmsnorm 1024 entry $r "{}"
  run rmsnorm 1024 oneWfour $r "{('fwd',True,1024): (1,1024,False,4,1,0)}"
  run rmsnorm 1024 oneWtwo $r "{('fwd',True,1024): (1,1024,False,2,1,0)}"
  run rmsnorm 1024 fourWfour $r "{('fwd',True,1024): (4,1024,False,4,1,0)}"
  run rmsnorm 1024 persist $r "{('fwd',True,1024): (2,1024,False,2,2,8)}"
  run rmsnorm 256 entry $r "{}"
  run rmsnorm 256 sixteenWfour $r "{('fwd',True,256): (16,256,False,4,1,0)}"
  run rmsnorm 256 persist $r "{('fwd',True,256): (16,128,False,4,2,8,{'block_n2':128})}"
  run layernorm 256 entry $r "{}"
  run layernorm 256 persist $r "{('fwd',False,256): (8,128,False,2,2,16,{'block_n2':128})}"
  run rmsnorm 128 entry $r "{}"
  run rmsnorm 128 persist $r "{('fwd',True,128): (8,128,False,2,2,16)}"
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
