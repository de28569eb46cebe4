# Session 23, call 4 (one GPU): the aligned-row statistics pass, second form (each vector's exact two-pass statistics
# merged into a per-thread slot, slots merged once at the end: 21 SASS instructions an element against 19 for runs as
# they lie and 26 for call 2's per-tile block reductions). Kernel times (torch.profiler), the statistics op alone and
# the training forward: default (aligned rows for 16-bit odd S) against runs as they lie; fp32 odd S both ways.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);fp32 NCHW (16, 256, 75, 75)"
PYTHONPATH=src timeout 300 python benchmarks/scripts/bn_kernel_times.py --ops stats,train_fwd '' 'BN_ALIGNED_ROWS={}' 'BN_ALIGNED_ROWS={2: 1, 4: 1}' > $OUT/kernel_times.log 2>&1
cut -c1-250 $OUT/kernel_times.log
