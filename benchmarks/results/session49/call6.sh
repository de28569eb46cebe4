# Session 49, call 6 (one H200, the last device seconds): why more resident warps lost at 256 (call 2). Nsight Compute
# of the third backward's row kernel, (49152, 256) bf16: RMS entry (32 x 256 w16, 1 an SM, 86 registers) against a
# (the same tiles at 64 registers, 2 an SM); LN entry against b (16 x 256 w16 at 64, 2 an SM). Tree ab/mr (call 2's).
export PYTHONUNBUFFERED=1
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem'
prof() {  # tag op MR NT
  echo "== $1"
  (cd ab/mr && MR=$3 NT="$4" PYTHONPATH=src timeout 55 ncu --kernel-name regex:_norm_bwd_kernel --launch-skip 2 \
    --launch-count 1 --metrics "$M" python ncu_norm_bwd.py $2 256 2>&1 \
    | grep -E "gpu__time|dram__|inst_executed|stalled|warps_active|bank|hit_rate|issue_active|occupancy" \
    | awk '$NF+0 > 0.1 || /gpu__|dram|inst|warps|bank|hit|issue|occ/' \
    | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr -s ' ')
}
prof "rms base" rms 0 "{}"
prof "rms a (64 regs, 2 an SM)" rms 64 "{('bwd',True,256): (32,256,False,16,3,2)}"
prof "ln base" ln 0 "{}"
prof "ln b (16 x 256, 64 regs, 2 an SM)" ln 64 "{('bwd',False,256): (16,256,False,16,3,2)}"
