# Session 23, call 1 (one GPU): the NCHW statistics pass over 16-bit x in odd runs (S odd: scalar loads cp.async
# cannot stage, so the tile loop was not pipelined). bn_ab --graph, training forward and backward, odd sizes with a
# p = 16 control: [0] HEAD; [1] the statistics tile loaded one tile ahead in registers (stats_narrow stages 0);
# [2] the same without the 64-register cap; [3] 4 statistics items per SM for NCHW runs (H100 table's 2 removed);
# [4] [3] + [1]; [5] 4 sums items per SM (the backward's first pass).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);bf16 NCHW (256, 64, 56, 56)"
ST='BN_LOOP_STAGES={"stats": 3, "stats_narrow": 0, "apply": 4, "apply_row32": 2, "bwd": 3, "dx": 3}'
NR='BN_MAXNREG={"stats": 64, "stats_narrow": None, "apply": None, "apply_row32": None, "bwd": None, "dx": None}'
W4='BN_STATS_WAVE_BY_DEVICE={"H100 80GB HBM3": {"flat": 2}}'
PYTHONPATH=src timeout 560 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd \
  'src' "src@$ST" "src@$ST;$NR" "src@$W4" "src@$W4;$ST" 'src@BN_SUMS_WAVE=4' > $OUT/odd_stats_ab.log 2>&1
tail -14 $OUT/odd_stats_ab.log
