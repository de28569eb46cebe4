# Session 32, call 9 (one GPU): call 8's 8 warps for the fp32 single-read kernel (from 16) on every fp32 case that
# takes it, the larger items too (16×1024×14², 8×64×56²: session 8's 8 warps spilled and lost up to 10% in CL).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='fp32 NCHW (32, 256, 14;fp32 CL (32, 256, 14;fp32 NCHW (32, 2048, 7;fp32 CL (32, 2048, 7;fp32 NCHW (16, 1024;fp32 CL (16, 1024;fp32 NCHW (8, 64, 56;fp32 CL (8, 64, 56' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops train_fwd \
  src 'src@BN_RESIDENT_WARPS={2: 8, 4: 8, 8: 16}' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
