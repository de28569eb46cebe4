# Session 52, call 2 (one H200). Call 1: LN forward 16384 read 94.4 on the tree before 601f881 against 92.0 after (its
# 8192 + 8192 pieces reduced jointly); one_round on the joint pieces 94.0; 32768 held 16384 + 16384, one_round, capped
# at 64 registers 93.5 (entry 87.3). Now main reduces pieces wider than 1024 a piece (norm_joint_pieces; JP sets the
# bound in ab/new). This call, two rounds: one_round on separate pieces at 16384 and 32768 (joint: JP), held capped
# one_round rows at 28000 (key 32768's other rows: whole row w32, 66-72 in session 38) and 24576 (16384 + 8192: one
# program an SM at 71 registers lost 87.8 -> 56.7 in call 1), the backward at 16384 with paired sums (PAIR=1) and at
# 14336 (8192 + 8192, the second piece masked) with joint pieces, one_round at 256 and 1024.
# Predictions: separate pieces + one_round at 16384 >= 94.4 (pre) + 1; 32768 separate ~ joint (±1); 28000 ~90 (from
# 66-72); 24576 capped one_round ~ entry ± 2; bwd 16384 PAIR ±1; 256 / 1024 one_round ±0.5 (many programs an SM).
export PYTHONUNBUFFERED=1
source ab/ab_run.sh
HELD="'hold_loaded':True,'block_n2':16384"
ORCAP="'one_round':True,'maxnreg':64"
for r in 1 2; do
  ab_run new layernorm 16384 bf16 fwd entry $r
  ab_run new layernorm 16384 bf16 fwd oneRound $r NT="{('fwd',False,16384):(1,8192,False,8,1,0,{'one_round':True})}"
  ab_run new layernorm 16384 bf16 fwd oneRoundJoint $r JP=8192 \
    NT="{('fwd',False,16384):(1,8192,False,8,1,0,{'one_round':True})}"
  ab_run new layernorm 32768 bf16 fwd entry $r
  ab_run new layernorm 32768 bf16 fwd heldCap $r NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,'maxnreg':64})}"
  ab_run new layernorm 32768 bf16 fwd heldOrCap $r NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,$ORCAP})}"
  ab_run new layernorm 32768 bf16 fwd heldOrCapJoint $r JP=16384 \
    NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,$ORCAP})}"
  ab_run new layernorm 28000 bf16 fwd entry $r
  ab_run new layernorm 28000 bf16 fwd heldOrCap $r NT="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,$ORCAP})}"
  ab_run new layernorm 24576 bf16 fwd entry $r
  ab_run new layernorm 24576 bf16 fwd oneRoundCap $r \
    NT="{('fwd',False,24576):(1,16384,False,16,1,0,{'hold_loaded':True,'least_n2':4096,$ORCAP})}"
  ab_run new layernorm 16384 bf16 bwd entry $r
  ab_run new layernorm 16384 bf16 bwd pair $r PAIR=1
  ab_run new layernorm 14336 bf16 bwd entry $r
  ab_run new layernorm 14336 bf16 bwd joint $r JP=8192
  ab_run new layernorm 256 bf16 fwd entry $r
  ab_run new layernorm 256 bf16 fwd oneRound $r NT="{('fwd',False,256):(4,128,False,1,1,0,{'block_n2':128,'one_round':True})}"
  ab_run new layernorm 1024 bf16 fwd entry $r
  ab_run new layernorm 1024 bf16 fwd oneRound $r NT="{('fwd',False,1024):(2,1024,False,2,1,0,{'one_round':True})}"
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
