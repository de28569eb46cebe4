#!/usr/bin/env bash
# The small-shape GPU test subset under compute-sanitizer: memcheck (out-of-bounds and misaligned accesses,
# use of freed memory, errors from CUDA calls) and racecheck (shared-memory hazards inside the kernels).
#
#   bash benchmarks/scripts/sanitizer.sh [log dir]        # default log dir: benchmarks/results/sanitizer
#
# Run from the repository root on the GPU machine (about 5-9 minutes on an H200, under a 10-minute command limit:
# warm-up <= WARMUP_TIMEOUT (120 s), memcheck <= MEMCHECK_TIMEOUT (250 s), racecheck <= RACECHECK_TIMEOUT (200 s);
# SANITIZER_TOOLS="memcheck" or "racecheck" runs one tool, e.g. as two separate commands). Writes
# <log dir>/memcheck.log, racecheck.log (the sanitizer's reports), *.pytest.log (pytest's output) and summary.txt,
# prints the summary, and exits 1 unless each tool run reports 0 errors and every selected test passed.
#
# Notes
# * PYTORCH_NO_CUDA_MEMORY_CACHING=1: every tensor is its own cudaMalloc, so memcheck sees an access past a
#   tensor's end (with the caching allocator it would land inside a larger pooled block, unseen).
# * The subset: the CI tests that run on CUDA with small shapes (the interpreter-sized cases), minus the
#   gpu-marked ones (compile, > 2^31 elements: too slow under the sanitizer) and the multi-process ones.
#   Property tests run FASTNORM_HYPOTHESIS_EXAMPLES (default here 8) examples each.
# * racecheck is much slower than memcheck, so it runs a smaller subset (RACECHECK_TESTS).
# * A Triton warm-up run without the sanitizer compiles every kernel first (the JIT is host work, but slow
#   under the sanitizer's interception).
set -u
cd "$(dirname "$0")/../.."
LOG_DIR=${1:-benchmarks/results/sanitizer}
mkdir -p "$LOG_DIR"
PY=${PYTHON:-python}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export FASTNORM_HYPOTHESIS_EXAMPLES=${FASTNORM_HYPOTHESIS_EXAMPLES:-8}
TOOLS=${SANITIZER_TOOLS:-"memcheck racecheck"}

MEMCHECK_TESTS=${MEMCHECK_TESTS:-"tests/test_robustness.py tests/test_properties.py tests/test_layer_norm.py tests/test_batch_norm.py tests/test_batch_norm_stages.py"}
RACECHECK_TESTS=${RACECHECK_TESTS:-"tests/test_robustness.py tests/test_properties.py"}
PYTEST_ARGS=(-q -p no:cacheprovider -m "not gpu and not multigpu and not slow" --no-header -o addopts="")

find_sanitizer() {
  if [ -n "${COMPUTE_SANITIZER:-}" ]; then echo "$COMPUTE_SANITIZER"; return; fi
  if command -v compute-sanitizer >/dev/null 2>&1; then command -v compute-sanitizer; return; fi
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer/compute-sanitizer; do
    [ -x "$c" ] && { echo "$c"; return; }
  done
  # the pip package nvidia-cuda-sanitizer-api ships the library but not always the binary: look anyway
  "$PY" - <<'EOF' 2>/dev/null
import glob, os, site
for root in site.getsitepackages():
    for c in glob.glob(os.path.join(root, "nvidia", "**", "compute-sanitizer"), recursive=True):
        if os.access(c, os.X_OK) and os.path.isfile(c):
            print(c)
            raise SystemExit
EOF
}

SAN=$(find_sanitizer)
SUMMARY="$LOG_DIR/summary.txt"
{
  echo "fastnorm compute-sanitizer run, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "source: $("$PY" -c 'from fastnorm.bench.common import source_sha; print(source_sha())' 2>/dev/null)"
  "$PY" -c "import torch, triton; print('torch', torch.__version__, '| triton', triton.__version__, '|', torch.cuda.get_device_name() if torch.cuda.is_available() else 'NO CUDA')"
  echo "compute-sanitizer: ${SAN:-NOT FOUND}"
  [ -n "$SAN" ] && "$SAN" --version | tail -1
} > "$SUMMARY" 2>&1

