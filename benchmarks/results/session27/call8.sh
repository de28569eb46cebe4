# Session 27, call 8 (one GPU): the LayerNorm test file on CUDA (session 26's final-read mend, _piece_dx, had not run
# on a GPU), then the BatchNorm and stages files again with every failure's message kept (call 6's one failure
# passed alone in call 7).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 190 python -m pytest -q -p no:cacheprovider -n 8 --timeout 180 -rf tests/test_layer_norm.py > $OUT/ln_tests.log 2>&1
tail -3 $OUT/ln_tests.log
PYTHONPATH=src timeout 170 python -m pytest -q -p no:cacheprovider -n 8 --timeout 160 -rf tests/test_batch_norm.py tests/test_batch_norm_stages.py > $OUT/bn_tests.log 2>&1
tail -3 $OUT/bn_tests.log
