# Session 34, call 3 (one GPU): two single-read programs per multiprocessor (ab/sm2: the plans made for 2 × the SMs,
# BN_RESIDENT_PER_SM = 2) with half the register budget each, at 8 warps (sm_90 registers 64-121, <= 128: two fit)
# and at 4 (96-221), against one per SM (src) and torch, where torch's small-tensor forward led (fp32 NCHW
# 32×256×14² 24.6 vs 22.5, session 34 call 2's suite). Only tensors whose kernels fit twice at 8 warps (a refused
# cooperative launch would switch the single read off for the rest of the process).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='32, 256, 14;8, 64, 56' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops train_fwd,train_bwd \
  src 'ab/sm2/src@BN_RESIDENT_BYTES=65536' 'ab/sm2/src@BN_RESIDENT_BYTES=65536;BN_RESIDENT_WARPS={2: 4, 4: 4, 8: 16}' \
  torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
