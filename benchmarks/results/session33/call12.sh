# Session 33, call 12 (one GPU): a screen, one round, of the training backward's sums-pass knobs at the small
# channels-last tensors where torch (cuDNN's single kernel) is faster in GPU time (call 1: our sums kernel 9.3 µs for
# 12.8 MB at fp32 CL 32×256×14², its merge tail), beside two large ones for their cost: items an SM (BN_SUMS_WAVE 2 ->
# 1 / 4), the sums tile (4096 -> 1024), the channels-last row bytes (128 -> 256), sub-groups of 16.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='fp32 CL (32, 256, 14;bf16 CL (32, 256, 14;fp32 CL (128, 2048, 7;bf16 CL (32, 2048, 7;bf16 CL (256, 64, 56;fp32 CL (8, 256, 128' \
  timeout 500 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 200 --ops train_bwd \
  src 'src@BN_SUMS_WAVE=1' 'src@BN_SUMS_WAVE=4' 'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 1024}' \
  'src@BN_CL_SUMS_ROW_BYTES=256' 'src@BN_MSUB=16' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
