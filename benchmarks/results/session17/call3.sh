# Session 17, call 3: call 2 found the column mask folding (not the reciprocal) moved LN (+) and RMS (-). Trees:
# base (HEAD), mask (the folding for LN only), both (mask + the reciprocal as rsqrt(n²)). LN's chunked forward rows
# (current configs and the looped 16384 candidates) and RMS's current looped rows (unchanged PTX expected), 2 passes.
export PYTHONUNBUFFERED=1
R=benchmarks/scripts
for t in base:ab/base/src mask:ab/mask/src both:ab/both/src; do name=${t%%:*}; tree=${t#*:}
export PYTHONPATH=$tree
python $R/norm_configs_ab.py --current --fwd --passes 2 --ns 32768,65536 --rms-ns 8192,32768 > $OUT/c3cur_${name}_bf16.log 2>&1
python $R/norm_configs_ab.py --current --fwd --passes 2 --dtype float32 --ns 2048,65536 --rms-ns 4096 > $OUT/c3cur_${name}_fp32.log 2>&1
python $R/norm_configs_ab.py --looped --looped-grid 2048/8/8/1 --passes 2 --ns 16384 --rms-ns "" > $OUT/c3l16k_${name}_bf16.log 2>&1
python $R/norm_configs_ab.py --looped --looped-grid 2048/16/4,8/1 --passes 2 --dtype float32 --ns 16384 --rms-ns "" > $OUT/c3l16k_${name}_fp32.log 2>&1
done
for f in c3cur c3l16k; do for d in bf16 fp32; do for name in base mask both; do echo "== $f $d $name"; grep "^  [LR]" $OUT/${f}_${name}_$d.log | sed -E 's/ +regs.*//; s/  +/ /g'; done; done; done
