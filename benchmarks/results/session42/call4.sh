# Session 42, call 4 (carry [".whl"], tree e5990fd): the GPU tests of the changed entries and of session
# 41's new large rows (8704, 14336: not yet run on a GPU), then the changed rows beside the peers, GPU time.
export PYTHONUNBUFFERED=1
python -m pip install -q --no-index --no-deps .whl/*.whl > /dev/null 2>&1
PYTHONPATH=src timeout 300 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "large_gpu or least or exact or two_piece or torch_compile or scalar_rows or held" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
PYTHONPATH=src timeout 150 python -m fastnorm.bench layernorm --shapes 17408,18432,20000,20480,24576 --dtypes bf16 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/ln_bf16 > $OUT/ln_bf16.log 2>&1
echo "== LN bf16 peers (rc $?)"; tail -25 $OUT/ln_bf16.log
PYTHONPATH=src timeout 120 python -m fastnorm.bench layernorm --shapes 544,640,8704,9216 --dtypes fp32 --no-models --compile none --no-plots --impls fastnorm,torch,liger,copy --out $OUT/ln_fp32 > $OUT/ln_fp32.log 2>&1
echo "== LN fp32 peers (rc $?)"; tail -20 $OUT/ln_fp32.log
