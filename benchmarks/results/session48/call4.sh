# Session 48, call 4 (one H200): the channels-last one-pass plans' channel block 64 -> 128 (BN_CL_CB["stream"]; call 3:
# evaluation +1..+2 at C >= 128), every op it touches — the apply (evaluation, the training forward's second launch),
# the dx pass (training backward), the frozen backward — bf16 and fp32 channels-last, CUDA-graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
export BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (8, 256, 128, 128);bf16 CL (256, 1024, 14, 14);bf16 CL (2, 256, 200, 304);bf16 CL (128, 2048, 7, 7);fp32 CL (8, 256, 128, 128);fp32 CL (128, 2048, 7, 7);fp32 CL (32, 512, 28, 28)"
timeout 590 python benchmarks/scripts/bn_ab.py --graph --ops train_fwd,train_bwd,eval_fwd,frozen_bwd --rounds 2 \
  --timeout 200 src 'src@BN_CL_CB={"fused": 32, "stream": 128, "sums": 32}' 2>&1 | tail -40
