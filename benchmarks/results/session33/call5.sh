# Session 33, call 5 (one GPU): the merge loops' next step loaded before this step's arithmetic (_merge_partials,
# _sum_partials; the working tree) against HEAD (ac24ad8, carried as ab/base/src). Calls 1-2: a merge step costs
# ~0.45 µs — its loads' L2 latency (~600 cycles) then its shuffles and two divisions (~300), in series; wider steps
# grow the code and lost. Prediction: a step costs the larger of the two, the channels-last 56² sub-group merge 4.1 ->
# ~2.7 µs, statistics +1.5 µs (about +3% there), the backward's sums likewise where they merge in several steps.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python benchmarks/scripts/bn_timeline.py --runs 2 --cl 256 64 56 56 2>&1 | grep -v "^  start\|branch end" | tail -20
BN_VARIANT_CASES='bf16 CL (256, 64, 56;bf16 CL (256, 256, 28;fp32 CL (8, 256, 128;bf16 CL (32, 256, 14;fp32 CL (32, 256, 14;bf16 NCHW (256, 64, 56;bf16 NCHW (32, 512, 28;bf16 CL (128, 2048, 7' \
  timeout 480 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops stats,train_fwd,train_bwd \
  ab/base/src src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -60
