# Session 19, call 4 (H100 expected): the forwards that trail a peer on the H100 (session 18's suites): bf16 RMS
# 32768 (95.7 vs Liger 101.2), 8192 (97.7 vs 100.4), fp32 LN 16384 (93.0 vs torch.compile 101.9) — the current
# entries against whole rows and other chunkings, at rows across each entry's key range (kernels only, 2 passes).
export PYTHONUNBUFFERED=1
AB="python benchmarks/scripts/norm_configs_ab.py --fwd --passes 2"
PYTHONPATH=src $AB --ns 25000,32768 --rms-ns 25000,28000,32768 \
  --configs "NormConfig(1,32768,False,32,1,0);NormConfig(1,32768,False,32,1,0,hold_loaded=True);NormConfig(1,32768,False,16,1,0,hold_loaded=True);NormConfig(1,8192,True,16,1,0,evict=True,unroll=4)" > $OUT/c4_bf16_32k.log 2>&1
PYTHONPATH=src $AB --ns "" --rms-ns 6500,8192 \
  --configs "NormConfig(1,8192,False,8,1,0);NormConfig(1,8192,False,16,1,0);NormConfig(2,8192,False,16,1,0);NormConfig(1,4096,True,8,1,0,evict=True,unroll=2);NormConfig(1,8192,False,8,2,4*sms)" > $OUT/c4_bf16_8k.log 2>&1
PYTHONPATH=src $AB --dtype float32 --ns 13000,16384 --rms-ns "" \
  --configs "NormConfig(1,16384,False,16,1,0);NormConfig(1,16384,False,32,1,0);NormConfig(1,4096,True,16,1,0,evict=True,unroll=4);NormConfig(1,2048,True,8,1,0,evict=True,unroll=8);NormConfig(1,4096,True,8,1,0,evict=True,unroll=4)" > $OUT/c4_fp32_16k.log 2>&1
for f in $OUT/c4_*.log; do echo "== $f"; grep -E "^device|^  (LN|RMS|skip)|Error|error" $f | cut -c1-160; done
