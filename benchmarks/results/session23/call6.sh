# Session 23, call 6 (one GPU, the session's last device time): the training backward's sums pass reading aligned rows
# too (odd S, 16-bit; its own launch above 2^24 elements). (1) bn_ab --graph, one round, training backward, runs as
# they lie against aligned rows, bf16 75² and 147²; (2) on CUDA the aligned-row tests at model sizes (bf16) and the
# 64-bit / NaN test.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147)"
PYTHONPATH=src timeout 150 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_bwd \
  'src@BN_ALIGNED_ROWS={}' 'src' > $OUT/aligned_bwd_ab.log 2>&1
tail -5 $OUT/aligned_bwd_ab.log
PYTHONPATH=src timeout 170 python -m pytest -q -p no:cacheprovider -n 8 --timeout 160 tests/test_batch_norm.py \
  -k "(aligned_rows_against_reference and 4096 and dtype0) or 64_bit_and_nan" -rf 2>&1 | tail -4
