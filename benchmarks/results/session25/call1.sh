# Session 25, call 1 (one GPU): the single-read forward with SPLIT no longer specialized (its SPLIT = 1, CB = 1
# specialization compiled for 41 s offline, 16388 shared-memory stores of a broadcast converted between layouts).
# (1) the ResNet-50 stack's first training step with an empty Triton cache, HEAD (ab/base/src) and the change (src);
# (2) bn_ab --graph, training forward, the stack layers that take one program per channel block and some that split;
# (3) the resident CUDA tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
date +%T
timeout 300 python benchmarks/scripts/first_call.py --configs nchw:fp32,nchw:bf16 ab/base/src src 2>&1 | tee $OUT/first_call.log
date +%T
export BN_VARIANT_CASES="NCHW (8, 128, 56, 56);NCHW (8, 128, 28, 28);NCHW (8, 256, 28, 28);NCHW (8, 2048, 7, 7);bf16 NCHW (16, 1024, 14, 14);bf16 NCHW (8, 64, 56, 56);bf16 NCHW (32, 2048, 7, 7)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd 'ab/base/src' 'src' > $OUT/resident_ab.log 2>&1
tail -14 $OUT/resident_ab.log
date +%T
PYTHONPATH=src timeout 60 python -m pytest -q -p no:cacheprovider -n 8 --timeout 55 tests/test_batch_norm.py -k "resident" -rf 2>&1 | tail -3
