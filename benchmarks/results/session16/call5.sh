export PYTHONUNBUFFERED=1
R=benchmarks/scripts
for t in base:ab/base/src new:src; do name=${t%%:*}; tree=${t#*:}
PYTHONPATH=$tree python $R/norm_configs_ab.py --looped --ns 8192,16384,32768,65536 --rms-ns "" > $OUT/ln_tree_${name}_bf16.log 2>&1
PYTHONPATH=$tree python $R/norm_configs_ab.py --looped --dtype float32 --ns 4096,16384,32768,65536 --rms-ns "" > $OUT/ln_tree_${name}_fp32.log 2>&1
done
grep -h "==\|current" $OUT/ln_tree_*.log
export PYTHONPATH=src
BN_VARIANT_CASES="fp32 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);fp32 CL (256, 64, 56, 56);fp32 NCHW (256, 64, 56, 56);fp32 NCHW (8, 256, 128, 128);fp32 CL (8, 256, 128, 128)" timeout 230 python $R/bn_ab.py --graph --ops eval_fwd --rounds 1 --timeout 70 src 'src@BN_STREAM_LARGE=(33554432,1024);BN_TILE={"fwd":2048,"bwd":2048,"sums":4096}' 'src@BN_STREAM_LARGE=(33554432,1024)' src 2>&1 | tee $OUT/bn_eval_onetile2.log | tail -9
