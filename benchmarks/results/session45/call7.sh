# Session 45, call 7 (one H200, the session's last device seconds): Nsight Compute stall reasons of the channels-last
# training backward's sums pass (_bn_bwd_fused_kernel, 79% of copy on its 206 MB in call 6) against the NCHW one
# (_bn_bwd_frozen_flat_kernel, 90%), bf16 256×64×56² and 256×256×28².
export PYTHONUNBUFFERED=1 PYTHONPATH=src
cat > /tmp/bwd.py <<'PY'
import sys, torch, fastnorm
shape, cl = eval(sys.argv[1]), sys.argv[2] == "cl"
x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
x = x.contiguous(memory_format=torch.channels_last) if cl else x
x.requires_grad_(True)
c = shape[1]
w, b = torch.ones(c, device="cuda", requires_grad=True), torch.zeros(c, device="cuda", requires_grad=True)
dy = torch.randn_like(x)
for _ in range(3):
    fastnorm.batch_norm(x, None, None, w, b, training=True).backward(dy)
torch.cuda.synchronize()
PY
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread'
for v in "(256,64,56,56) cl _bn_bwd_fused_kernel" "(256,256,28,28) cl _bn_bwd_fused_kernel" "(256,256,28,28) nchw _bn_bwd_frozen_flat_kernel"; do
  set -- $v
  echo "== $v"
  timeout 60 ncu --kernel-name regex:$3 --launch-skip 2 --launch-count 1 --metrics "$M" python /tmp/bwd.py "$1" $2 2>&1 \
    | grep -E "gpu__time|dram__|inst_executed|stalled|launch__" | awk '$NF+0 > 0.1 || /gpu__|dram|inst|launch/' \
    | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr -s ' '
done
