# Session 45, call 4 (one H200): the statistics rows pass with lanes by channel range (new default: C = 256-512 in
# tiles of 64 lanes, also taking C = 256 from the tile kernel; 64-128 and 1024 as before) against the old default,
# training forward, graph replays, two rounds; the frozen backward's rows pass (BN_FROZEN_ROWS) at 64 lanes against
# its default at the same channel counts; then the CUDA tests of the statistics rows pass.
# Ran against the working tree of the time: "src" took C = 256-512 in tiles of 64 lanes, the statistics pass's
# channel ranges as (lo, hi, lanes) triples, BN_FROZEN_ROWS one "lanes" number (the committed form, BN_ROWS_LANES_256,
# keeps C = 512 at its 512 lanes, as call 4 measured best): these overrides do not apply to later trees as written.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
OLD='BN_STATS_ROWS={"min_numel": 1048576, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16, "channels": ((64, 128, 1024), (512, 1024, 1024))}'
F64='BN_FROZEN_ROWS={"min_numel": 1048576, "block": 1024, "lanes": 64, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16}'
CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 512, 28, 28);bf16 CL (32, 512, 28, 28);bf16 CL (256, 1024, 14, 14);fp32 CL (256, 256, 28, 28);fp32 CL (8, 256, 128, 128);fp32 CL (32, 512, 28, 28)"
BN_VARIANT_CASES="$CASES" timeout 200 python benchmarks/scripts/bn_ab.py --graph --ops train_fwd --rounds 2 "src@$OLD" src \
  > $OUT/bn_ab_fwd.txt 2>&1
tail -11 $OUT/bn_ab_fwd.txt
BN_VARIANT_CASES="$CASES" timeout 200 python benchmarks/scripts/bn_ab.py --graph --ops frozen_params --rounds 2 src "src@$F64" \
  > $OUT/bn_ab_frozen.txt 2>&1
tail -11 $OUT/bn_ab_frozen.txt
timeout 120 python -m pytest -q -p no:cacheprovider -n 8 --timeout 100 tests/test_batch_norm.py -k "stats_rows or frozen_rows" 2>&1 | tail -2
