# Session 33, call 14 (one GPU): the single-read training backward (_bn_bwd_resident_kernel, new: dy and x held
# through the grid exchange, one launch) where it fits — the smallest tensors, e.g. 32×256×14² (call 1: our sums 6.1-9.3
# µs + dx 4.0-4.3 against cuDNN's single kernel 9.6-9.8; predicted ~12.5 µs at fp32 CL against 14.2). (1) CUDA tests of
# the resident paths, training backwards, graphs and counters; (2) A/B, two rounds: the backward off
# (BN_RESIDENT_BACKWARD=False: the two launches as before) against on, and torch.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider -n 8 --timeout 180 -rf tests/test_batch_norm.py \
  tests/test_batch_norm_stages.py tests/test_replay.py \
  -k "resident or training or relu or graph or counters or deterministic or nan or backward or grad" > $OUT/tests.log 2>&1
grep -v Warning $OUT/tests.log | grep -E "passed|failed|FAILED|Error" | head -12
BN_VARIANT_CASES='32, 256, 14;8, 64, 56' \
  timeout 300 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --timeout 200 --ops train_bwd \
  'src@BN_RESIDENT_BACKWARD=False' src torch 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
