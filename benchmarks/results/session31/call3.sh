# Session 31, call 3 (one GPU): call 2 found the statistics pass streaming at 82-93% of copy with a fixed cost of
# 13-21 µs (the evaluation forward's 6-8, a copy's 4-5). Which part? src (as merged); ab_nz: no zero-fill of the
# counters under CUDA-graph capture (the stream's buffer kept; a fill node in every graph of src); ab_nzt: ab_nz
# without the merge chain (each item stores its partial and exits: wrong statistics, timing only); ab_nzk: ab_nz with
# no shift load (K = 0; its loop also loses the shift's 16 FADDs); ab_e: ab_nz with no merge where a channel block
# is one item (SPLIT = 1) and one level where it has one sub-group (NSUB = 1). CUDA-graph replays / back-to-back.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 CL (256, 256, 28;fp32 NCHW (256, 256, 28;bf16 NCHW (32, 512, 28' \
  timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats,train_fwd src ab_nz ab_nzt \
  ab_nzk ab_e 2>&1 | tail -20
