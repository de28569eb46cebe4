#!/usr/bin/env bash
# The main job (README's first command): install fastnorm, then prove on this machine that it is right (and,
# on a GPU, how fast it is): `fastnorm report --out report`, writing report/report.md, plots and JSON.
#   bash scripts/main.sh            # full: up to ~30 minutes on one H100/H200; a few minutes on a CPU
#   bash scripts/main.sh --quick    # a few minutes anywhere
# Extra arguments go to `fastnorm report`.
# On a machine without an NVIDIA GPU it first installs torch==2.13.0, the CPU build, if torch is missing (so
# nothing later pulls a CUDA build), and runs the check with TRITON_INTERPRET=1: the Triton kernels themselves
# run through Triton's interpreter (which needs numpy<2.4). There are no benchmarks without a GPU; the report
# points to the committed GPU results in benchmarks/report/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    GPU=1
else
    GPU=0
fi

if [ "$GPU" = 0 ]; then
    "$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q torch==2.13.0
    # numpy<2.4: triton 3.6's interpreter fails on loops with a run-time bound under NumPy 2.4.
    "$PY" -m pip install -q -e . "numpy<2.4"
    export TRITON_INTERPRET=1
    echo "== No NVIDIA GPU found: fastnorm's correctness check runs its Triton kernels through Triton's"
    echo "   interpreter on the CPU (TRITON_INTERPRET=1). Benchmarks need a GPU and are not run here;"
    echo "   the report points to the committed GPU results (benchmarks/report/report.md)."
else
    "$PY" -m pip install -q -e .
fi

exec "$PY" -m fastnorm report --out report "$@"
