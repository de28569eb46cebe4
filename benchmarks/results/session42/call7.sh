# Session 42, call 7 (same tree as call 6): call 6's dynamic-shape backward at 8448 took 5.8 ms with the scalar rows'
# config (8192 + 256, w8, 3 stages, the weight re-read: what a traced odd row of 8193-8704 takes) against 0.46 with
# 8192 + 2048. (1) That config in the A/B, kernels only, on aligned (8448) and odd (8449) rows. (2) Traced, static
# shapes: torch.compile LayerNorm forward+backward at odd N (the backward unsplit: NORM_BWD_SCALAR_ROWS_UNSPLIT or
# the tables) against eager, GPU time, bf16, 16384 rows.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
PYTHONPATH=src timeout 90 python $A --ns 8448,8449 --rms-ns 8449 --dtype bfloat16 --passes 1 --configs "NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=256);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=512);NormConfig(1, 8192, False, 8, 3, sms, True, block_n2=2048);NormConfig(1, 8192, False, 16, 3, sms, True, block_n2=512)" > $OUT/ab.log 2>&1
echo "== A/B (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/ab.log | cut -c1-110
PYTHONPATH=src timeout 300 python - > $OUT/traced.log 2>&1 <<'PY'
import torch, triton
import fastnorm
torch.manual_seed(0)
print("N      norm  eager fwd+bwd us   compiled fwd+bwd us   torch.compile(torch) us")
for n in (4353, 6145, 8193, 8449, 9001, 10241, 12289):
    for rms in (False, True):
        x = torch.randn(16384, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        b = None if rms else torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        ps = (x, w) if rms else (x, w, b)
        dy = torch.randn_like(x)
        if rms:
            ours = lambda x, w, b: fastnorm.rms_norm(x, (n,), w, 1e-6)
            theirs = lambda x, w, b: torch.nn.functional.rms_norm(x, (n,), w, 1e-6)
        else:
            ours = lambda x, w, b: fastnorm.layer_norm(x, (n,), w, b)
            theirs = lambda x, w, b: torch.nn.functional.layer_norm(x, (n,), w, b)
        torch._dynamo.reset()
        fc, tc = torch.compile(ours), torch.compile(theirs)
        t = []
        for f in (ours, fc, tc):
            f(x, w, b)
            t.append(triton.testing.do_bench(lambda: torch.autograd.grad(f(x, w, b), ps, dy), rep=50) * 1e3)
        print(f"{n:6d} {'RMS' if rms else 'LN ':4s} {t[0]:12.1f} {t[1]:18.1f} {t[2]:18.1f}", flush=True)
PY
echo "== traced (rc $?)"; tail -16 $OUT/traced.log
