# Session 31, call 4 (one GPU): call 3's ab_e (no merge where a channel block is one item, one level where it has
# one sub-group; no counter fill under capture) left channels-last where it was: there a channel block has 66-262
# items (NSUB 2-5) and the last arrivals merge 8 partials a step (MS = BN_MERGE_ELEMS / 32 channels), 8 + 1 steps of
# dependent L2 loads at 56². Wider steps (BN_MERGE_ELEMS 1024: 32 a step; 2048: 64) and a prefetched merge loop
# (ab_ep: tl.range num_stages=3). Statistics pass alone and training forward, CUDA-graph replays / back-to-back.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024, 14;bf16 CL (8, 256, 128;bf16 CL (128, 2048, 7;bf16 NCHW (256, 64, 56' \
  timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops stats,train_fwd ab_e ab_ep \
  'ab_e@BN_MERGE_ELEMS=1024' 'ab_e@BN_MERGE_ELEMS=2048' 'ab_ep@BN_MERGE_ELEMS=1024' 2>&1 | tail -20
