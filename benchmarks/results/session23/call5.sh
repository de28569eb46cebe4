# Session 23, call 5 (one GPU): the aligned-row statistics pass as committed. (1) On CUDA: its tests (model sizes
# included), the spatial-size bitwise tests, the offset/constant-channel and flat-apply tests, SyncBatchNorm's
# single-process tests. (2) bn_ab --graph, training forward and the statistics alone, runs as they lie against aligned
# rows, odd sizes with two even controls.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 330 python -m pytest -q -p no:cacheprovider -n 12 --timeout 300 tests/test_batch_norm.py -k "aligned_rows or spatial_size or offset or apply_flat or constant" 2>&1 | tail -4
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14)"
PYTHONPATH=src timeout 240 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,stats \
  'src@BN_ALIGNED_ROWS={}' 'src' > $OUT/aligned_rows_ab.log 2>&1
tail -14 $OUT/aligned_rows_ab.log
