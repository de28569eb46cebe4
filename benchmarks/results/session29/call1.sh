# Session 29, call 1 (one GPU): (a) the backward's sums pass at more items per SM (BN_SUMS_WAVE 2 -> 4, 8, 16, the
# smaller sums tiles that the split needs), training backward in CUDA-graph replays, small tensors then two large;
# (b) the graph-replayed copy_ at large sizes.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
W8='src@BN_SUMS_WAVE=8;BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048}'
W16='src@BN_SUMS_WAVE=16;BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 1024}'
BN_VARIANT_CASES='fp32 NCHW (32, 256, 14;fp32 CL (32, 256, 14;bf16 NCHW (32, 256, 14;fp32 NCHW (32, 2048, 7;bf16 NCHW (8, 2048, 7;fp32 NCHW (128, 2048, 7' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops train_bwd src \
  'src@BN_SUMS_WAVE=4' "$W8" "$W16" torch 2>&1 | tail -14
BN_VARIANT_CASES='fp32 NCHW (256, 1024, 14;bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56' \
  timeout 170 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 120 --ops train_bwd src \
  'src@BN_SUMS_WAVE=4' "$W8" "$W16" 2>&1 | tail -9
timeout 60 python benchmarks/scripts/graph_copy.py 2>&1 | grep -v Warn | tail -8
