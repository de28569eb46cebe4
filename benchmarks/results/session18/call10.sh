# Session 18, call 10 (asked for an H200; whichever came): session 18's entries against the ones they replaced on
# this device (bf16 LN backward 12288/16384, LN/RMS forward 65536 and RMS 40000), and the 32768 forward's whole
# rows against the looped entries (on the H100 the whole rows won; session 16's H200 said the opposite).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
nvidia-smi --query-gpu=name --format=csv,noheader
python $A --configs "NormConfig(1,8192,False,16,1,sms,True,4096);NormConfig(1,16384,False,16,3,sms,True)" --ns 12288,16384 --rms-ns "" --passes 2 > $OUT/c10_bwd.log 2>&1
python $A --fwd --configs "NormConfig(1,8192,True,8,3,4*sms);NormConfig(1,16384,True,16,3,2*sms)" --ns 65536 --rms-ns 65536,40000 --passes 2 > $OUT/c10_fwd64k.log 2>&1
python $A --fwd --configs "NormConfig(1,32768,False,32,1,0);NormConfig(1,32768,False,16,1,0);NormConfig(1,32768,False,32,2,sms)" --ns 32768 --rms-ns 32768 --passes 2 > $OUT/c10_fwd32k.log 2>&1
for f in $OUT/c10_*.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|RMS|skip)" $f | cut -c1-150; done
