# Session 47, call 1 (one H200): (1) where the channels-last training forward's time goes (bf16 8×256×128²,
# 2×256×200×304 at 46% of copy against NCHW's 51-53): each kernel's µs with the suites' flush, torch's split beside;
# (2) the BatchNorm suite on session 46's final form (the row-strided sums pass grid-strided, the reversed
# channels-last dx pass), which the committed report's BatchNorm section (session 46 call 6) predates.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
CASES="bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (256, 64, 56, 56)"
BN_VARIANT_CASES="$CASES" timeout 120 python benchmarks/scripts/bn_kernel_times.py --flush --ops train_fwd "" torch \
  > $OUT/kernel_times.txt 2>&1
grep -v Warning $OUT/kernel_times.txt | tail -40
timeout 430 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check > $OUT/suite.log 2>&1
tail -3 $OUT/suite.log
