# Session 25, call 3 (one GPU): the partial merges as [MS, CB] tiles (the single-read forward no longer converts its
# x tile and y between layouts; the CB = 1, SPLIT = 1 specialization compiles in 0.5 s offline), SPLIT specialized
# as before. (1) the ResNet-50 stack's first step, empty cache; (2) bn_ab --graph, training forward, HEAD
# (ab/base/src) against the change on the single-read cases whose HEAD specializations compile quickly; (3) the
# change against the two-launch forward and torch where HEAD's compile takes ~107 s; (4) CUDA tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python benchmarks/scripts/first_call.py --configs nchw:fp32,channels_last:bf16 src 2>&1 | tee $OUT/first_call.log
export BN_VARIANT_CASES="bf16 CL (8, 128, 56, 56);bf16 CL (32, 2048, 7, 7);bf16 CL (16, 1024, 14, 14);bf16 CL (8, 64, 56, 56);fp32 CL (32, 2048, 7, 7);bf16 NCHW (32, 2048, 7, 7);bf16 NCHW (16, 1024, 14, 14);bf16 NCHW (8, 64, 56, 56);NCHW (8, 256, 28, 28);NCHW (8, 2048, 7, 7)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd 'ab/base/src' 'src' > $OUT/merge_ab.log 2>&1
tail -13 $OUT/merge_ab.log
export BN_VARIANT_CASES="NCHW (8, 128, 56, 56);NCHW (8, 128, 28, 28)"
PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd 'src@BN_RESIDENT=False' 'src' 'torch' > $OUT/whole_channel_ab.log 2>&1
tail -6 $OUT/whole_channel_ab.log
PYTHONPATH=src timeout 110 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 tests/test_batch_norm.py -k "resident or train or sync" -rf 2>&1 | tail -3
