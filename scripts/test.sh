#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, then runs the suite.
# On a machine without an NVIDIA GPU it first installs torch==2.13.0, the CPU build, so that nothing
# later pulls a CUDA build; the Triton kernels are then tested through Triton's interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! (command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1); then
    "$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q torch==2.13.0
    # The GPU machine's Triton: the sm_90 compile gate then sees the layouts its compiler chooses (triton 3.9 chose
    # differently where 3.6 converted BatchNorm tiles through shared memory, session 25). A CPU build of torch does
    # not depend on triton, so this pins nothing torch needs.
    "$PY" -m pip install -q triton==3.6.0
fi
"$PY" -m pip install -q -e ".[test]"

# Exit status 5 (no tests collected) is a failure like any other non-zero status.
exec "$PY" -m pytest -n "${FASTNORM_TEST_WORKERS:-2}" "$@"
