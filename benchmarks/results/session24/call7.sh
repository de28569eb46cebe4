# Session 24, call 7 (one H100, asked for by kind): the BatchNorm suite on the current code (sessions 21-24: the
# spatial size as an argument, aligned rows, the reversed second pass), Liger carried in .whl; then the reversal A/B
# (bn_ab --graph, 1 round) on the same machine.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 330 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 256, 28, 28);bf16 NCHW (256, 1024, 14, 14);bf16 NCHW (8, 256, 128, 128);bf16 NCHW (2, 256, 200, 304);fp32 NCHW (32, 512, 28, 28);bf16 CL (256, 64, 56, 56);bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_fwd,train_bwd \
  'src@BN_SECOND_PASS_REVERSE=False;BN_ALIGNED_ROWS={}' 'src@BN_SECOND_PASS_REVERSE=False' 'src' > $OUT/h100_ab.log 2>&1
tail -21 $OUT/h100_ab.log
