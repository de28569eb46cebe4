# Session 42, call 8 (tree b0e4f55): call 7 found traced (torch.compile, static shapes)
# LayerNorm at odd N = 4353 slower than torch.compile's own (fwd+bwd 647 against 605 us; eager 366): traced, the
# backward cannot split, and the 6144 key's two pieces (4096 + 512, w4, 3 stages, 2 an SM) serve. The backward
# sweep (tune_norms.bwd_variants: no split rows) at odd rows of the 6144 key, and that traced config at 4353.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 60 python $A --ns 4353 --rms-ns "" --dtype bfloat16 --passes 1 --configs "NormConfig(1, 4096, False, 4, 3, 2 * sms, True, block_n2=512)" > $OUT/traced_cfg.log 2>&1
echo "== traced config (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/traced_cfg.log | cut -c1-110
PYTHONPATH=src timeout 240 python $A --all --ns 4353,5121,6143 --rms-ns "" --dtype bfloat16 --passes 1 --deadline 200 > $OUT/sweep.log 2>&1
echo "== sweep (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/sweep.log | cut -c10-85
sed -n '/== summary/,$p' $OUT/sweep.log
