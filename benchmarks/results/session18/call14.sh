# Session 18, call 14 (H100): call 13 found bf16 LN backward rows just past 8192 slow either way (8200: 52 / 45%,
# 9000: 46 / 44, spilling 16-28 B; 10000 and 12000: 95 / 92): variants for 8193..~9216 — the two pieces holding
# their loads, the 16384 tile holding them (padded), the weight held instead of re-read.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
for n in 8200 9000 9300; do
  b2=$(python -c "print(1 << max(0, $n - 8192 - 1).bit_length())")
  python $A --configs "NormConfig(1,8192,False,16,3,sms,True,$b2,hold_loaded=True);NormConfig(1,8192,False,16,1,sms,True,$b2,hold_loaded=True);NormConfig(1,16384,False,16,3,sms,True,hold_loaded=True);NormConfig(1,8192,False,16,3,sms,False,$b2);NormConfig(1,8192,False,16,3,sms,False,$b2,hold_loaded=True);NormConfig(1,8192,False,16,1,sms,True,$b2)" --ns $n --rms-ns "" --passes 2 > $OUT/c14_bwd_$n.log 2>&1
done
for f in $OUT/c14_*.log; do grep -E "^  (LN|RMS|skip)" $f | cut -c1-150; done
