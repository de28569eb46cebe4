timeout 570 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check  # session 40, call 8: the LN/RMS report with the exact entries and the scalar rows (carry .whl)
