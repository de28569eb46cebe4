# Session 38, call 6 (one GPU). The tree adds LayerNorm's and RMSNorm's forward entries for the 24576 key (rows of
# 16385-24576 as 16384 + next_pow2(N - 16384) columns, x held as loaded; call 5 measured them with a second piece of
# 8192 at every N). HEAD (ab/base) against the tree through the library's own configs, bf16 and fp16; then the GPU
# tests of the rows the entry serves (two pieces, held loads, the large eager cases, the device entries).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
NS=16385,16400,17000,18432,20000,20480,22000,23000,24576
for dt in bfloat16 float16; do
  [ $dt = float16 ] && NS=17000,20480,24576
  for tree in base src base src; do
    P=ab/$tree/src; [ $tree = src ] && P=src
    PYTHONPATH=$P timeout 60 python $A --current --fwd --ns $NS --rms-ns $NS --dtype $dt --passes 1 > $OUT/k24576_${dt}_$tree.log 2>&1
    echo "== $dt $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/k24576_${dt}_$tree.log | cut -c1-92
  done
done
PYTHONPATH=src timeout 300 python -m pytest -q -p no:cacheprovider -n 12 tests/test_layer_norm.py -k "large_gpu or two_piece or held or device_entries or tuned" 2>&1 | tail -3
