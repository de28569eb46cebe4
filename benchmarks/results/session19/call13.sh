# Session 19, calls 13 and 14 (the same script; 14 after the per-channel values moved into the flat kernel): the flat apply kernel (BN_APPLY_FLAT) in the library — CUDA tests of the flat path and the
# replays, then the evaluation and training forwards A/B against HEAD's tree (ab/base/src), CUDA-graph replays.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 150 python -m pytest -q -x -p no:cacheprovider tests/test_batch_norm.py -k "apply_flat or eval or frozen" tests/test_replay.py 2>&1 | tail -3
export BN_VARIANT_CASES="fp32 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);fp32 NCHW (256, 64, 56, 56);fp32 CL (256, 64, 56, 56);bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);bf16 CL (256, 64, 56, 56);fp32 NCHW (128, 2048, 7, 7);fp32 CL (8, 256, 128, 128);bf16 NCHW (32, 512, 28, 28);bf16 NCHW (8, 256, 128, 128)"
timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops eval_fwd,train_fwd ab/base/src src > $OUT/flat_ab.log 2>&1
tail -26 $OUT/flat_ab.log
