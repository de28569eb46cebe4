# Session 34, call 8 (one GPU): call 7's best sums-pass form (tiles of 2048 values, 3 items an SM: at every
# channels-last case >= HEAD, +0.2..+1.5) on the NCHW tensors that take the same sums launch, and the channels-last
# ones again; two rounds, graph replays. BN_TILE["sums"] and BN_SUMS_WAVE serve both layouts.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='NCHW (256, 64, 56;NCHW (32, 512, 28;NCHW (8, 256, 128;NCHW (256, 1024;NCHW (256, 256, 28;CL (128, 2048;fp32 CL (32, 512;CL (256, 64, 56' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 250 --ops train_bwd \
  src 'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048};BN_SUMS_WAVE=3' 2>&1 \
  | grep -v "^  \|^Traceback\|^    " | head -30
