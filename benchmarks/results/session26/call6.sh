# Session 26, call 6 (one H100): channels-last training passes at 48-57% of copy where NCHW reaches 56-60 (report,
# call 4). A channels-last tile row is CB channels of one image position, 64 bytes at the statistics' and the sums'
# CB = 32 (bf16): half a 128-byte line, the other half read by another item at another time. Session 3 chose 32 on
# the H200 with an older plan; now, on the H100: CB 64 (whole lines in bf16) for the statistics, the sums, both.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (256, 256, 28, 28);bf16 CL (256, 1024, 14, 14);bf16 CL (2, 256, 200, 304);fp32 CL (256, 64, 56, 56)"
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src' 'src@BN_CL_CB={"fused": 64, "stream": 64, "sums": 32}' 'src@BN_CL_CB={"fused": 32, "stream": 64, "sums": 64}' \
  'src@BN_CL_CB={"fused": 64, "stream": 64, "sums": 64}' > $OUT/cl_cb.log 2>&1
tail -17 $OUT/cl_cb.log
