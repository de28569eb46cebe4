# Session 20, call 4: BN_STATS_WAVE_BY_DEVICE (H100: 2 items per SM for channels-last and NCHW runs) in the library,
# HEAD (ab/base/src) against the working tree, report timing; then the BatchNorm CUDA tests that plan the statistics
# pass (device entry active on an H100; the tests that set BN_STATS_WAVE clear the table).
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (128, 2048, 7, 7);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (128, 2048, 7, 7);fp32 NCHW (256, 256, 28, 28);fp32 NCHW (32, 512, 28, 28);fp32 CL (256, 64, 56, 56);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7);fp32 NCHW (128, 2048, 7, 7);bf16 NCHW (2, 256, 200, 304)"
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_ab.py --rounds 2 --ops stats,train_fwd 'ab/base/src' 'src' > $OUT/stats_wave_ab.log 2>&1
tail -32 $OUT/stats_wave_ab.log
PYTHONPATH=src timeout 170 python -m pytest -q -p no:cacheprovider -x tests/test_batch_norm.py -k "stats_wave or offset_channels or small_plans or train or sync" 2>&1 | tail -3
