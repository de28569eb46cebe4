# Session 18, call 9: after the residual fallback (a fused residual at a hold_loaded forward entry takes the rules'
# chunks): the CUDA tests of hold_loaded, the residual and the config tables.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 200 python -m pytest -q tests/test_layer_norm.py -k "hold_loaded or residual or tables or config" > $OUT/c9_pytest.log 2>&1; tail -3 $OUT/c9_pytest.log
python - <<'PY'
import torch, fastnorm
for rms in (False, True):
    x = torch.randn(64, 65536, device="cuda", dtype=torch.bfloat16); r = torch.randn_like(x); w = torch.randn(65536, device="cuda", dtype=torch.bfloat16)
    f = (lambda *a, **k: fastnorm.rms_norm(*a, **k)) if rms else (lambda x, s, w, **k: fastnorm.layer_norm(x, s, w, None, **k))
    y, s = f(x, (65536,), w, residual=r)
    s64 = s.double()
    ref = (s64 * torch.rsqrt(s64.pow(2).mean(-1, keepdim=True) + torch.finfo(torch.bfloat16).eps) if rms else torch.nn.functional.layer_norm(s64, (65536,), eps=1e-5)) * w.double()
    print("rms" if rms else "ln", "residual 65536: max err", (y.double() - ref).abs().max().item())
PY
