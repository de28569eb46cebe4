# Session 31, call 10 (one GPU, the session's last device seconds): the two-launch training forward's apply pass as a
# programmatic dependent launch of its statistics pass (src: BN_PDL; the statistics kernel lets the next launch
# start at once, the apply kernels load their x block then wait for it) against ab_head (HEAD: merge levels and
# reserved counters). Training forward (ERR: its eager result against torch's) and the evaluation forward (the
# apply kernel's wait, a no-op there), CUDA-graph replays / back-to-back, one round.
export PYTHONUNBUFFERED=1
BN_VARIANT_CASES='bf16 NCHW (256, 64, 56;bf16 CL (256, 64, 56;bf16 NCHW (32, 512, 28;bf16 NCHW (32, 256, 14' \
  timeout 200 python benchmarks/scripts/bn_ab.py --graph --rounds 1 --timeout 180 --ops train_fwd,eval_fwd \
  ab_head src 2>&1 | grep -v "^  \|^Traceback\|^    " | head -30
