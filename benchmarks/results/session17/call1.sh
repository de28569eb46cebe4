# Session 17, call 1: (a) the LN forward's chunked rows with the reciprocal as rsqrt(n²) and the column mask folded
# when the chunks tile N (tree "new" = src) against HEAD (tree "base" = ab/base/src): the current configs and the looped
# rows (chunks 2048/4096 × 8/16 warps × unroll 2/4/8, hints on); RMS and LN 65536 current configs only (their PTX
# changed by the mask). (b) BatchNorm fp32 NCHW one-tile apply items without the cp.async prefetch (stages 1 or 2).
export PYTHONUNBUFFERED=1
R=benchmarks/scripts
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for t in base:ab/base/src new:src; do name=${t%%:*}; tree=${t#*:}
for dt in bfloat16 float32; do
PYTHONPATH=$tree python $R/norm_configs_ab.py --looped --looped-grid 2048,4096/8,16/2,4,8/1 --dtype $dt --ns 4096,8192,16384,32768 --rms-ns "" > $OUT/looped_${name}_$dt.log 2>&1
PYTHONPATH=$tree python $R/norm_configs_ab.py --current --fwd --dtype $dt --ns 65536 --rms-ns 4096,8192,16384,32768,65536 > $OUT/current_${name}_$dt.log 2>&1
done; done
grep -h "== summary\|current" $OUT/looped_*.log $OUT/current_*.log | grep -v "^  "
export PYTHONPATH=src
S='"stats":3,"apply_row32":2,"bwd":3,"dx":3'
BN_VARIANT_CASES="fp32 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);fp32 NCHW (256, 64, 56, 56);fp32 NCHW (8, 256, 128, 128)" timeout 200 python $R/bn_ab.py --graph --ops eval_fwd,train_fwd --rounds 1 --timeout 70 src "src@BN_LOOP_STAGES={$S,\"apply\":1}" "src@BN_LOOP_STAGES={$S,\"apply\":2}" src 2>&1 | tee $OUT/bn_onetile_stages.log | tail -12
