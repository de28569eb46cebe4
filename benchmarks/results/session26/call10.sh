# Session 26, call 10 (one H100): call 8's suite read bf16 NCHW 32×512×28² training backward at 5.5% (466 µs against
# 82 in call 4) and frozen backward at 8.9%, not flagged host-bound, torch's own frozen backward there 97 -> 216 µs:
# the host, not the code (neither path changed this session)? The GPU time of those cells (bn_ab --graph, HEAD),
# then the BatchNorm suite once more on the same code.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (32, 512, 28, 28);bf16 NCHW (128, 2048, 7, 7)"
PYTHONPATH=src timeout 120 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --ops train_bwd,frozen_bwd 'src' 'torch' > $OUT/small_cells.log 2>&1
tail -6 $OUT/small_cells.log
timeout 380 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
