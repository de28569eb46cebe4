# Session 30, call 7 (one GPU): the image-strided frozen kernel's new floor of one program an SM (config
# BN_FROZEN_FLAT["min_per_sm"]): the CUDA tests of the frozen paths; src against the floor off ("min_per_sm": 0, the
# rule of calls 1-6) at the smallest NCHW tensors, training backward and frozen backward with dγ, dβ; then the
# BatchNorm suite for the report.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export PYTHONPATH=src
timeout 170 python -m pytest -q -p no:cacheprovider -n 8 --timeout 160 -rf tests/test_batch_norm.py tests/test_replay.py \
  tests/test_robustness.py -k "frozen or sums_flat or nan_inf or plan" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | tail -3
F='"min_numel": 1048576, "min_images": 32, "images": 16, "block": 1024, "warps": 4, "window": 256, "per_sm": 4, "stages": 3'
BN_VARIANT_CASES='bf16 NCHW (32, 256, 14;fp32 NCHW (32, 256, 14;bf16 NCHW (32, 2048, 7;fp32 NCHW (32, 2048, 7' \
  timeout 150 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 100 --ops train_bwd,frozen_params src \
  "src@BN_FROZEN_FLAT={$F, \"min_per_sm\": 0}" 2>&1 | tail -9
timeout 420 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
