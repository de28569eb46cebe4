# Session 33, call 2 (one GPU): call 1's stamps put the channels-last merge tail in the sub-group merge (64 partials,
# 8 a step: 4.1 µs, ~0.5 µs a step). Is it the steps? The timeline and the statistics / backward timings with 8
# (default), 16, 32 and 64 partials a step (BN_MERGE_TILE caps the width at 16: session 31's wider settings of
# BN_MERGE_ELEMS alone gave 16, not 32 or 64).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for s in "" "BN_MERGE_ELEMS=512" "BN_MERGE_TILE=32;BN_MERGE_ELEMS=1024" "BN_MERGE_TILE=64;BN_MERGE_ELEMS=2048"; do
  timeout 60 python benchmarks/scripts/bn_timeline.py --runs 2 --cl --set "$s" 256 64 56 56 2>&1 | grep -v "^  start\|branch end" | tail -14
done
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;fp32 CL (8, 256, 128;bf16 CL (32, 256, 14;fp32 CL (32, 256, 14' \
  timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 200 --ops stats,train_bwd \
  src 'src@BN_MERGE_ELEMS=512' 'src@BN_MERGE_TILE=32;BN_MERGE_ELEMS=1024' 'src@BN_MERGE_TILE=64;BN_MERGE_ELEMS=2048' \
  2>&1 | grep -v "^  \|^Traceback\|^    " | head -60
