# Session 22, call 3 (one H100): the flat apply kernel with S and C as arguments: (1) bn_ab --graph, compiled in vs
# argument, the cases of call 2; (2) the GPU-only bitwise tests (model sizes, every path incl. the flat apply; calls 1
# and 2 ran out of time at 40/60 of the spatial tests, all passing).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);bf16 NCHW (128, 64, 112, 112);fp32 NCHW (32, 512, 28, 28);bf16 NCHW (16, 256, 75, 75);fp32 NCHW (16, 256, 75, 75);bf16 NCHW (32, 256, 25, 38)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd,eval_fwd,frozen_bwd 'src' 'src@BN_SPATIAL_COMPILED=0' > $OUT/spatial_flat_ab_h100.log 2>&1
tail -34 $OUT/spatial_flat_ab_h100.log
PYTHONPATH=src timeout 360 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -m gpu -k "spatial_size or divisor" -x 2>&1 | tail -3
