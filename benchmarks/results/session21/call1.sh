# session 21, call 1 (nvidia-h100-x2): host time inside the timer's loop (GPU 0), then the multi-GPU checks.
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 150 python benchmarks/scripts/timer_host.py 2>&1 | tee $OUT/timer_host.log
STEPS="check timeout ddp" LOGDIR=$OUT/mg timeout 420 bash benchmarks/scripts/run_multigpu.sh 2>&1 | tail -40
