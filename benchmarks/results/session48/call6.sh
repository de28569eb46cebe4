# Session 48, call 6 (one H200): on top of 256-byte channels-last one-pass rows (call 5's form), the one-pass forward's
# tile (BN_TILE["fwd"] 4096 -> 8192 elements: 64 B of bf16 a thread at 8 warps) and the apply loop's stages (4 -> 3),
# bf16 channels-last evaluation and training forward, CUDA-graph replays, two rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
export BN_VARIANT_CASES="bf16 CL (256, 256, 28, 28);bf16 CL (256, 64, 56, 56);bf16 CL (8, 256, 128, 128);bf16 CL (2, 256, 200, 304);bf16 CL (256, 1024, 14, 14)"
timeout 400 python benchmarks/scripts/bn_ab.py --graph --ops eval_fwd,train_fwd --rounds 2 --timeout 120 \
  src \
  'src@BN_TILE={"fwd": 8192, "bwd": 2048, "sums": 4096}' \
  'src@BN_LOOP_STAGES={"stats": 3, "apply": 3, "apply_row32": 2, "bwd": 3, "dx": 3, "frozen": 4}' \
  2>&1 | tail -14
