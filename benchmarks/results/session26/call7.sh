# Session 26, call 7 (one H100): the channels-last sums at 64 channels a tile (call 6) against 32 on more shapes,
# fp32 and the 7² layers included (training backward, bn_ab --graph, 2 rounds); then the report's BatchNorm suite on
# the code as committed (this session's evict_last tails and the sums' channel blocks), Liger carried in .whl.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="fp32 CL (8, 256, 128, 128);fp32 CL (256, 64, 56, 56);bf16 CL (128, 2048, 7, 7);fp32 CL (128, 2048, 7, 7);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128)"
PYTHONPATH=src timeout 170 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_bwd \
  'src@BN_CL_CB={"fused": 32, "stream": 64, "sums": 32}' 'src' > $OUT/cl_sums.log 2>&1
tail -9 $OUT/cl_sums.log
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
