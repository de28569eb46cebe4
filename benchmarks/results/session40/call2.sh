# Session 40, call 2 (one GPU). Call 1 found LN bwd at N = 12289 at 9.1% of copy: the 16384 key's whole row read one
# element a load spills 232 bytes, and session 39's odd-N sweep (call 4: 4097, 8193, 16385, ...) had no row of that
# key. The peers side by side at odd N not yet measured (one of each key's range below 16385, and 65535), forward and
# backward; then explicit configs in the 16384 key's range: the forward's scalar rows (1024 x w8 u4) and a wider
# chunk; the backward's scalar split rows (2048 x w8, 2/SM) and 1024 x w4, 4/SM (call 1: RMS 8193 29.6 -> 37.8).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install -q --no-index --no-deps .whl/*.whl
S=769,1537,3073,6145,12289,16383,65535
for op in layernorm rmsnorm; do
  PYTHONPATH=src timeout 140 python -m fastnorm.bench $op --shapes $S --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/bench_$op > $OUT/bench_$op.log 2>&1
  echo "== $op (rc $?)"; grep -E "^\|" $OUT/bench_$op.log | cut -c1-230 | head -40
done
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 1024, True, 8, $E, unroll=4);NormConfig(1, 2048, True, 8, $E, unroll=4)"
PYTHONPATH=src timeout 80 python $A --fwd --configs "$CF" --ns 12289,14337,16383 --rms-ns 12289,16383 --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-110
S2="split=True, early_loads=True"
CF="NormConfig(1, 2048, False, 8, 1, 2 * sms, $S2);NormConfig(1, 1024, False, 4, 1, 4 * sms, $S2)"
PYTHONPATH=src timeout 80 python $A --configs "$CF" --ns 14337,16383,6145 --rms-ns 14337,16383,6145 --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-110
