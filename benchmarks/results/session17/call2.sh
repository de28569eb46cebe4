# Session 17, call 2: which half of call 1's change moved what. Trees: base (HEAD), rcp (the reciprocal as rsqrt(n²)
# alone), new (rcp + the chunk column mask folded when the chunks tile N). Current configs of the chunked forward rows
# (LN and RMS), and the two looped LN candidates at 16384, two interleaved passes each.
export PYTHONUNBUFFERED=1
R=benchmarks/scripts
for t in base:ab/base/src rcp:ab/rcp/src new:src; do name=${t%%:*}; tree=${t#*:}
export PYTHONPATH=$tree
python $R/norm_configs_ab.py --current --fwd --passes 2 --ns 32768,65536 --rms-ns 4096,8192,32768,65536 > $OUT/cur_${name}_bf16.log 2>&1
python $R/norm_configs_ab.py --current --fwd --passes 2 --dtype float32 --ns 2048,65536 --rms-ns 2048,4096,8192,16384,65536 > $OUT/cur_${name}_fp32.log 2>&1
python $R/norm_configs_ab.py --looped --looped-grid 2048/8/8/1 --passes 2 --ns 16384 --rms-ns "" > $OUT/l16k_${name}_bf16.log 2>&1
python $R/norm_configs_ab.py --looped --looped-grid 2048/16/4,8/1 --passes 2 --dtype float32 --ns 16384 --rms-ns "" > $OUT/l16k_${name}_fp32.log 2>&1
done
for f in cur l16k; do for d in bf16 fp32; do for name in base rcp new; do echo "== $f $d $name"; grep "^  [LR]" $OUT/${f}_${name}_$d.log | sed -E 's/ +regs.*//; s/  +/ /g'; done; done; done
