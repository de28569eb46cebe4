# Session 24, call 6 (one GPU): the reversed second pass as committed (chunks from the last down, a short last chunk
# last, tiles ascending; flat blocks descending) against the order as before: bn_ab --graph, 2 rounds, training
# forward and backward; then on CUDA the new order test and the flat-apply tests.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (2, 256, 200, 304);fp32 NCHW (32, 512, 28, 28);fp32 NCHW (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);fp32 CL (256, 64, 56, 56);bf16 NCHW (128, 64, 112, 112);bf16 NCHW (32, 512, 28, 28);bf16 NCHW (128, 2048, 7, 7)"
PYTHONPATH=src timeout 420 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src@BN_SECOND_PASS_REVERSE=False' 'src' > $OUT/reverse_final_ab.log 2>&1
tail -26 $OUT/reverse_final_ab.log
PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --timeout 140 tests/test_batch_norm.py \
  -k "second_pass_reverse or apply_flat_against_reference" -rf 2>&1 | tail -3