if [ -z "$SAN" ]; then
  echo "FAIL: compute-sanitizer not found (set COMPUTE_SANITIZER=/path/to/compute-sanitizer)" | tee -a "$SUMMARY"
  exit 1
fi

echo "warm-up (no sanitizer): compiling the kernels of the subset" | tee -a "$SUMMARY"
# shellcheck disable=SC2086
timeout "${WARMUP_TIMEOUT:-120}" "$PY" -m pytest "${PYTEST_ARGS[@]}" $MEMCHECK_TESTS > "$LOG_DIR/warmup.pytest.log" 2>&1
echo "  warm-up exit status $? ($(tail -1 "$LOG_DIR/warmup.pytest.log"))" | tee -a "$SUMMARY"

status=0
run_tool() {  # tool, time limit, tests...
  local tool=$1 limit=$2; shift 2
  local t0=$SECONDS
  local extra=()
  [ "$tool" = racecheck ] && extra=(--racecheck-report hazard)
  # shellcheck disable=SC2068
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "$limit" "$SAN" --tool "$tool" ${extra[@]+"${extra[@]}"} \
    --log-file "$LOG_DIR/$tool.log" --error-exitcode 86 --print-limit 100 --target-processes application-only \
    "$PY" -m pytest "${PYTEST_ARGS[@]}" "$@" > "$LOG_DIR/$tool.pytest.log" 2>&1
  local rc=$?
  # memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: N hazards displayed ..."
  local errors hazards
  errors=$(grep -Eo "ERROR SUMMARY: [0-9]+ error" "$LOG_DIR/$tool.log" 2>/dev/null | tail -1 | grep -Eo "[0-9]+")
  hazards=$(grep -Eo "RACECHECK SUMMARY: [0-9]+ hazard" "$LOG_DIR/$tool.log" 2>/dev/null | tail -1 | grep -Eo "[0-9]+")
  [ "$tool" = racecheck ] && [ -z "$errors" ] && errors=$hazards
  local verdict=PASS
  if [ "${errors:-x}" != 0 ] || [ "${hazards:-0}" != 0 ]; then verdict="FAIL (sanitizer errors; see $tool.log)"; fi
  if [ "$rc" -eq 124 ]; then verdict="FAIL (timed out after ${limit}s; the logs cover what ran)"; fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 86 ] && [ "$rc" -ne 124 ]; then verdict="FAIL (pytest exit status $rc)"; fi
  [ "$verdict" = PASS ] || status=1
  printf "%-9s %s  errors=%s hazards=%s exit=%s %ss  pytest: %s\n" "$tool" "$verdict" "${errors:-?}" "${hazards:--}" \
    "$rc" "$((SECONDS - t0))" "$(tail -1 "$LOG_DIR/$tool.pytest.log")" | tee -a "$SUMMARY"
  echo "  command: PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool $tool ${extra[*]+${extra[*]} }--error-exitcode 86" \
    "python -m pytest $(printf '%q ' "${PYTEST_ARGS[@]}" "$@")" >> "$SUMMARY"
}

case " $TOOLS " in *" memcheck "*)
  # shellcheck disable=SC2086
  run_tool memcheck "${MEMCHECK_TIMEOUT:-250}" $MEMCHECK_TESTS ;;
esac
case " $TOOLS " in *" racecheck "*)
  # shellcheck disable=SC2086
  run_tool racecheck "${RACECHECK_TIMEOUT:-200}" $RACECHECK_TESTS ;;
esac

if ! grep -Eq "^(memcheck|racecheck) " "$SUMMARY"; then
  echo "FAIL: no tool ran (SANITIZER_TOOLS='$TOOLS'; expected memcheck and/or racecheck)" | tee -a "$SUMMARY"
  status=1
fi
echo "logs: $LOG_DIR" | tee -a "$SUMMARY"
[ "$status" -eq 0 ] && echo "ALL PASS" | tee -a "$SUMMARY" || echo "FAILURES" | tee -a "$SUMMARY"
exit "$status"
