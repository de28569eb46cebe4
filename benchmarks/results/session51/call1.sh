# Session 51, call 1 (one H200): the LayerNorm suite of `fastnorm report` on main at 54bce8e (equal pieces and the
# backward's column sums through scratch, unmeasured as a whole since session 49's report). --skip-check: the
# check ran in session 49; the CUDA tests run in call 2.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 540 bash benchmarks/scripts/gpu_report.sh layernorm --skip-check
echo "== report rc $? (${SECONDS}s)"
