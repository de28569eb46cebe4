# Session 40, call 1 (one GPU): session 39's prepared next_call.sh, timeouts trimmed to fit one call, plus the scalar
# split config at 8193 (explicit; RMS bwd 8193 reads 30 against torch's 31, session 39 call 4). ab/base is
# `git archive 2306196 src benchmarks/scripts` (before the scalar rows). Expect (session 39 calls 8-9, explicit
# configs): LN bwd 16385 23.6 -> 34.6, 24577 26.2 -> 35.1, 32769 26.4 -> 32.9, 40001 31.3 -> 34.7; RMS 27.6 -> 35.3,
# 28.5 -> 34.9, 29.5 -> 35.1; 65535 unchanged.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for tree in base src base src; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 75 python $P/benchmarks/scripts/norm_configs_ab.py --current --ns 16385,24577,32769,40001,65535 --rms-ns 16385,24577,32769,65535 --dtype bfloat16 --passes 1 > $OUT/bwd_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_$tree.log | cut -c1-100
done
S="split=True, early_loads=True"
CF="NormConfig(1, 2048, False, 8, 1, 2 * sms, $S);NormConfig(1, 1024, False, 4, 1, 4 * sms, $S)"
PYTHONPATH=src timeout 60 python benchmarks/scripts/norm_configs_ab.py --configs "$CF" --ns 8193,12289 --rms-ns 8193,12289 --dtype bfloat16 --passes 1 > $OUT/bwd_8193.log 2>&1
echo "== 8193 (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/bwd_8193.log | cut -c1-100
PYTHONPATH=src timeout 170 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or scalar_rows or split" > $OUT/tests.log 2>&1; echo "== tests (rc $?)"; tail -2 $OUT/tests.log
