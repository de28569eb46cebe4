# Session 52, call 5 (one H200, the session's last 270 device-seconds): LayerNorm's forward past 32768, where one
# 32-warp program an SM leaves a row's two exchanges in series uncovered; RMSNorm's held rows there read 97-98 (call
# 3: 57344 98.3). Offline sm_90: LN 65536 as 32768 + 32768 held 64 registers, with one_round 62; 49152 as 32768 +
# 16384 held, one_round 64 (no spills). One round, then the first pairs again while time is left. Prediction:
# one_round takes LN toward RMS's 97 at 49152-65536 (entries: 65536 83.6, 49152 79, 57344 67-69).
export PYTHONUNBUFFERED=1
source ab/ab_run.sh
AB_TIMEOUT=40
H2="'hold_loaded':True,'block_n2':32768"
for r in 1 2; do
  ab_run new layernorm 65536 bf16 fwd entry $r
  ab_run new layernorm 65536 bf16 fwd heldOr $r NTX="{('fwd',False,65536):(1,32768,False,32,1,0,{$H2,'one_round':True})}"
  ab_run new layernorm 49152 bf16 fwd entry $r
  ab_run new layernorm 49152 bf16 fwd heldOr $r \
    NTX="{('fwd',False,49152):(1,32768,False,32,1,0,{'hold_loaded':True,'block_n2':16384,'one_round':True})}"
  [ $r = 2 ] && break
  ab_run new layernorm 65536 bf16 fwd held $r NTX="{('fwd',False,65536):(1,32768,False,32,1,0,{$H2})}"
  ab_run new layernorm 57344 bf16 fwd entry $r
  ab_run new layernorm 57344 bf16 fwd heldOr $r NT="{('fwd',False,65536):(1,32768,False,32,1,0,{$H2,'one_round':True})}"
  echo "round $r done (${SECONDS}s)"
  [ $SECONDS -gt 100 ] && break
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
