# Session 48, call 5 (one H200): the BatchNorm suite with the channels-last one-pass plans at 256-byte rows
# (BN_CL_STREAM_ROW_BYTES: bf16 128 channels a tile), for the report.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 430 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | tail -5
