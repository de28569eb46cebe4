# Session 18, call 5 (prototype in the tree: the forward's whole rows with hold_loaded, no residual: x held as
# loaded across the statistics' reductions, x - mean formed again after them): bf16 LN/RMS forward 32768 and
# 65536, whole rows of 16/32 warps with and without it, against the current (looped / chunked) entries.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
V=""
for h in False True; do
V="$V;NormConfig(1,32768,False,32,1,0,hold_loaded=$h);NormConfig(1,32768,False,16,1,0,hold_loaded=$h);NormConfig(1,32768,False,32,2,sms,hold_loaded=$h)"
done
python $A --fwd --configs "$V" --ns 32768 --rms-ns 32768 --passes 2 > $OUT/c5_fwd32k.log 2>&1
V="NormConfig(1,65536,False,32,1,0);NormConfig(1,65536,False,32,1,0,hold_loaded=True);NormConfig(1,65536,False,32,1,sms,hold_loaded=True)"
python $A --fwd --configs "$V" --ns 65536 --rms-ns 65536 --passes 2 > $OUT/c5_fwd64k.log 2>&1
for f in $OUT/c5_*.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|RMS|skip)" $f | cut -c1-150; done
