# Session 34, call 9 (one H100): the 16-bit channels-last rule (BN_RESIDENT_HOLD_LOADED, measured on the H200 in
# calls 1, 4 and 5) on the H100 — same SM count and register file, so the same plans: HEAD against the rule off, the
# training forward, backward and fused-ReLU backward of the bf16 channels-last tensors it moves to the single read
# (and two it leaves, 8×64×56² and 32×256×14² without ReLU); two rounds, graph replays.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
BN_VARIANT_CASES='bf16 CL (32, 2048;bf16 CL (16, 1024;bf16 CL (32, 256, 28;bf16 CL (32, 64, 56;bf16 CL (32, 1024, 14;bf16 CL (8, 64, 56;bf16 CL (32, 256, 14' \
  timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 250 --ops train_fwd,train_bwd,relu_bwd \
  src 'src@BN_RESIDENT_HOLD_LOADED={True: False, False: False}' 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
