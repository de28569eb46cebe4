# Session 47, call 3 (one H200): the small rows' forward where a peer leads in the suites' GPU time (RMS 128: Liger
# 51 against 47; RMS 256 and LN 256: torch.compile 67 / 64 against 64 / 62). Liger's form — one row a program, 4
# warps, one element a thread — lies outside tune_norms' forward sweep (tiles of at least 2048 elements there but
# the row's own): row tiles of 1-32 rows on 1-8 warps, kernels only, bf16, three interleaved passes.
export PYTHONPATH=src
CF="NormConfig(1, np2(n), False, 1);NormConfig(1, np2(n), False, 2);NormConfig(1, np2(n), False, 4);NormConfig(2, np2(n), False, 1);NormConfig(2, np2(n), False, 2);NormConfig(2, np2(n), False, 4);NormConfig(2, np2(n), False, 8);NormConfig(4, np2(n), False, 1);NormConfig(4, np2(n), False, 2);NormConfig(4, np2(n), False, 4);NormConfig(4, np2(n), False, 8);NormConfig(8, np2(n), False, 1);NormConfig(8, np2(n), False, 2);NormConfig(8, np2(n), False, 4);NormConfig(8, np2(n), False, 8);NormConfig(16, np2(n), False, 2);NormConfig(16, np2(n), False, 4);NormConfig(16, np2(n), False, 8);NormConfig(32, np2(n), False, 4);NormConfig(32, np2(n), False, 8)"
timeout 400 python benchmarks/scripts/norm_configs_ab.py --fwd --passes 3 --ns 256 --rms-ns 128,256 --configs "$CF"   > $OUT/small_fwd.txt 2>&1
grep -E "fwd" $OUT/small_fwd.txt | tail -80
