# Session 45, call 6 (one H200, the last ~4 min of the session's device time): where the channels-last bf16 training
# backward's time goes (53-54% of copy in GPU time, 48 at 8×256×128², target 55), each launch's µs and share of the
# copy time, against the NCHW form and torch's (cuDNN) split of the same op.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28)" \
  timeout 200 python benchmarks/scripts/bn_kernel_times.py --ops train_bwd "" torch 2>&1 | grep -v Warning | tail -40
