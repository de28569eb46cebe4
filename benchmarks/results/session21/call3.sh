# session 21, call 3 (nvidia-h100-x2): call 2's SyncBatchNorm benchmark printed nothing in 320 s. First one small
# configuration (a hang would show here), then the whole benchmark with progress lines.
export PYTHONPATH=src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
date +%T
timeout 150 torchrun --standalone --nproc_per_node=2 -m fastnorm.bench syncbn --shapes 16x2048x7x7 \
    --layouts channels_last --dtypes bf16 --no-stack --warmup 3 --iters 20 --out $OUT/subset > $OUT/subset.log 2>&1
rc=$?; echo "subset rc=$rc"; grep -v "^W1\|OMP_NUM\|\*\*\*\*" $OUT/subset.log | tail -30; date +%T
[ $rc = 0 ] || exit 1
timeout 420 torchrun --standalone --nproc_per_node=2 -m fastnorm.bench syncbn --out $OUT/report > $OUT/bench.log 2>&1
echo "bench rc=$?"; grep -v "^W1\|OMP_NUM\|\*\*\*\*" $OUT/bench.log | tail -60; date +%T
