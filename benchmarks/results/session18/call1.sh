# Session 18, call 1: the bf16 LN backward at 12288 and 16384 (kernels only, two passes).
# 16384 spills (64 B at 3 stages): prototype RECOMPUTE (env FN_RECOMPUTE=1: x, dy, w held as loaded across the row
# reduction, x̂ and g formed again after it; the loaded values passed through a runtime-zero add the compiler cannot
# fold, so it cannot merge the two); FN_RW=1 re-reads the weight instead. 12288: two pieces with 2 or 3 stages
# (the pair-read row shift K_PAIR comes with prefetch).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
C16="NormConfig(1,16384,False,16,1,sms,True);NormConfig(1,16384,False,16,2,sms,True);NormConfig(1,16384,False,16,3,sms,True)"
C12="NormConfig(1,8192,False,16,1,sms,True,4096);NormConfig(1,8192,False,16,2,sms,True,4096);NormConfig(1,8192,False,16,3,sms,True,4096)"
for e in "FN_RECOMPUTE=0" "FN_RECOMPUTE=1" "FN_RECOMPUTE=1 FN_RW=1"; do
  tag=$(echo $e | tr ' =' '__')
  env $e python benchmarks/scripts/norm_configs_ab.py --configs "$C16" --ns 16384 --rms-ns "" --passes 2 > $OUT/c1_16k_$tag.log 2>&1
  env $e python benchmarks/scripts/norm_configs_ab.py --configs "$C12" --ns 12288 --rms-ns "" --passes 2 > $OUT/c1_12k_$tag.log 2>&1
done
for f in $OUT/c1_*.log; do echo "== $(basename $f)"; grep -E "^  (LN|skip)" $f; done
