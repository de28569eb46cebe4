# Session 33, call 10 (one GPU): checks of this session's changes on CUDA. (1) The BatchNorm tests of the merge
# paths (2580418's prefetched merge loops: statistics, sums, the single-read forward); (2) the norm forward's new
# N = 65536 entry (and RMSNorm's 40000, which takes it by the fallback) against the float64 reference, forward and
# backward (tests/test_layer_norm.py's _check_all; calls 8-9 had the split-rows test cut by its timeout); (3) rows of
# 40000 (the 49152 key) timed: LN's entry and RMS's fallback against the new config and the held whole row.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 180 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py -k "merge or level or sums or stats or resident or single or graph or backward" \
  > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
PYTHONPATH=src timeout 150 python - <<'PY'
import sys, torch
sys.path.insert(0, "tests")
import test_layer_norm as T
from fastnorm.kernels import config as C
for is_rms, m, n in ((False, 500, 65536), (True, 1000, 65536), (False, 131, 65536), (True, 700, 40000),
                     (False, 333, 40000)):
    seed = m + n
    x = T._rand((m, n), torch.bfloat16, "cuda", seed, offset=0.5)
    w = T._rand((n,), torch.bfloat16, "cuda", seed + 1, offset=1.0)
    b = None if is_rms else T._rand((n,), torch.bfloat16, "cuda", seed + 2)
    dy = T._rand((m, n), torch.bfloat16, "cuda", seed + 3)
    T._check_all(is_rms, x, n, w, b, 1e-5, dy)
    print("ok", "RMS" if is_rms else "LN", m, n, C.norm_fwd_config(n, 2, 0, is_rms))
PY
PYTHONPATH=src timeout 200 python -c "
import sys; sys.path.insert(0, 'benchmarks/scripts')
import tune_norms as T; T.ELEMS_CAP = 1 << 33
import norm_configs_ab as A
sys.argv = ['norm_configs_ab.py', '--fwd', '--passes', '3', '--ns', '40000', '--rms-ns', '40000', '--rows', '49152',
            '--configs', 'NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=8); '
            'NormConfig(1, 4096, True, 16, 1, 0, evict=True, unroll=8); '
            'NormConfig(1, 65536, False, 32, 1, 0, hold_loaded=True)']
A.main()" 2>&1 | tail -10
