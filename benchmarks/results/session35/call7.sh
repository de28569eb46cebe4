# Session 35, call 7 (one GPU): the row-strided form as the one-pass forward over channels-last rows (ab/ap: a
# _bn_apply_rows_kernel, each lane one channel's scale and shift, 3 programs an SM, 4 stages) against the tile and
# flat apply kernels (src), in evaluation and as the training forward's apply (its programs in reverse, or not);
# 4 an SM with 3 stages.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A='"min_numel": 1048576, "block": 1024, "warps": 4, "steps": 16, "train": 1'
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 1024;bf16 CL (128, 2048;bf16 CL (8, 256, 128;bf16 CL (32, 512, 28;bf16 CL (2, 256;fp32 CL (256, 64, 56;fp32 CL (8, 256, 128;fp32 CL (128, 2048;fp32 CL (32, 512, 28;fp32 CL (256, 1024' \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 300 --ops eval_fwd,train_fwd \
  src ab/ap/src "ab/ap/src@BN_APPLY_ROWS={$A, \"per_sm\": 3, \"stages\": 4, \"rev\": 0}" \
  "ab/ap/src@BN_APPLY_ROWS={$A, \"per_sm\": 4, \"stages\": 3, \"rev\": 1}" \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
