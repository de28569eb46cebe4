# Session 47, call 9 (one H200, the session's last device seconds): why the LayerNorm backward at N = 256 reads 45% of
# copy in the suite (target 50) where RMSNorm's reads 53: Nsight Compute of the third backward's two launches (the row
# kernel and the partial sums), (49152, 256) bf16, stall reasons per issued instruction, for the next session.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active'
for op in ln rms; do
  echo "== $op 256"
  timeout 80 ncu --kernel-name regex:"_norm_bwd_kernel|_sum_partials_kernel" --launch-skip 4 --launch-count 2 \
    --metrics "$M" python benchmarks/scripts/ncu_norm_bwd.py $op 256 2>&1 \
    | grep -E "_kernel|gpu__time|dram__|inst_executed|stalled|launch__|warps_active" | awk '$NF+0 > 0.1 || /_kernel|gpu__|dram|inst|launch|warps/' \
    | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr -s ' '
done
