# Session 20, call 5: the bf16 forward at N = 512 and 768 on the H100 (report 83 / 88 against the 90% target; the
# copy of the same bytes 88 / 91): the forward sweep against the H200-tuned entries, kernels only, two passes.
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 560 python benchmarks/scripts/norm_configs_ab.py --ns 768,512 --rms-ns 768,512 --fwd --passes 2 --deadline 420 > $OUT/fwd_512_768.log 2>&1
grep -A8 "== summary" $OUT/fwd_512_768.log
python - <<'PY'
import json, os
rows = json.load(open(os.path.join(os.environ["OUT"], "norm_configs_ab.json")))["rows"]
for key in sorted({(r["op"], r["n"]) for r in rows}):
    rs = [r for r in rows if (r["op"], r["n"]) == key]
    print(key, "current", round(rs[0]["pct"], 1), "| top:", "; ".join(f"{r['pct']:.1f} {r['cfg']}" for r in sorted(rs, key=lambda r: -r["pct"])[:4]))
PY
