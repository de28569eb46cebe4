# Session 52, call 1 (one H200): LayerNorm's forward with the row statistics in one pair reduction (one_round) and
# under a register cap (maxnreg), bf16, the suites' harness (GPU time, one shape a process), two alternating rounds.
# Trees from setup_ab.sh. Offline sm_90 registers (a program an SM: 65536 / (threads × registers)):
#   16384: entry 8192 + 8192 w8 127 (2 an SM), one_round 128 (2);
#   32768: entry = chunks of 4096 × w16, u8 (NORM_TUNED_EXACT, 84.9 in session 38); held 16384 + 16384 w16 82 (1 an
#          SM; session 43: 64-68), capped at 64 16 B spilled (2), one_round 89 (1), one_round capped 24 B spilled (2);
#   24576: entry 16384 + 8192 held w16 64 (2), one_round 71 (1); 4096: entry 4096 w4 72 (6), one_round 61 (8).
# Predictions: one_round +1..+3 where the rows' two exchanges are in series with no other program to cover them
# (16384, 24576), ±0.5 at 4096 (6 programs an SM overlap them); held 32768 capped: toward RMS's held rows (96) if the
# one program an SM is what held it at 64-68, else no gain. ab/pre: LN 16384 before the equal pieces (94.4 -> 92.2
# between reports: this tells whether 601f881 cost it).
export PYTHONUNBUFFERED=1
source ab/ab_run.sh
HELD="'hold_loaded':True,'block_n2':16384"
for r in 1 2; do
  ab_run new layernorm 16384 bf16 fwd entry $r
  ab_run new layernorm 16384 bf16 fwd oneRound $r NT="{('fwd',False,16384):(1,8192,False,8,1,0,{'one_round':True})}"
  ab_run pre layernorm 16384 bf16 fwd pre $r
  ab_run new layernorm 32768 bf16 fwd entry $r
  ab_run new layernorm 32768 bf16 fwd held $r NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD})}"
  ab_run new layernorm 32768 bf16 fwd heldCap $r NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,'maxnreg':64})}"
  ab_run new layernorm 32768 bf16 fwd heldOrCap $r \
    NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,'maxnreg':64,'one_round':True})}"
  ab_run new layernorm 32768 bf16 fwd heldOr $r NTX="{('fwd',False,32768):(1,16384,False,16,1,0,{$HELD,'one_round':True})}"
  ab_run new layernorm 24576 bf16 fwd entry $r
  ab_run new layernorm 24576 bf16 fwd oneRound $r \
    NT="{('fwd',False,24576):(1,16384,False,16,1,0,{'hold_loaded':True,'least_n2':4096,'one_round':True})}"
  ab_run new layernorm 4096 bf16 fwd entry $r
  ab_run new layernorm 4096 bf16 fwd oneRound $r NT="{('fwd',False,4096):(1,4096,False,4,1,0,{'one_round':True})}"
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
