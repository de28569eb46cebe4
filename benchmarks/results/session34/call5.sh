# Session 34, call 5 (one GPU). (1) CUDA tests of the single-read paths with 16-bit channels-last elements counted
# in their own bytes (forward and backward; BN_RESIDENT_HOLD_LOADED). (2) A/B of that rule as committed against it
# off, two rounds: the training forward at ResNet-50's 6.4M-element bf16 channels-last layers (call 4's ab/fwide
# again) and the fused-ReLU backward (new bn_ab op relu_bwd: dy, x, y held, three tensors — now single-read at
# 32×256×14² and 8×64×56², unmeasured). (3) The profiler's kernel records where torch's backward and forward lead
# in GPU time (fp32 CL 128×2048×7² backward 54.0 vs 50.1; fp32 NCHW 32×512×28² forward 53.3 vs 52.0).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 -rf tests/test_batch_norm.py \
  -k "resident or relu" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='bf16 CL (32, 256, 14;bf16 CL (8, 64, 56;bf16 CL (32, 256, 28;bf16 CL (32, 64, 56;bf16 CL (32, 1024, 14' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops relu_bwd,train_fwd \
  src 'src@BN_RESIDENT_HOLD_LOADED={True: False, False: False}' torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_bwd --impls fastnorm,torch \
  --dtype fp32 --cl 128 2048 7 7 2>&1 | grep -v Warning | tail -24
PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops train_fwd --impls fastnorm,torch \
  --dtype fp32 32 512 28 28 2>&1 | grep -v Warning | tail -24
