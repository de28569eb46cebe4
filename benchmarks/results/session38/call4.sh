# Session 38, call 4 (one GPU). Call 3 again: its tree runs failed (the kernel's new constexpr had a default, which
# the launcher refuses; now passed from the host). Call 3's base run also showed LN forward at 20000 / 24000 (the
# 32768 entry: 4096-column chunks unrolled 8) reading 57-59% where RMS reads 92-96: rows of fewer than 8 chunks never
# enter the unrolled loop body, only its remainder, one chunk at a time. Configs there: unroll matched to the chunks,
# smaller chunks.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src rmspeel; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 100 python $A --current --fwd --ns 20000,24000,32768,33000,40000,45000,49152 --rms-ns 20000,24000,40000,45000,49152 --dtype bfloat16 --passes 2 > $OUT/peel_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/peel_$tree.log | cut -c1-100
done
E="evict=True"
CF="NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=4);NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=5)"
CF="$CF;NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=6);NormConfig(1, 2048, True, 16, 1, 0, $E, unroll=8)"
CF="$CF;NormConfig(1, 2048, True, 8, 1, 0, $E, unroll=8);NormConfig(1, 8192, True, 16, 1, 0, $E, unroll=2)"
CF="$CF;NormConfig(1, 4096, True, 16, 1, 0, $E, unroll=4, params_l2_only=True)"
PYTHONPATH=src timeout 150 python $A --fwd --configs "$CF" --ns 20000,24000,28000 --rms-ns 20000 --dtype bfloat16 --passes 2 > $OUT/unroll.log 2>&1
echo "== unroll matched (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/unroll.log | cut -c1-100
G="NormConfig(1, 8192, True, 32, 1, sms, $E, unroll=8, params_l2_only=True)"
PYTHONPATH=src timeout 100 python $A --fwd --configs "$G" --ns 57344,60000,61440,65536 --rms-ns 60000,65536 --dtype bfloat16 --passes 2 > $OUT/grid_peel.log 2>&1
echo "== grid with the peel (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/grid_peel.log | cut -c1-100
