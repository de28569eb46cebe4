timeout 330 bash benchmarks/scripts/gpu_report.sh layernorm --skip-check  # session 43, call 11: the LN suite with the backward 256 / 512 entries (carry .whl)
