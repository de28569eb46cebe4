# Session 24, call 10 (4 GPUs): SyncBatchNorm on 4 GPUs with the current code (the 4-GPU section of the report is
# session 6's): the GPU check (equivalence with torch's SyncBatchNorm, graphs, the collective and symmetric-memory
# paths), then the benchmark (its JSON and plot into $OUT/report).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name --format=csv,noheader
date +%T
STEPS="check" LOGDIR=$OUT/mg timeout 180 bash benchmarks/scripts/run_multigpu.sh 2>&1 | tail -30
date +%T
PYTHONPATH=src timeout 340 torchrun --standalone --nproc_per_node=4 -m fastnorm.bench syncbn --out $OUT/report > $OUT/bench.log 2>&1
echo "bench rc=$?"; grep -v "^W1\|OMP_NUM\|\*\*\*\*" $OUT/bench.log | tail -45; date +%T
