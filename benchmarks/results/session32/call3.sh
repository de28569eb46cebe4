# Session 32, call 3 (one GPU): channels-last statistics pass. Call 1's timeline: its loops end at 31 µs (median;
# NCHW's at 23 over the same bytes) and its merge chain adds a 7 µs tail; call 2: back to back its kernel runs 40.5 µs
# against torch's read of the same bytes in 28.3. Variants (one round, a screen): sub-groups of 16 items (two short
# merge levels) or one level (MSUB >= SPLIT); channel blocks of 64 (whole 128-byte rows at C = 64); 2 items an SM.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (128, 2048, 7;fp32 CL (8, 256, 128' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 200 --ops stats,train_fwd \
  src 'src@BN_MSUB=16' 'src@BN_MSUB=4096' 'src@BN_CL_CB={"fused": 64, "stream": 64, "sums": 32}' \
  'src@BN_STATS_WAVE_BY_DEVICE={"H200": {"flat": 2}}' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -60
