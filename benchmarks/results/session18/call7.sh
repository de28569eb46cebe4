# Session 18, call 7: (a) bf16 forward at N = 40000 (key 49152, no entry: 65536's whole row with hold_loaded, 61%
# filled) against the old 65536 entries (chunked), to decide a 49152 entry; (b) the LayerNorm/RMSNorm suites and
# `fastnorm check` with session 18's entries.
export PYTHONUNBUFFERED=1
PYTHONPATH=src python benchmarks/scripts/norm_configs_ab.py --fwd --configs "NormConfig(1,8192,True,8,3,4*sms);NormConfig(1,16384,True,16,3,2*sms);NormConfig(1,4096,True,16,1,0,evict=True,unroll=8)" --ns 40000 --rms-ns 40000 --passes 2 > $OUT/c7_fwd40k.log 2>&1
grep -E "^device|^  (LN|RMS|skip)" $OUT/c7_fwd40k.log | cut -c1-150
timeout 480 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm 2>&1 | grep -v "^  \|Warning" | grep -i "check\|passed\|failed\|summary\|run time\|error" | tail -12
