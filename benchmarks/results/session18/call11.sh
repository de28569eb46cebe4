# Session 18, call 11 (H100): the forward sweep (tune_norms.fwd_variants) where the H100 suites found our forward
# trailing Liger (bf16 RMS 2048, 3072, 8192, 32768; LN 1024, 4096): does the H100 want other entries than the
# H200's tables?
export PYTHONUNBUFFERED=1 PYTHONPATH=src
nvidia-smi --query-gpu=name --format=csv,noheader
python benchmarks/scripts/norm_configs_ab.py --fwd --ns 1024,4096 --rms-ns 2048,3072,8192,32768 --deadline 330 > $OUT/c11_fwd_sweep.log 2>&1
grep -A14 "== summary" $OUT/c11_fwd_sweep.log
