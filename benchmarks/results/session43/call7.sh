timeout 570 bash benchmarks/scripts/gpu_report.sh rmsnorm --skip-check  # session 43, call 7: the RMS suite with the held rows past 40960 (carry .whl)
