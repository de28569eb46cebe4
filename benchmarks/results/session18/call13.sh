# Session 18, call 13 (H100): rows that reach session 18's entries through their keys' ranges, against the entries
# they replaced: bf16 LN backward 8200 / 9000 / 12000 (key 12288: 8192 + a second piece, 3 stages) and LN/RMS
# forward 50000 (key 65536: one 65536-wide row holding x, 76% filled).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
for n in 8200 9000 12000; do
  b2=$(python -c "print(1 << max(0, $n - 8192 - 1).bit_length())")
  python $A --configs "NormConfig(1,8192,False,16,1,sms,True,$b2)" --ns $n --rms-ns "" --passes 2 > $OUT/c13_bwd_$n.log 2>&1
done
python $A --fwd --configs "NormConfig(1,8192,True,8,3,4*sms);NormConfig(1,16384,True,16,3,2*sms);NormConfig(1,4096,True,16,1,0,evict=True,unroll=8)" --ns 50000 --rms-ns 50000 --passes 2 > $OUT/c13_fwd50k.log 2>&1
for f in $OUT/c13_*.log; do grep -E "^  (LN|RMS|skip)" $f | cut -c1-150; done
