# Session 27, call 3 (one GPU): the suite on call 1's first case with its captures' errors printed whole: the
# backward alone, then after the forward (as in call 1), NCHW and channels-last.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for ops in train_bwd train_fwd,train_bwd train_fwd,train_bwd,eval_fwd,frozen_bwd; do
  echo "=== $ops"
  PYTHONPATH=src timeout 200 python benchmarks/results/session27/capture_diag2.py $ops nchw 2>&1 | grep -v "Warning\|^  warn\|^| \|^$\|^#\|^- " | tail -40
done
