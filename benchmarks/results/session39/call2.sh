# Session 39, call 2 (one GPU). Call 1 confirmed branch exact-entries through the library (H200: LN 26000 57.1 ->
# 66.6, 28000 58.5 -> 69.2, 65536 73.5 -> 83.7, RMS 65536 83.7 -> 88.3; 30000 72.2 -> 71.7, the rest unchanged), but
# its CUDA test run passed the 240 s limit at 85% (all dots). Now: (1) branch matched-unroll's flag by explicit
# configs (session 38's prepared call, fewer rows): expect a gain where the rows' whole chunks are fewer than the
# unroll (LN 24577-32767, 49153-65535), none at 32768 / 65536; (2) exact-entries' CUDA tests of what it touches
# (ab/exact), with the large test now at 26000 / 32768 / 65536; (3) matched-unroll's own test on the GPU.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
M="match_unroll=True"
G="NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=8, params_l2_only=True"
CF="NormConfig(1, 4096, True, 16, $E, unroll=8);NormConfig(1, 4096, True, 16, $E, unroll=8, $M)"
CF="$CF;NormConfig(1, 4096, True, 16, $E, unroll=8, x_l2_only=True, $M);$G);$G, $M)"
CF="$CF;NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=6, params_l2_only=True, $M)"
PYTHONPATH=src timeout 320 python $A --fwd --configs "$CF" --ns 26000,30000,32768,45000,49152,60000,65536 --rms-ns 26000,49152,60000 --dtype bfloat16 --passes 2 > $OUT/match.log 2>&1
echo "== match_unroll (rc $?)"; grep -hE "^  (LN|RMS|skip)|^(LN|RMS) " $OUT/match.log | cut -c1-110
(cd ab/exact && PYTHONPATH=src timeout 150 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py -k "large_gpu or exact or x_l2 or looped or split_rows_gpu or device_entries" > $OUT/tests_exact.log 2>&1; echo "== exact tests (rc $?)"; tail -2 $OUT/tests_exact.log)
PYTHONPATH=src timeout 90 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py -k "match_unroll" > $OUT/tests_match.log 2>&1; echo "== match tests (rc $?)"; tail -2 $OUT/tests_match.log
