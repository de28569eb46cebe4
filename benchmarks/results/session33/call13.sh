# Session 33, call 13 (one GPU): RMSNorm's new 49152-key forward entry (8573c4f: 32768's looped rows) against the
# float64 reference on CUDA, forward and backward (call 10 ran 40000 under the entry since reverted).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 150 python - <<'PY'
import sys, torch
sys.path.insert(0, "tests")
import test_layer_norm as T
from fastnorm.kernels import config as C
for is_rms, m, n in ((True, 700, 40000), (True, 257, 45001), (True, 133, 49152), (False, 300, 45001)):
    seed = m + n
    x = T._rand((m, n), torch.bfloat16, "cuda", seed, offset=0.5)
    w = T._rand((n,), torch.bfloat16, "cuda", seed + 1, offset=1.0)
    b = None if is_rms else T._rand((n,), torch.bfloat16, "cuda", seed + 2)
    dy = T._rand((m, n), torch.bfloat16, "cuda", seed + 3)
    T._check_all(is_rms, x, n, w, b, 1e-5, dy)
    print("ok", "RMS" if is_rms else "LN", m, n, C.norm_fwd_config(n, 2, 0, is_rms))
PY
