# Session 24, call 8 (the same H100): the reversed dx pass at bf16 NCHW 32×64×147² (call 7, one round: training
# backward 48.4 -> 42.1): bn_ab --graph, 3 rounds, and per-kernel times, with controls.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (32, 64, 147, 147);bf16 NCHW (16, 256, 75, 75);bf16 NCHW (8, 256, 128, 128)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 3 --ops train_bwd \
  'src@BN_SECOND_PASS_REVERSE=False' 'src' > $OUT/h100_147_ab.log 2>&1
tail -5 $OUT/h100_147_ab.log
PYTHONPATH=src timeout 150 python benchmarks/scripts/bn_kernel_times.py --ops train_bwd \
  'BN_SECOND_PASS_REVERSE=False' 'BN_SECOND_PASS_REVERSE=True' > $OUT/h100_kernel_times.log 2>&1
grep -v -i warn $OUT/h100_kernel_times.log
