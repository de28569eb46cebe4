# Session 35, call 5 (one GPU): the row-strided frozen kernel as committed (src) against three forms: v1 its x̂ sum
# without the mask select (the masked lanes' g is 0), v2 that and the sums launch adding up to 512 shares a step
# (JB and CB from the share count: one step at 396 shares), v2 with tiles of 2048 elements on 4 warps.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
R='"min_numel": 1048576, "warps": 4, "steps": 16, "per_sm": 3, "stages": 4'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 280 --ops frozen_params \
  src ab/v1/src ab/v2/src "ab/v2/src@BN_FROZEN_ROWS={$R, \"block\": 2048}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
