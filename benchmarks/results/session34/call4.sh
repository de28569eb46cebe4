# Session 34, call 4 (one GPU): the single-read training forward's budget for 16-bit inputs counted in the loaded
# bytes (ab/fwide: min(acc, x) bytes an element, 65536 bf16 values a program: 6.4M-element tensors, ResNet-50's
# batch-32 layers, now fit; sm_90 spills 144-992 B at 8 warps, 168-288 at 16), against the two launches they take
# now and torch.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='(32, 256, 28;(32, 64, 56;(32, 1024, 14' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops train_fwd \
  src ab/fwide/src 'ab/fwide/src@BN_RESIDENT_WARPS={2: 16, 4: 8, 8: 16}' torch 2>&1 \
  | grep -v "^  \|^Traceback\|^    " | head -40
