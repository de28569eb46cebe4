#!/usr/bin/env bash
# The multi-GPU runs, in one go on a machine with NPROC GPUs (default: all of them):
# SyncBatchNorm equivalence/graph/collective checks, its out-of-step timeout (2 GPUs), the SyncBatchNorm benchmark, DDP over NCCL,
# and the single-GPU torch.compile checks. Logs go to $LOGDIR (default benchmarks/results),
# benchmark JSON/plots to $BENCH_OUT (default benchmarks/report). STEPS picks a subset of
# "check timeout bench ddp compile" (default all; WITH_COMPILE=0 drops compile). Each step has a hard timeout; the status of each is
# printed last and the script exits 1 if any failed.
set -u
cd "$(dirname "$0")/../.."
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}src" PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NPROC=${NPROC:-$(python3 -c 'import torch; print(torch.cuda.device_count())')}
LOGDIR=${LOGDIR:-benchmarks/results}
mkdir -p "$LOGDIR" benchmarks/report
status=()
step() {  # name timeout command...
    local name=$1 limit=$2; shift 2
    timeout "$limit" "$@" > "$LOGDIR/${name}_${NPROC}gpu.log" 2>&1
    local rc=$?
    status+=("$name rc=$rc")
    tail -n 25 "$LOGDIR/${name}_${NPROC}gpu.log"
}
STEPS=" ${STEPS:-check timeout bench ddp compile} "
[ "${WITH_COMPILE:-1}" = 1 ] || STEPS=${STEPS/ compile / }
[[ $STEPS == *" check "* ]] && step syncbn_check 170 torchrun --standalone --nproc_per_node="$NPROC" benchmarks/scripts/gpu_syncbn_check.py
[[ $STEPS == *" timeout "* ]] && step syncbn_timeout 120 torchrun --standalone --nproc_per_node=2 benchmarks/scripts/gpu_syncbn_timeout.py
[[ $STEPS == *" bench "* ]] && step syncbn_bench 480 torchrun --standalone --nproc_per_node="$NPROC" -m fastnorm.bench syncbn --out "${BENCH_OUT:-benchmarks/report}"
[[ $STEPS == *" ddp "* ]] && step ddp 90 torchrun --standalone --nproc_per_node="$NPROC" benchmarks/scripts/gpu_ddp.py
[[ $STEPS == *" compile "* ]] && step compile 100 python3 benchmarks/scripts/gpu_integration.py -k compile
printf '%s\n' "${status[@]}"
for s in "${status[@]}"; do [[ $s == *"rc=0" ]] || exit 1; done
