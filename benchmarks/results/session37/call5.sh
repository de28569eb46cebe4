# Session 37, call 5 (one GPU, ~230 s of device time left). The L2-only x of call 3, now a NormConfig flag
# (x_l2_only, X_CACHE ".cg" with no L1 hint on x's loads) set in LayerNorm's 49152 entry only. Its CUDA tests
# (the looped rows with the flag, the reference at 32769 = the 49152 key, the hard rows) and one A/B round,
# HEAD (ab/base/src) against the tree, at the key's rows.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 120 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py -k "looped or chunked or 32769 or 40000 or 45001 or hard_rows" 2>&1 | tail -3
A=benchmarks/scripts/norm_configs_ab.py
for tree in base src; do
  P=ab/$tree/src; [ $tree = src ] && P=src
  PYTHONPATH=$P timeout 45 python $A --current --fwd --ns 32769,40000,45000,49152 --rms-ns 40000 --dtype bfloat16 --passes 2 > $OUT/fwd_$tree.log 2>&1
  echo "== $tree"; grep -hE "^  (LN|RMS|skip)" $OUT/fwd_$tree.log | cut -c1-80
done
