# Session 19, call 12: BatchNorm evaluation as a flat pointwise kernel (torch.compile's form, fastnorm's arithmetic)
# against fastnorm's tiled apply kernel and torch.compile, fp32 and bf16, NCHW and channels-last.
PYTHONPATH=src timeout 500 python benchmarks/scripts/bn_eval_flat_ab.py > $OUT/bn_eval_flat_ab.log 2>&1
tail -16 $OUT/bn_eval_flat_ab.log
