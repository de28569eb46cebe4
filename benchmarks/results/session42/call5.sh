# Session 42, call 5 (tree e5990fd): the backward's split rows past 16384 (LN 17408-20480 at 51-58% of copy beside
# the peers, call 4: pieces of 8192 leave one program of three nearly idle at 17408). The whole split sweep
# (tune_norms.split_variants), kernels only, GPU time; LN and RMS.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 280 python $A --split --ns 17408,18432,20480,24576 --rms-ns 17408,20480 --dtype bfloat16 --passes 1 --deadline 230 > $OUT/split.log 2>&1
echo "== split (rc $?)"; sed -n '/== summary/,$p' $OUT/split.log
