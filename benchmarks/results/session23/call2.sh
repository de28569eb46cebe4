# Session 23, call 2 (one GPU): the NCHW statistics pass reading aligned rows (16-byte vectors from the aligned element
# at or before each run's start, neighbours' lanes masked; per-tile two-pass statistics merged with Chan's formula).
# bn_ab --graph, training forward: [0] runs as they lie (HEAD's path); [1] aligned rows for 16-bit x at odd S (the
# new default); [2] also 16-bit x at S with factor 2 or 4 and fp32 at odd S; [3] [1] and the row-layout sizes (S=49).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
export BN_VARIANT_CASES="bf16 NCHW (16, 256, 75, 75);bf16 NCHW (32, 64, 147, 147);bf16 NCHW (32, 288, 35, 35);bf16 NCHW (32, 768, 17, 17);fp32 NCHW (16, 256, 75, 75);bf16 NCHW (32, 256, 25, 38);bf16 NCHW (128, 2048, 7, 7);bf16 NCHW (256, 64, 56, 56)"
PYTHONPATH=src timeout 400 python benchmarks/scripts/bn_ab.py --graph --rounds 2 --ops train_fwd \
  'src@BN_ALIGNED_ROWS={}' 'src' 'src@BN_ALIGNED_ROWS={2: 4, 4: 1}' 'src@BN_ALIGNED_ROWS_MIN_S=2' > $OUT/aligned_rows_ab.log 2>&1
tail -12 $OUT/aligned_rows_ab.log
