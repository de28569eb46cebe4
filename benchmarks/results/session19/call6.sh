# Session 19, call 6 (H200, warm from call 5): the GPU-bound misses of call 5's H200 suites — bf16 LN backward 16384
# (70%), LN forward 32768 (84) and 65536 (75), RMS forward 65536 (87) — current entries against alternatives.
export PYTHONUNBUFFERED=1
AB="python benchmarks/scripts/norm_configs_ab.py --passes 2"
PYTHONPATH=src $AB --ns 16384 --rms-ns "" --configs "NormConfig(1,16384,False,16,3,sms,True);NormConfig(1,16384,False,16,2,sms,True,hold_loaded=True);NormConfig(1,16384,False,32,1,sms,True,hold_loaded=True);NormConfig(1,16384,False,16,1,2*sms,True,hold_loaded=True);NormConfig(1,8192,False,16,1,sms,False,split=True,early_loads=True)" > $OUT/c6_bwd16k.log 2>&1
PYTHONPATH=src $AB --fwd --ns 32768 --rms-ns "" --configs "NormConfig(1,32768,False,32,1,0);NormConfig(1,32768,False,32,1,0,hold_loaded=True);NormConfig(1,8192,True,16,1,0,evict=True,unroll=4);NormConfig(1,2048,True,16,1,0,evict=True,unroll=8)" > $OUT/c6_fwd32k.log 2>&1
PYTHONPATH=src $AB --fwd --ns 65536 --rms-ns 65536 --configs "NormConfig(1,4096,True,16,1,0,evict=True,unroll=8);NormConfig(1,8192,True,16,1,0,evict=True,unroll=8);NormConfig(1,16384,True,32,1,0,evict=True,unroll=4);NormConfig(1,65536,False,32,1,0)" > $OUT/c6_fwd64k.log 2>&1
for f in $OUT/c6_*.log; do echo "== $f"; grep -E "^device|^  (LN|RMS|skip)|Error|error" $f | cut -c1-150; done
