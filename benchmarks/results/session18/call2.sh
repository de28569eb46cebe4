# Session 18, call 2: call 1's baselines (FN_RECOMPUTE=0 failed: the launcher needs every constexpr) and the weight
# re-read (FN_RW) at 2 stages; same configs, same H100 if still held.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
C16="NormConfig(1,16384,False,16,1,sms,True);NormConfig(1,16384,False,16,2,sms,True);NormConfig(1,16384,False,16,3,sms,True)"
C12="NormConfig(1,8192,False,16,1,sms,True,4096);NormConfig(1,8192,False,16,2,sms,True,4096);NormConfig(1,8192,False,16,3,sms,True,4096)"
for e in "FN_RECOMPUTE=0" "FN_RECOMPUTE=1" "FN_RECOMPUTE=1 FN_RW=1"; do
  tag=$(echo $e | tr ' =' '__')
  env $e python benchmarks/scripts/norm_configs_ab.py --configs "$C16" --ns 16384 --rms-ns "" --passes 2 > $OUT/c2_16k_$tag.log 2>&1
  env $e python benchmarks/scripts/norm_configs_ab.py --configs "$C12" --ns 12288 --rms-ns "" --passes 2 > $OUT/c2_12k_$tag.log 2>&1
done
for f in $OUT/c2_*.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|skip)" $f | cut -c1-150; done
