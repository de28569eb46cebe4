# Session 35, call 8 (one GPU): call 7's row-strided apply lost 3-14 points to the tile apply; with 3 programs of
# 4 stages an SM it keeps 24 KB of bf16 x in flight an SM (the frozen pass, reading x and dy, 48 KB). More in
# flight: 8 an SM x 4 stages, 6 x 6, tiles of 2048 on 4 warps at 4 an SM x 4; evaluation only.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A='"min_numel": 1048576, "steps": 16, "train": 1, "rev": 1, "warps": 4'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 1024;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;fp32 CL (256, 64, 56;fp32 CL (128, 2048;fp32 CL (256, 1024' \
  timeout 250 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 230 --ops eval_fwd \
  src "ab/ap/src@BN_APPLY_ROWS={$A, \"block\": 1024, \"per_sm\": 8, \"stages\": 4}" \
  "ab/ap/src@BN_APPLY_ROWS={$A, \"block\": 1024, \"per_sm\": 6, \"stages\": 6}" \
  "ab/ap/src@BN_APPLY_ROWS={$A, \"block\": 2048, \"per_sm\": 4, \"stages\": 4}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -20
