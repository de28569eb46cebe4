# Session 34, call 10 (one H100): calls 7-8's channels-last sums-pass form (tiles of 2048 values, 3 items an SM:
# +0.3..+1.5 at every channels-last case on the H200, NCHW lost at bf16 8×256×128²) on the H100, before a
# layout-keyed setting is built for it; two rounds, graph replays, torch beside.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='CL (128, 2048;fp32 CL (32, 512, 28;CL (256, 64, 56;fp32 CL (8, 256, 128' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 250 --ops train_bwd \
  src 'src@BN_TILE={"fwd": 4096, "bwd": 2048, "sums": 2048};BN_SUMS_WAVE=3' torch 2>&1 \
  | grep -v "^  \|^Traceback\|^    " | head -30
