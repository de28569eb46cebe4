# Session 25, call 2 (one GPU): call 1's A/B timed out compiling HEAD's SPLIT = 1 specializations (~107 s each on
# this host). The new single-read forward against the two-launch forward (BN_RESIDENT=False) and torch, bn_ab --graph.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="NCHW (8, 128, 56, 56);NCHW (8, 128, 28, 28);NCHW (8, 256, 28, 28);NCHW (8, 2048, 7, 7);bf16 NCHW (16, 1024, 14, 14);bf16 NCHW (8, 64, 56, 56);bf16 NCHW (32, 2048, 7, 7)"
PYTHONPATH=src timeout 280 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd 'src@BN_RESIDENT=False' 'src' 'torch' > $OUT/resident_ab.log 2>&1
tail -16 $OUT/resident_ab.log
