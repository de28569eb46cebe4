# Session 33, call 4 (one GPU): call 3 refuted the shared-parameter idea (2-4 rows a program: 40-67% against 84).
# Next hypothesis for N = 65536: the chunked rows' second pass misses L2 — one 16-warp program per row, ~3 resident
# an SM, so ~400 rows of 128 KB (50 MB) in flight, L2's size; at 32768 half that, and the same config reaches 84 (LN)
# / 96 (RMS) there against 63 / 67 at 65536 (call 3). A persistent grid of 1-2 programs an SM holds 17-34 MB.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 540 python benchmarks/scripts/norm_configs_ab.py --fwd --passes 2 --ns 65536,32768 \
  --rms-ns 65536 --configs "NormConfig(1, 4096, True, 16, 1, sms, evict=True, unroll=8); \
NormConfig(1, 4096, True, 16, 1, 2 * sms, evict=True, unroll=8); NormConfig(1, 8192, True, 16, 1, sms, evict=True, unroll=4); \
NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=4); NormConfig(1, 2048, True, 8, 1, 2 * sms, evict=True, unroll=8); \
NormConfig(1, 2048, True, 8, 1, 4 * sms, evict=True, unroll=8); NormConfig(1, 4096, True, 16, 1, sms, evict=False, unroll=8); \
NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=8)" 2>&1 | tail -35
