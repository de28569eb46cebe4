# Session 22, call 8 (one H100): after the final read's mend (one _divided for tile and flat kernels; the flat kernel
# takes S = -p, S_RT = S/p as the tile kernels do): bn_ab --graph, compiled in vs argument, the flat apply's ops.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (16, 256, 75, 75);fp32 NCHW (16, 256, 75, 75)"
PYTHONPATH=src timeout 150 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,eval_fwd 'src' 'src@BN_SPATIAL_COMPILED=0' > $OUT/spatial_divided_ab_h100.log 2>&1
tail -9 $OUT/spatial_divided_ab_h100.log
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 15 -m gpu -k "spatial_size and flat" tests/test_batch_norm.py 2>&1 | tail -1
