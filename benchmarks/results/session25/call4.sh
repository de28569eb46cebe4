# Session 25, call 4 (4 GPUs): SyncBatchNorm on 4 GPUs with the current code: the GPU check (after the partial
# merges' change), then the benchmark (session 24's run ran out of its 340 s in the NCHW fp32 ResNet-50 stack, whose
# first step compiled a CB = 1, SPLIT = 1 single-read forward for ~107 s; JSON and plot into $OUT/report).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
date +%T
STEPS="check" LOGDIR=$OUT/mg timeout 175 bash benchmarks/scripts/run_multigpu.sh 2>&1 | tail -4
date +%T
PYTHONPATH=src timeout 380 torchrun --standalone --nproc_per_node=4 -m fastnorm.bench syncbn --out $OUT/report > $OUT/bench.log 2>&1
echo "bench rc=$?"; grep -v "^W1\|OMP_NUM\|\*\*\*\*" $OUT/bench.log | tail -45; date +%T
