# Session 17, call 6: the clean form of call 5's winners in src (one-row tiles' row mask and EVEN_N's column mask
# as constants, LayerNorm's row shift read as a pair: K_PAIR) against HEAD's kernels (ab/base/src); a temporary
# FASTNORM_AB switch drops K_PAIR ("nokpair"), keeps it to prefetched loops only ("kpair_staged"), or drops EVEN_N
# ("noeven"). Current configs, kernels only, 2 passes.
export PYTHONUNBUFFERED=1
R=benchmarks/scripts
run() { name=$1; tree=$2; ab=$3
  FASTNORM_AB=$ab PYTHONPATH=$tree python $R/norm_configs_ab.py --current --passes 2 --ns 768,1024,1536,2048,3072,4096,5120,8192,12288,16384 --rms-ns 2048,4096,8192,16384 > $OUT/c6_${name}_bf16.log 2>&1
  FASTNORM_AB=$ab PYTHONPATH=$tree python $R/norm_configs_ab.py --current --passes 2 --dtype float32 --ns 1024,2048,4096,8192,12288 --rms-ns 4096 > $OUT/c6_${name}_fp32.log 2>&1
}
run base ab/base/src ""
run all src ""
run staged src kpair_staged
run nokpair src nokpair
run noeven src noeven
python - "$OUT" <<'PY'
import re, sys
out = sys.argv[1]; names = ["base", "all", "staged", "nokpair", "noeven"]
for dt in ("bf16", "fp32"):
    table = {}
    for nm in names:
        for line in open(f"{out}/c6_{nm}_{dt}.log"):
            m = re.match(r"\s+(LN|RMS) bwd N=(\d+) (.*?)\s+(\d+\.\d)%", line)
            if m: table.setdefault((m[1], int(m[2]), m[3].strip()), {})[nm] = m[4]
    print(f"== {dt}: % of copy" + " " * 30 + " ".join(f"{n:>8s}" for n in names))
    for k, v in table.items(): print(f"{k[0]:3s} {k[1]:6d} {k[2]:38s}" + " ".join(f"{v.get(n, '-'):>8s}" for n in names))
PY
