# Session 32, call 6 (one GPU): the LayerNorm and RMSNorm suites on 1ceacbc (the split-row backward's tag words and
# counters under CUDA-graph capture from the reserve since session 31), Liger from its wheel (.whl carried).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 570 bash benchmarks/scripts/gpu_report.sh layernorm,rmsnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
