# Session 25, call 5 (one GPU): the LayerNorm backward's loop instructions (offline sm_90, bf16 16384: 1035 per 32
# elements a thread). Experiment tree ab/lnexp/src: (a) the weight offset's add dropped (as a constexpr for offset 0
# would), 1035 -> 967; (b) with held loads, dx formed straight from them (dy·(w·rstd) - (x - k)·q + C), -> 936.
# Kernels only, current configs, HEAD (ab/base/src) against the experiment; then its CUDA LN tests (hold_loaded).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
A=benchmarks/scripts/norm_configs_ab.py
for tree in base lnexp base lnexp; do
  PYTHONPATH=ab/$tree/src timeout 80 python $A --current --ns 8192,12288,16384,32768 --rms-ns 16384 --dtype bfloat16 --passes 2 > $OUT/c5_${tree}.log 2>&1
  echo "== $tree"; grep -E "^  (LN|RMS|skip)" $OUT/c5_${tree}.log | cut -c1-110
done
PYTHONPATH=ab/lnexp/src timeout 90 python -m pytest -q -p no:cacheprovider -n 8 --timeout 80 tests/test_layer_norm.py -k "hold or 16384 or offset" 2>&1 | tail -2
