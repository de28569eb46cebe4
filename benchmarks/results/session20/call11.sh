# Session 20, call 11: the BatchNorm suite again on the same code as call 8 (whose run met a slow phase of the host:
# profile_host's fastnorm step 561 µs against 306-361 in call 7; call 10's A/B showed the host-reached cells higher).
export PYTHONUNBUFFERED=1
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
