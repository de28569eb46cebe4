# Session 22, call 2 (one H100): the spatial size as an argument with the image index from a multiply-high
# (_divisor_magic) instead of a division: (1) bitwise against compiled-in on CUDA (pytest, model sizes included)
# and the magic-number test; (2) bn_ab --graph, compiled in vs argument, same cases as call 1 minus two;
# (3) LayerNorm/RMSNorm forward at 16384 x 1024 (BERT-large row of session 20's suites, where Liger's GPU time beat
# ours): the suite's cells for fastnorm / Liger / copy at 16384 and 49152 rows, then forward variants at 16384 rows.
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 280 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "spatial_size or divisor" 2>&1 | tail -3
export BN_VARIANT_CASES="bf16 NCHW (256, 64, 56, 56);bf16 NCHW (256, 1024, 14, 14);fp32 NCHW (256, 256, 28, 28);bf16 NCHW (128, 64, 112, 112);fp32 NCHW (32, 512, 28, 28);bf16 NCHW (16, 256, 75, 75);fp32 NCHW (16, 256, 75, 75);bf16 NCHW (32, 256, 25, 38)"
PYTHONPATH=src timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd,train_bwd,eval_fwd,frozen_bwd 'src' 'src@BN_SPATIAL_COMPILED=0' > $OUT/spatial_magic_ab_h100.log 2>&1
tail -34 $OUT/spatial_magic_ab_h100.log
for s in layernorm rmsnorm; do
  PYTHONPATH=src:/tmp/site timeout 45 python -m fastnorm.bench $s --shapes 16384x1024,49152x1024 --ops fwd --impls fastnorm,liger,copy --dtypes fp32,bf16 --compile none --no-plots --out $OUT/bench_$s > $OUT/bench_$s.log 2>&1
  grep -E "^\| *(16384|49152)" $OUT/bench_$s.log | head -8
done
PYTHONPATH=src timeout 40 python benchmarks/scripts/norm_configs_ab.py --fwd --rows 16384 --ns 1024 --rms-ns "" --dtype float32 --passes 2 > $OUT/fwd16k_ln_fp32.log 2>&1; tail -14 $OUT/fwd16k_ln_fp32.log
PYTHONPATH=src timeout 40 python benchmarks/scripts/norm_configs_ab.py --fwd --rows 16384 --ns "" --rms-ns 1024 --dtype bfloat16 --passes 2 > $OUT/fwd16k_rms_bf16.log 2>&1; tail -14 $OUT/fwd16k_rms_bf16.log
