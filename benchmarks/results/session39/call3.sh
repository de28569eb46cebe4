# Session 39, call 3 (one GPU). Call 2: matched-unroll (a flag) is mixed (LN 26000 whole row 66.5 -> 69.5 with x
# L2-only, 30000 72.8 -> 66.0; persistent 8192 x w32: 49152 59.3 -> 77.1, 60000 57.9 -> 69.7): not merged. At exactly
# 49152 the persistent grid unrolled 6 has trip count = unroll without the flag: now a NORM_TUNED_EXACT entry on
# exact-entries (ab/exact). Verify it through the library against main (ab/base), and by explicit configs; then
# exact-entries' CUDA tests of what it touches (call 2's ran past 150 s: the large test is now parametrized).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=$PWD/benchmarks/scripts/norm_configs_ab.py
for tree in base exact base exact; do
  PYTHONPATH=ab/$tree/src timeout 60 python $A --current --fwd --ns 45000,49151,49152 --rms-ns 49152 --dtype bfloat16 --passes 1 > $OUT/cur_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/cur_$tree.log | cut -c1-96
done
E="evict=True"
CF="NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=6, params_l2_only=True);NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=6)"
CF="$CF;NormConfig(1, 8192, True, 16, 1, 2 * sms, $E, unroll=6, params_l2_only=True);NormConfig(1, 16384, True, 32, 1, sms, $E, unroll=3, params_l2_only=True)"
PYTHONPATH=ab/exact/src timeout 150 python $A --fwd --configs "$CF" --ns 49152 --rms-ns 49152 --dtype bfloat16 --passes 2 > $OUT/cfg49152.log 2>&1
echo "== configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/cfg49152.log | cut -c1-110
cd ab/exact && PYTHONPATH=src timeout 300 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or exact or x_l2 or looped or device_entries" > $OUT/tests_exact.log 2>&1; echo "== exact tests (rc $?)"; tail -3 $OUT/tests_exact.log
