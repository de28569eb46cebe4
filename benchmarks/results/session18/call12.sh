# Session 18, call 12 (H100): the H100's own entries (NORM_TUNED_H100) as the tables now pick them (--configs'
# current row), against the H200's entries they replace, at their keys and at rows that reach them by fallback:
# RMS forward 8192 and 7000 (key 8192), 32768 and 20000 (key 24576, no entry: 32768's whole row, 61% filled).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
nvidia-smi --query-gpu=name --format=csv,noheader
python benchmarks/scripts/norm_configs_ab.py --fwd --configs "NormConfig(1,2048,True,8,1,0,evict=True,unroll=4);NormConfig(1,4096,True,16,1,0,evict=True,unroll=8)" --ns "" --rms-ns 7000,8192,20000,32768 --passes 2 > $OUT/c12_h100_entries.log 2>&1
grep -E "^device|^  (LN|RMS|skip)" $OUT/c12_h100_entries.log | cut -c1-150
