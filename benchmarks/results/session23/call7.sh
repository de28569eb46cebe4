# Session 23, call 7 (one GPU): call 6's A/B again (its noise), with 4 sums items per SM beside the aligned rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (256, 64, 56, 56)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_bwd \
  'src@BN_ALIGNED_ROWS={}' 'src' 'src@BN_SUMS_WAVE=4' > $OUT/aligned_bwd_ab2.log 2>&1
tail -5 $OUT/aligned_bwd_ab2.log
