# Session 32, call 8 (one GPU): call 7 put the single-read (resident) kernel 1.1-1.3 µs behind cuDNN's at fp32 NCHW
# 32×256×14² and 2.2-3.5 µs behind at channels-last (kernel durations). Its warps for 4-byte x: 16 now; 8 and 32 tried.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='fp32 NCHW (32, 256, 14;fp32 CL (32, 256, 14;fp32 NCHW (32, 2048, 7;fp32 CL (32, 2048, 7' \
  timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops train_fwd \
  src 'src@BN_RESIDENT_WARPS={2: 8, 4: 8, 8: 16}' 'src@BN_RESIDENT_WARPS={2: 8, 4: 32, 8: 16}' torch 2>&1 \
  | grep -v "^  \|^Traceback\|^    " | head -30
