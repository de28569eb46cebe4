# Session 46, call 7 (one H200, the session's last device time): the row-strided sums pass grid-strided (tiles j, j +
# SPLIT, ...: its last reads the tensor's end, as the statistics rows pass) with the channels-last dx pass taking its
# chunks from the end down (BN_DX_REVERSE, experimental), so that the dx pass first reads what the sums pass left in
# L2; each alone too. Training backward, bf16 channels-last, graph replays, two rounds; then each launch's µs (flush).
# Ran against the working tree of the time: BN_SUMS_ROWS' "strided" key and BN_DX_REVERSE were that tree's
# experimental switches; the committed form walks the sums pass grid-strided and reverses the dx pass after it
# always, without either setting.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
S='BN_SUMS_ROWS={"min_numel": 1048576, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16, "x_sizes": (2,), "strided": 1}'
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14)"
BN_VARIANT_CASES="$CASES" timeout 240 python benchmarks/scripts/bn_ab.py --graph --ops train_bwd --rounds 2 \
  src "src@$S" "src@$S;BN_DX_REVERSE=True" "src@BN_DX_REVERSE=True" > $OUT/bn_ab.txt 2>&1
tail -7 $OUT/bn_ab.txt
BN_VARIANT_CASES="bf16 CL (256, 64, 56, 56)" timeout 60 python benchmarks/scripts/bn_kernel_times.py --flush \
  --ops train_bwd "" "$S;BN_DX_REVERSE=True" 2>&1 | grep -v Warning | tail -2
