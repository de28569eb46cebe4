# Session 34, call 1 (one GPU). (1) The single-read backward's last change (2abab5a: shared helpers, a mask select
# dropped; sm_90 registers 244 -> 214 fp32 CL) against f320d8f's kernel, at the two sizes it serves; (2) its budget
# for 16-bit inputs held as loaded: ab/wide takes min(acc, x) bytes × tensors (bf16 32768-value items: sm_90 spills
# 128-728 B at 8 warps, 112-360 at 16), against the two launches now taken there, and torch.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='32, 256, 14;8, 64, 56' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops train_bwd \
  ab/f320/src src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
BN_VARIANT_CASES='bf16 NCHW (32, 2048;bf16 CL (32, 2048;bf16 NCHW (16, 1024;bf16 CL (16, 1024' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 150 --ops train_bwd \
  src ab/wide/src 'ab/wide/src@BN_RESIDENT_WARPS={2: 16, 4: 8, 8: 16}' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -40
