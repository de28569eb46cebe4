# Session 17, call 5: the LayerNorm backward's instruction cuts (helper's prototype, ab/lnbwd/src, switches by
# FASTNORM_LNBWD_OFF / _ON) against HEAD's kernels (ab/base/src): current configs, kernels only, 2 passes.
# all = every cut; -ASM, -ROW_STEP, -PAIR8192: all but that one; +REG_PF: register prefetch (no ROW_STEP).
export PYTHONUNBUFFERED=1
R=benchmarks/scripts
run() { name=$1; tree=$2; shift 2
  env "$@" PYTHONPATH=$tree python $R/norm_configs_ab.py --current --passes 2 --ns 1024,2048,3072,4096,5120,8192,12288,16384 --rms-ns 2048,4096,8192,16384 > $OUT/bwd_${name}_bf16.log 2>&1
  env "$@" PYTHONPATH=$tree python $R/norm_configs_ab.py --current --passes 2 --dtype float32 --ns 2048,4096,8192 --rms-ns 4096 > $OUT/bwd_${name}_fp32.log 2>&1
}
run base ab/base/src X=1
run all ab/lnbwd/src X=1
run noASM ab/lnbwd/src FASTNORM_LNBWD_OFF=ASM
run noROWSTEP ab/lnbwd/src FASTNORM_LNBWD_OFF=ROW_STEP
run noPAIR8192 ab/lnbwd/src FASTNORM_LNBWD_OFF=PAIR8192
run regpf ab/lnbwd/src FASTNORM_LNBWD_OFF=ROW_STEP FASTNORM_LNBWD_ON=REG_PF
python - "$OUT" <<'PY'
import re, sys, glob
out = sys.argv[1]; names = ["base", "all", "noASM", "noROWSTEP", "noPAIR8192", "regpf"]
for dt in ("bf16", "fp32"):
    table = {}
    for nm in names:
        for line in open(f"{out}/bwd_{nm}_{dt}.log"):
            m = re.match(r"\s+(LN|RMS) bwd N=(\d+) .*?(\d+\.\d)%", line)
            if m: table.setdefault((m[1], int(m[2])), {})[nm] = m[3]
    print(f"== {dt}: % of copy   " + " ".join(f"{n:>10s}" for n in names))
    for k, v in table.items(): print(f"{k[0]:3s} {k[1]:6d}          " + " ".join(f"{v.get(n, '-'):>10s}" for n in names))
PY
