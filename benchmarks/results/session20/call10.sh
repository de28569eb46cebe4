# Session 20, call 10: the host path of this session against HEAD~3 (ab/base/src: programs with loops, Function.apply)
# on the BatchNorm cells that host time reaches (call 8's suite moved them either way), report timing, host µs.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (128, 2048, 7, 7);bf16 NCHW (32, 512, 28, 28);bf16 NCHW (8, 256, 128, 128)"
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_ab.py --rounds 3 'ab/base/src' 'src' 'torch' > $OUT/host_path_bn_ab.log 2>&1
tail -24 $OUT/host_path_bn_ab.log
