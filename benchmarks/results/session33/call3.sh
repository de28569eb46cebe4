# Session 33, call 3 (one GPU): the forward's chunked rows with 2 or 4 rows a program. Hypothesis: LayerNorm's
# chunked forward (85% at 32768 against RMSNorm's 98 with the same config) is limited by its second pass's L2 reads —
# x, the weight and the bias per row (192 KB a 32768-element bf16 row against RMSNorm's 128); rows that share a
# program share the parameters' loads (an L1 hit for the second row). Kernels only, two interleaved passes.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 540 python benchmarks/scripts/norm_configs_ab.py --fwd --passes 2 --ns 16384,32768,65536 \
  --rms-ns 32768,65536 --configs "NormConfig(1, 4096, True, 16, evict=True, unroll=8); \
NormConfig(2, 4096, True, 16, evict=True, unroll=4); NormConfig(2, 4096, True, 32, evict=True, unroll=8); \
NormConfig(2, 2048, True, 8, evict=True, unroll=8); NormConfig(4, 4096, True, 32, evict=True, unroll=4); \
NormConfig(2, 2048, True, 16, evict=True, unroll=8); NormConfig(2, 4096, True, 32, evict=True, unroll=4)" 2>&1 | tail -45
