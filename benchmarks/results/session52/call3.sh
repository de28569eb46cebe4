# Session 52, call 3 (one H200): main now holds LN forward rows of the 32768 key (24577-32768) as 16384 + 16384, held
# as loaded, one_round, at most 64 registers, and reduces held two-piece rows jointly (norm_joint_pieces). Call 2
# measured 28000 with the pieces apart (80.5 / 81.5; the whole row before: 70.2 / 70.3). This call, two rounds: 28000
# joint (main) and apart (JH=0), 26000 against the key's entry before (the whole row w32), 32768 again; RMSNorm's
# 65536-key rows (57344: 32768 + 32768 held, joint on main since 601f881, measured apart in session 43: 93.6) joint
# and apart. Predictions: 28000 joint >= apart (32768: joint +6); 26000 ~80 from ~67; RMS 57344 within ±1.
export PYTHONUNBUFFERED=1
source ab/ab_run.sh
for r in 1 2; do
  ab_run new layernorm 28000 bf16 fwd main $r
  ab_run new layernorm 28000 bf16 fwd apart $r JH=0
  ab_run new layernorm 26000 bf16 fwd main $r
  ab_run new layernorm 26000 bf16 fwd before $r NT="{('fwd',False,32768):(1,32768,False,32,1,0)}"
  ab_run new layernorm 32768 bf16 fwd main $r
  ab_run new rmsnorm 57344 bf16 fwd main $r
  ab_run new rmsnorm 57344 bf16 fwd apart $r JH=0
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
# The new forms on the GPU: the tests of one_round, maxnreg and joint pieces, and the full-size rows they serve.
(PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider tests/test_layer_norm.py \
   -k "one_round or register_cap or joint_pieces or equal_pieces or (large_gpu and (26000 or 32768 or 57344))" 2>&1 \
   | tail -4) || echo "TESTS FAILED"
