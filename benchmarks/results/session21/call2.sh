# session 21, call 2 (nvidia-h100-x2): the backward's host time split (GPU 0), then the SyncBatchNorm benchmark on 2 GPUs.
PYTHONPATH=src timeout 120 python benchmarks/scripts/engine_split.py 2>&1 | tee $OUT/engine_split.log
STEPS="bench" LOGDIR=$OUT/mg BENCH_OUT=$OUT/report timeout 400 bash benchmarks/scripts/run_multigpu.sh 2>&1 | tail -30
