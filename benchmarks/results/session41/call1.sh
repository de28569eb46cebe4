# Session 41, call 1: session 40's next_call.sh as prepared. Create ab/reload with
# `git archive ln-bwd-reload-w src benchmarks/scripts | tar -x -C ab/reload` and carry ["ab"].
# The CUDA tests that reach the scalar rows
# after the review's mends (RMS's split range from 2305; LN's unsplit whole row, also where split rows do not fit),
# then the traced backward at LN's odd rows through the op under torch.compile against torch.compile's own
# layer_norm. Expect (call 9, explicit configs): LN 12289 21, 16383 24 (% of copy) traced; eager 38-39.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or scalar_rows or traced_backward_of_odd" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED" $OUT/tests.log | tail -5
PYTHONPATH=src timeout 240 python - > $OUT/traced.log 2>&1 <<'PY'
import torch, triton.testing as tt, torch.nn.functional as F, fastnorm
copy = lambda nbytes: nbytes / 1e9  # GB
for n in (12289, 16383):
    x = torch.randn(49152, n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    for name, fn in (("fastnorm eager", fastnorm.layer_norm), ("fastnorm compiled", torch.compile(fastnorm.layer_norm)),
                     ("torch compiled", torch.compile(F.layer_norm))):
        y = fn(x, (n,), w, b, 1e-5)
        ms = tt.do_bench(lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True))
        print(f"LN bwd N={n} {name:18s} {3 * x.numel() * 2 / ms / 1e6:7.0f} GB/s  {ms * 1e3:8.1f} us")
PY
echo "== traced (rc $?)"; cat $OUT/traced.log | grep "LN bwd"
# Branch ln-bwd-reload-w (offline: the held LN backward's loop at 16384 891 -> 875 sm_90 instructions): main
# against it at the rows of the 16384 key's held entry, two rounds. If issue-bound, expect 77 -> ~78.
for tree in src reload src reload; do
  P=ab/$tree; [ $tree = src ] && P=.
  PYTHONPATH=$P/src timeout 60 python $P/benchmarks/scripts/norm_configs_ab.py --current --ns 12290,14000,16384 --dtype bfloat16 --passes 1 > $OUT/reload_$tree.log 2>&1
  echo "== $tree (rc $?)"; grep -hE "^  (LN|RMS|skip)" $OUT/reload_$tree.log | cut -c1-90
done
