# Session 34, call 7 (one GPU): call 6's two gains on the channels-last sums pass (tiles of 2048 values: fp32 CL
# 128×2048×7² 50.3 -> 52.0, 32×512×28² 50.0 -> 51.3; one item an SM: 51.4, 51.0) combined, and checked on the
# fp32 channels-last tensors where fastnorm leads (56², 8×256×128²), two rounds, graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='fp32 CL (128, 2048;fp32 CL (32, 512, 28;bf16 CL (128, 2048;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops train_bwd \
  src 'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048}' \
  'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048};BN_SUMS_WAVE=1' \
  'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048};BN_SUMS_WAVE=3' \
  'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 1024}' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
