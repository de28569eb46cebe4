# Session 35, call 3 (one GPU): the row-strided frozen kernel's time by kernel (its main pass against its sums
# launch), and its settings: 4 stages (call 2's best), with the sums launch 4 channels a program (16 programs at
# C = 64, not 4), 5 stages, 3 or 6 programs an SM; the tile kernel (None) beside.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
R='"min_numel": 1048576, "warps": 4, "steps": 16, "sums": 0, "block": 1024'
S4="BN_FROZEN_ROWS={$R, \"per_sm\": 4, \"stages\": 4}"
for shape in "256 64 56 56" "32 512 28 28"; do
  PYTHONPATH=src timeout 100 python benchmarks/scripts/bn_kernel_trace.py --ops frozen_params --impls fastnorm \
    --dtype bf16 --cl --set "$S4" $shape 2>&1 | grep -v Warning | tail -9
done
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 300 --ops frozen_params \
  "src@$S4" "src@$S4;BN_ROWS_SUMS_TILE=(4, 4096)" \
  "src@BN_FROZEN_ROWS={$R, \"per_sm\": 4, \"stages\": 5}" \
  "src@BN_FROZEN_ROWS={$R, \"per_sm\": 3, \"stages\": 4}" \
  "src@BN_FROZEN_ROWS={$R, \"per_sm\": 6, \"stages\": 4}" 'src@BN_FROZEN_ROWS=None' \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
