# Session 22, call 1 (one H100): the spatial size as a kernel argument (session 21, never timed on a GPU):
# bitwise against compiled-in on CUDA (pytest, model sizes included), then bn_ab --graph (GPU time of each op
# captured in a CUDA graph) with every NCHW size compiled in against BN_SPATIAL_COMPILED=0 (every size past S = 64
# an argument).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "spatial_size" 2>&1 | tail -3
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (32, 512, 28, 28);bf16 NCHW (128, 64, 112, 112);fp32 NCHW (256, 256, 28, 28);fp32 NCHW (32, 512, 28, 28);bf16 NCHW (16, 256, 75, 75);fp32 NCHW (16, 256, 75, 75);bf16 NCHW (32, 256, 25, 38)"
PYTHONPATH=src timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd,eval_fwd,frozen_bwd 'src' 'src@BN_SPATIAL_COMPILED=0' > $OUT/spatial_ab_h100.log 2>&1
tail -16 $OUT/spatial_ab_h100.log
