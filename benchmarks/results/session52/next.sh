# Prepared in session 52 for the next session's first call (one H200; not run yet). From the repository root:
#   bash benchmarks/results/session52/setup_ab.sh && cp benchmarks/results/session52/next.sh ab/
#   device: bash ab/next.sh   (carry ["ab", ".whl"]; about 5 minutes)
# (1) LN forward 49152 held as 32768 + 16384 without one_round (54 registers offline; with it 76.4 against the
#     exact entry's 81.0 in session 52's call 5). (2) The 65536 key's rows other than 57344 under its new entry
#     (32768 + 32768 held, one_round) against the entry before (the whole row held). (3) 32768 after 16384 and
#     24576 in one process: the suite read 89 there, the one-shape runs 93.4-93.8. (4) The traced forward
#     (torch.compile, NORM_TUNED_UNCAPPED) at 28000 and 32768 against the eager one, bf16, (49152, N), µs.
export PYTHONUNBUFFERED=1
source ab/ab_run.sh
OLD65="{('fwd',False,65536):(1,65536,False,32,1,0,{'hold_loaded':True})}"
for r in 1 2; do
  ab_run new layernorm 49152 bf16 fwd entry $r
  ab_run new layernorm 49152 bf16 fwd held $r \
    NTX="{('fwd',False,49152):(1,32768,False,32,1,0,{'hold_loaded':True,'block_n2':16384})}"
  for n in 49160 53248 61440; do
    ab_run new layernorm $n bf16 fwd entry $r
    ab_run new layernorm $n bf16 fwd before $r NT="$OLD65"
  done
  ab_run new layernorm 16384,24576,32768 bf16 fwd inprocess $r
  echo "round $r done (${SECONDS}s)"
done
python ab/harness_table.py $OUT/runs | tee $OUT/table.md
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
(cd ab/new && PYTHONPATH=src timeout 240 python - <<'PY'
import torch, triton, fastnorm
for n in (28000, 32768):
    x = torch.randn(49152, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    eager = lambda: fastnorm.layer_norm(x, (n,), w, b)  # noqa: E731
    traced = torch.compile(lambda: fastnorm.layer_norm(x, (n,), w, b), fullgraph=True)
    torch.testing.assert_close(traced(), eager())
    t = [triton.testing.do_bench(f, warmup=25, rep=100) * 1e3 for f in (eager, traced)]
    gbs = [2 * x.numel() * 2 / (u * 1e-6) / 1e9 for u in t]
    print(f"LN fwd {n}: eager {t[0]:.0f} us ({gbs[0]:.0f} GB/s), traced {t[1]:.0f} us ({gbs[1]:.0f} GB/s)")
PY
) || echo "TRACED FAILED"
