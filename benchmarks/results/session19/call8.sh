# Session 19, calls 8-11 (H200, warm): torch.compile's bf16 LayerNorm forward at N = 16384 against variants of itself
# (run-time N / stride, fastnorm's row shift) and fastnorm's kernels; the script grew between the four runs
# (ln_inductor_variants_h200.log keeps each run's table).
PYTHONPATH=src timeout 300 python benchmarks/scripts/ln_inductor_variants.py 2>&1 | tail -14
