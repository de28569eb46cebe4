#!/usr/bin/env bash
# The single-read (resident) BatchNorm training forward on a GPU, in one device call:
#   1. the BatchNorm and convert tests on CUDA (both training-forward paths: the `train_path` fixture),
#   2. tune_batchnorm's check, then its variants on the tensors the resident path fits (against the two-launch
#      design: `noresident`) and on one large tensor it does not fit (unchanged), results in $OUT/bn_resident/.
# Usage (repo root, GPU machine): bash benchmarks/scripts/gpu_bn_resident.sh [pytest args]
set -u
export PYTHONPATH=src
out=${OUT:-/tmp}/bn_resident
mkdir -p "$out"
python -m pytest -q -p no:cacheprovider -n 8 tests/test_batch_norm.py tests/test_batch_norm_stages.py tests/test_convert.py "$@" >"$out/pytest.log" 2>&1
echo "pytest rc=$?"; tail -5 "$out/pytest.log"
BN_VARIANTS=${BN_VARIANTS:-noresident,res_w16,res_16K} \
BN_VARIANT_CASES=${BN_VARIANT_CASES:-"(32, 2048;(16, 1024;(8, 64, 56;bf16 NCHW (256, 64, 56"} \
OUT="$out" python benchmarks/scripts/tune_batchnorm.py --sections check,variants 2>&1 | tee "$out/variants.log" | tail -25
