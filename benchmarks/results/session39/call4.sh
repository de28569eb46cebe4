# Session 39, call 4 (one GPU). Rows whose length is odd (not 16-byte aligned in bf16) take scalar loads: LN forward
# 24577 23.8%, 49151 23.4%, 16385 28% (calls 1 and 3; session 38). Are the peers faster there? The suites at odd N
# (fastnorm, torch, Liger, copy; bf16; forward and backward), then explicit forward configs at 16385 / 24577 / 49151
# (unrolled chunks against one chunk a round, narrower programs, the whole row), and the backward's current configs.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python -m pip install -q --no-index --no-deps .whl/*.whl
S=4097,8193,16385,24577,32769,49151
for op in layernorm rmsnorm; do
  PYTHONPATH=src timeout 150 python -m fastnorm.bench $op --shapes $S --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/bench_$op > $OUT/bench_$op.log 2>&1
  echo "== $op (rc $?)"; grep -E "^\|" $OUT/bench_$op.log | cut -c1-230 | head -40
done
A=benchmarks/scripts/norm_configs_ab.py
E="evict=True"
CF="NormConfig(1, 32768, False, 32);NormConfig(1, 32768, False, 16);NormConfig(1, 4096, True, 16, $E, unroll=1)"
CF="$CF;NormConfig(1, 2048, True, 8, $E, unroll=2);NormConfig(1, 1024, True, 4, $E, unroll=4);NormConfig(1, 4096, True, 16, $E, unroll=8)"
PYTHONPATH=src timeout 200 python $A --fwd --configs "$CF" --ns 16385,24577,49151 --rms-ns 24577,49151 --dtype bfloat16 --passes 1 > $OUT/odd_fwd.log 2>&1
echo "== odd fwd configs (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_fwd.log | cut -c1-110
PYTHONPATH=src timeout 80 python $A --current --ns 16384,16385,24576,24577 --rms-ns 24576,24577 --dtype bfloat16 --passes 1 > $OUT/odd_bwd.log 2>&1
echo "== odd bwd current (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/odd_bwd.log | cut -c1-110
