# Session 17, call 7: with the pair-read row shift (K_PAIR) the prefetched whole-row configs may now win where the
# tables keep unprefetched ones: the backward sweep (tune_norms.bwd_variants) for bf16 LayerNorm at 1024, 5120,
# 12288, 16384 (kernels only, one pass).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
python benchmarks/scripts/norm_configs_ab.py --all --ns 1024,5120,12288,16384 --rms-ns "" --deadline 400 > $OUT/bwd_sweep_ln_bf16.log 2>&1
grep -A8 "== summary" $OUT/bwd_sweep_ln_bf16.log
for n in 1024 5120 12288 16384; do echo "-- $n top 5"; grep "LN bwd N=$n " $OUT/bwd_sweep_ln_bf16.log | sort -t% -k1,1 | awk '{for(i=1;i<=NF;i++) if ($i ~ /%$/) print $i, $0}' | sort -rn | head -5 | cut -c1-110; done
