# Session 45, call 2 (one H200): why the channels-last statistics rows kernel reads 256×256×28² slower than 256×64×56²
# (session 36: 42.6 against 35.4 µs, the same 103 MB in the same 392 programs of 64 tiles; the same SASS loop, read
# offline in session 44). (1) Nsight Compute of both, C = 256 forced onto the rows kernel; (2) training forward, graph
# replays, of the rows kernel at C = 256 cut in 64 / 128 channel blocks against its 256-lane tiles and the tile kernel
# (the default there); (3) the two autograd tests mended after call 1 (torch's references on the CPU).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
mkdir -p $OUT
ROWS='BN_STATS_ROWS={"min_numel": 1048576, "block": 2048, "warps": 4, "per_sm": 3, "stages": 4, "steps": 16, "channels": ((64, 1024),)}'
M=dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,smsp__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active
for c in cl56 cl28; do
  timeout 100 ncu --kernel-name regex:_bn_stats_rows_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --metrics $M \
    python benchmarks/scripts/ncu_bn_stats.py $c "$ROWS" > $OUT/ncu_$c.txt 2>&1
  grep -E "Duration|DRAM Throughput|dram__bytes_read|lts__t_sectors_src|lts__t_requests|hit_rate|Stall Long|Warp Cycles Per Issued|Grid Size|Achieved Occ" $OUT/ncu_$c.txt | head -14
done
BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128)" timeout 300 \
  python benchmarks/scripts/bn_ab.py --graph --ops train_fwd --rounds 2 src "src@$ROWS" "src@$ROWS;BN_ROWS_WIDTH_MAX=128" \
  "src@$ROWS;BN_ROWS_WIDTH_MAX=64" > $OUT/bn_ab.txt 2>&1
tail -22 $OUT/bn_ab.txt
timeout 100 python -m pytest -q -p no:cacheprovider -n 4 --timeout 80 tests \
  -k "test_forward_over_reverse_matches_torch or test_vectorized_jacobian_matches_torch" 2>&1 | tail -2
