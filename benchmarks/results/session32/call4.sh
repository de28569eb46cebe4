# Session 32, call 4 (one GPU): call 3's screen put 2 statistics items an SM ahead in channels-last on the H200 too
# (stats +0.4..+8.6 points, training forward +0.3..+4.1; the H100 takes 2 since session 20) and sub-groups of 16
# slightly ahead. Confirmed over two rounds, with NCHW ("runs": 2, as the H100 takes) and both together.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (128, 2048, 7;fp32 CL (8, 256, 128;bf16 NCHW (256, 64, 56;bf16 NCHW (256, 1024, 14;bf16 NCHW (32, 512, 28' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops stats,train_fwd \
  src 'src@BN_STATS_WAVE_BY_DEVICE={"H200": {"flat": 2}}' 'src@BN_STATS_WAVE_BY_DEVICE={"H200": {"flat": 2}};BN_MSUB=16' \
  'src@BN_STATS_WAVE_BY_DEVICE={"H200": {"flat": 2, "runs": 2}}' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -60
