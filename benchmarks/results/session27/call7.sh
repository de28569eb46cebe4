# Session 27, call 7 (one GPU): call 6's one CUDA failure, test_aligned_rows_against_reference[4096-bf16-16x768x17x17]
# (passed on an H100 in session 26, passes in the interpreter with 132 SMs): its message, with and without the
# evict_last tails (BN_KEEP_BYTES), on the current code and on the code before session 26's final-read mend (ab/pre).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
T='tests/test_batch_norm.py::test_aligned_rows_against_reference[4096-dtype0-shape8]'
for spec in src ab/pre/src; do for keep in default 0; do
  echo "=== $spec keep=$keep"
  PYTHONPATH=$spec KEEP=$keep timeout 100 python -c "
import os, sys, pytest
from fastnorm.kernels import config
if os.environ['KEEP'] == '0': config.BN_KEEP_BYTES = 0
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-x', '$T']))" 2>&1 | grep -E "^E |passed|failed" | head -14
done; done
