# Session 42, call 10 (carry ["ab"]): the backward's whole rows with x held as loaded across the row reductions
# (x̂ formed again from it after them; g kept in fp32): ab/hx against ab/base (= c181537), --current per tree,
# kernels only, GPU time, bf16. Offline sm_90: LN 12544-16128 (8192 + 8192, w16, 3 stages) 112 -> 32 bytes of stack,
# 754 -> 828 instructions a row; rows that did not spill only gain instructions (4096 349 -> 406, 12288 934 -> 1102).
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for t in base hx; do
  PYTHONPATH=ab/$t/src timeout 120 python ab/$t/$A --current --ns 4096,8192,12288,12544,14336,16128 --rms-ns 12288,14336 --dtype bfloat16 --passes 2 > $OUT/$t.log 2>&1
  echo "== $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/$t.log | cut -c1-100
done
