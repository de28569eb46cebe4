# Session 24, call 3 (one GPU): (1) l2_reuse.py: how much of a just-read tensor a second kernel finds in L2, by its
# block order and store hint; (2) per-kernel times of the bf16 NCHW 256×1024×14² training backward, its dx pass in
# the order as before and reversed (the A/B's one loss).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python benchmarks/scripts/l2_reuse.py > $OUT/l2_reuse.log 2>&1
cat $OUT/l2_reuse.log
export BN_VARIANT_CASES="bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (256, 256, 28, 28)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_kernel_times.py --ops train_bwd \
  'BN_SECOND_PASS_REVERSE=0' 'BN_SECOND_PASS_REVERSE=1' > $OUT/kernel_times.log 2>&1
cat $OUT/kernel_times.log
