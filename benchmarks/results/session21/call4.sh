# session 21, call 4 (nvidia-h100-x2): SyncBatchNorm with its replayed eager launches (da7afbb): the GPU check, then
# the benchmark on 2 GPUs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
date +%T
STEPS="check" LOGDIR=$OUT/mg timeout 200 bash benchmarks/scripts/run_multigpu.sh 2>&1 | tail -32
date +%T
PYTHONPATH=src timeout 380 torchrun --standalone --nproc_per_node=2 -m fastnorm.bench syncbn --out $OUT/report > $OUT/bench.log 2>&1
echo "bench rc=$?"; grep -v "^W1\|OMP_NUM\|\*\*\*\*" $OUT/bench.log | tail -60; date +%T
