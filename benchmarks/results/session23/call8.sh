# Session 23, call 8 (one GPU): the code as committed after the review (vectors loaded only where they overlap a run;
# aligned rows only where N·C·S is a multiple of 8; the backward's sums too). (1) bn_ab --graph, one round, training
# forward and backward, runs as they lie against aligned rows; (2) on CUDA the aligned-row tests at model sizes (bf16)
# and the 64-bit / NaN test.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35)"
PYTHONPATH=src timeout 120 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_fwd,train_bwd \
  'src@BN_ALIGNED_ROWS={}' 'src' > $OUT/aligned_final_ab.log 2>&1
tail -7 $OUT/aligned_final_ab.log
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider -n 8 --timeout 90 tests/test_batch_norm.py \
  -k "(aligned_rows_against_reference and 4096 and dtype0) or 64_bit_and_nan" -rf 2>&1 | tail -3
