# Session 22, call 4 (one H100): the flat apply with S's power-of-two factor compiled in (HEAD): (1) bn_ab --graph,
# compiled in vs argument, evaluation and training forward (the ops through the apply) at the cases of call 3;
# (2) tests/test_batch_norm.py and tests/test_replay.py on CUDA, 12 workers (the spatial-size bitwise tests at model
# sizes ran out of time one worker at a time in calls 1-3: 7-40 passed, none failed).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);bf16 NCHW (128, 64, 112, 112);fp32 NCHW (32, 512, 28, 28);bf16 NCHW (16, 256, 75, 75);fp32 NCHW (16, 256, 75, 75)"
PYTHONPATH=src timeout 150 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,eval_fwd 'src' 'src@BN_SPATIAL_COMPILED=0' > $OUT/spatial_flat_runs_ab_h100.log 2>&1
tail -16 $OUT/spatial_flat_runs_ab_h100.log
PYTHONPATH=src timeout 420 python -m pytest -q -p no:cacheprovider -n 12 tests/test_batch_norm.py tests/test_replay.py 2>&1 | tail -4
