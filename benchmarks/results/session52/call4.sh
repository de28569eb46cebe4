# Session 52, call 4 (one H200). Call 3's GPU tests: test_one_round_statistics failed in all 15 cases (the tail
# showed no assertion). Offline, its one-round variance clamp max(E[d²] - E[d]², 0) compiled to FMNMX, which returns
# the non-NaN operand: a NaN row got var 0 and a finite rstd on the GPU (NumPy's maximum, in the interpreter,
# propagates). Now FMNMX.NAN (propagate_nan=ALL). This call: those tests again (the failures' lines in full), then
# the LayerNorm suite of the report on this tree (the session 51-52 entries: LN forward 256, 1024, 16384, 32768).
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 150 python -m pytest -q -p no:cacheprovider -rf tests/test_layer_norm.py -k "one_round or register_cap" 2>&1 \
  | grep -E "passed|failed|^E |^FAILED" | head -30
timeout 380 bash benchmarks/scripts/gpu_report.sh layernorm --skip-check
echo "== report rc $? (${SECONDS}s)"
