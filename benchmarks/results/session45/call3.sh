# Session 45, call 3 (one H200): the channels-last statistics rows kernel with narrow channel blocks ("lanes", new key
# of BN_STATS_ROWS) over every channel count, against the defaults (rows kernel at C = 64-128 and 512-1024 with
# tiles of up to 1024 lanes, the tile kernel elsewhere): training forward, graph replays, two rounds. Then Nsight
# Compute's stall reasons of the rows kernel at 256×256×28² (256 and 64 lanes) and 256×64×56².
# Ran against the working tree of the time, where BN_STATS_ROWS and BN_FROZEN_ROWS took one "lanes" number (the
# committed form is BN_ROWS_LANES_256's ranges): these overrides do not apply to later trees as written.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
R='"min_numel": 1048576, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16, "channels": ((64, 4096),)'
S64="BN_STATS_ROWS={$R, \"lanes\": 64}"
S128="BN_STATS_ROWS={$R, \"lanes\": 128}"
S1024="BN_STATS_ROWS={$R, \"lanes\": 1024}"
BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14);bf16 CL (32, 512, 28, 28);bf16 CL (128, 2048, 7, 7);bf16 CL (256, 64, 56, 56);fp32 CL (256, 256, 28, 28);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7)" \
  timeout 330 python benchmarks/scripts/bn_ab.py --graph --ops train_fwd --rounds 2 src "src@$S64" "src@$S128" \
  > $OUT/bn_ab.txt 2>&1
tail -14 $OUT/bn_ab.txt
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum'
for v in "cl56 $S1024" "cl28 $S1024" "cl28 $S64"; do
  set -- $v; c=$1; o=${v#* }; tag=$c$(echo "$o" | grep -o '"lanes": [0-9]*' | tr -dc 0-9)
  timeout 60 ncu --kernel-name regex:_bn_stats_rows_kernel --launch-skip 2 --launch-count 1 --metrics "$M" \
    python benchmarks/scripts/ncu_bn_stats.py $c "$o" > $OUT/ncu_stalls_$tag.txt 2>&1
  echo "== $tag"; grep -E "gpu__time|dram__|inst_executed|stalled" $OUT/ncu_stalls_$tag.txt | awk '$NF+0 > 0.1 || /gpu__|dram|inst/' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
