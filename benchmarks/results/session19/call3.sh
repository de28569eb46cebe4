# Session 19, call 3: channels-last statistics pass (48-57% of copy on its read under the suite timer, against 66%
# for torch's x.sum() on the same bytes, call 2): channel blocks of 64 / 128 / 256 for the "fused" kind (the
# statistics pass) against 32; and the backward's sums pass at 64 / 128 against 32. CUDA-graph replays.
export PYTHONUNBUFFERED=1
export BN_VARIANT_CASES="bf16 CL (256, 64, 56, 56);bf16 CL (256, 1024, 14, 14);bf16 CL (8, 256, 128, 128);fp32 CL (256, 64, 56, 56)"
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops stats,train_fwd,train_bwd \
  'src' \
  'src@BN_CL_CB={"fused": 64, "stream": 64, "sums": 32}' \
  'src@BN_CL_CB={"fused": 128, "stream": 64, "sums": 32}' \
  'src@BN_CL_CB={"fused": 256, "stream": 64, "sums": 32}' \
  'src@BN_CL_CB={"fused": 32, "stream": 64, "sums": 128}' > $OUT/cl_cb_ab.log 2>&1
tail -30 $OUT/cl_cb_ab.log
