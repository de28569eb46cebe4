# Session 34, call 6 (one GPU): a screen of the channels-last sums pass's knobs where cuDNN's backward leads. Call 5's
# kernel records, fp32 CL 128×2048×7² (51 MB a tensor): our sums pass 34.7 µs for 103 MB read (2.96 TB/s; 256
# programs, 2 an SM, 32 channels × 128 rows a tile, 3 stages), the dx pass 33.4 µs for 154 MB (L2 hits from the sums'
# tail), against cuDNN's one semiPersist kernel 60.7 µs for the whole backward. Variants (one at a time): 4 sums
# items an SM (BN_SUMS_WAVE 2 -> 4), 4 stages, tiles of 2048 / 8192 values, 1 or 3 items an SM; two rounds, graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='fp32 CL (128, 2048;fp32 CL (32, 512, 28;bf16 CL (128, 2048;fp32 CL (256, 64, 56' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops train_bwd \
  src 'src@BN_SUMS_WAVE=4' \
  'src@BN_LOOP_STAGES={"stats": 3, "apply": 4, "apply_row32": 2, "bwd": 4, "dx": 3, "frozen": 4}' \
  'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048}' 'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 8192}' \
  'src@BN_SUMS_WAVE=1' 'src@BN_SUMS_WAVE=3' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
