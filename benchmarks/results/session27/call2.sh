# Session 27, call 2 (one GPU): call 1's suite lost every record after one failed capture of fastnorm's BatchNorm
# training backward; the capture alone, variant by variant, with the first error's traceback.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 300 python benchmarks/results/session27/capture_diag.py 2>&1 | grep -v Warning | tail -120
