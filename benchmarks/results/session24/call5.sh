# Session 24, call 5 (one GPU): the training backward at bf16 NCHW 256×1024×14², where the reversed dx pass lost
# (49.7 -> 44.3 in call 4): per-kernel times with BN_SECOND_PASS_REVERSE 0 / 1 / 4 (4, experimental: the chunks
# from the last down but each chunk's tiles ascending), and bn_ab --graph of the same, 2 rounds.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (8, 256, 128, 128)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_kernel_times.py --ops train_bwd \
  'BN_SECOND_PASS_REVERSE=0' 'BN_SECOND_PASS_REVERSE=1' 'BN_SECOND_PASS_REVERSE=4' > $OUT/kernel_times.log 2>&1
grep -v Warn $OUT/kernel_times.log | grep -v _warn
PYTHONPATH=src timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_bwd \
  'src@BN_SECOND_PASS_REVERSE=0' 'src@BN_SECOND_PASS_REVERSE=1' 'src@BN_SECOND_PASS_REVERSE=4' > $OUT/tiles_ab.log 2>&1
tail -4 $OUT/tiles_ab.log
