# Session 31, call 7 (one GPU): the graph test with its own bug fixed (monkeypatch.setitem on a list); bn_ab's src
# on one case, graph mode, to see why call 5's src child failed (its message was cut off).
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 100 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "cuda_graph" 2>&1 \
  | grep -v Warning | grep -E "Error|error|assert|^E |FAILED|passed|failed" | head -20
BN_VARIANT_CASES='bf16 NCHW (32, 256, 14' timeout 150 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 120 \
  --ops stats,train_fwd,train_bwd,frozen_params src 2>&1 | head -60
