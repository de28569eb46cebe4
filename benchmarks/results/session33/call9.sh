# Session 33, call 9 (one GPU): call 8's suite read the new N = 65536 LayerNorm forward at 75.3% of copy in GPU time
# (RMS 87.5) where the kernels-only A/B of call 7 read 79.8 (RMS 87.3): the same shape timed both ways in one
# process — the kernel launched with the config directly, and the public op with gradients on (the suite's forward) —
# eager (flushed) and graph-replayed, new entry against the old held whole row. And the CUDA test that call 8's
# timeout cut (the forward at 65536 and 40000 against the float64 reference, inside the split-rows test).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 200 python - <<'PY'
import torch, triton
import fastnorm
from fastnorm.kernels import config as C, layer_norm as K
m, n = 49152, 65536
copy = 4242e9
for is_rms in (False, True):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, n, dtype=torch.bfloat16, device="cuda", generator=g).requires_grad_(True)
    w = (1 + 0.1 * torch.randn(n, device="cuda", generator=g)).to(torch.bfloat16).requires_grad_(True)
    b = None if is_rms else (0.1 * torch.randn(n, device="cuda", generator=g)).to(torch.bfloat16).requires_grad_(True)
    new = C.norm_fwd_config(n, 2, 0, is_rms)
    old = C.NormConfig(1, 65536, False, 32, 1, 0, hold_loaded=True)
    byt = 2 * m * n * 2
    ops = {"kernel new": lambda: K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True, config=new),
           "kernel old": lambda: K.norm_fwd(x, w, b, None, 1e-5, 0.0, is_rms, None, True, config=old),
           "op (tables)": (lambda: fastnorm.rms_norm(x, (n,), w)) if is_rms else (lambda: fastnorm.layer_norm(x, (n,), w, b))}
    print("RMS" if is_rms else "LN", "table entry:", new)
    for name, fn in ops.items():
        fn(); torch.cuda.synchronize()
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
            gr = torch.cuda.CUDAGraph()
            with torch.cuda.graph(gr, stream=s):
                fn()
        torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
        for _ in range(2):
            e = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
            gt = triton.testing.do_bench(gr.replay, warmup=25, rep=100, return_mode="median")
            print(f"  {name:12s} eager {e*1e3:7.1f} us {byt/(e*1e-3)/copy*100:5.1f}%   graph {gt*1e3:7.1f} us {byt/(gt*1e-3)/copy*100:5.1f}%")
        del gr
PY
PYTHONPATH=src timeout 250 python -m pytest -q -p no:cacheprovider -n 4 --timeout 240 -rf tests/test_layer_norm.py \
  -k "split_rows_gpu" 2>&1 | tail -2
