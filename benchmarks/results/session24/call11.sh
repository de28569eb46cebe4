# Session 24, call 11 (one GPU): aligned rows with the interior vectors unmasked (per-lane Welford over vectors 1 ..
# M - 3 of each row; the three end vectors masked as before) against HEAD's form (ab/base/src) and runs as they lie;
# bn_ab --graph, 2 rounds, the statistics pass alone, the training forward and backward.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);bf16 NCHW (256, 64, 56, 56)"
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops stats,train_fwd,train_bwd \
  'src@BN_ALIGNED_ROWS={}' 'ab/base/src' 'src' > $OUT/interior_ab.log 2>&1
tail -19 $OUT/interior_ab.log
