# Session 20, call 1: where the host time of a suite-style backward call goes (engine, fastnorm's Python, launch).
export PYTHONUNBUFFERED=1
PYTHONPATH=src:benchmarks/scripts timeout 400 python benchmarks/scripts/backward_host.py 2>&1 | tee $OUT/backward_host.log | grep -v Warning
