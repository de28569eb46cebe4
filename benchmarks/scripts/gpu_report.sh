#!/usr/bin/env bash
# One call on the GPU machine: the host's speed first (host-bound rows depend on it), then `fastnorm report` (the
# check in parallel workers, then the suites), everything packed into one archive under $OUT.
#   bash benchmarks/scripts/gpu_report.sh [SUITES] [extra `fastnorm report` arguments]
#   SUITES: comma list for --suites (default layernorm,rmsnorm,batchnorm); carry .whl for Liger.
# Writes $OUT/report.tgz (report.md, JSON, plots, check.json) and $OUT/profile_host.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONPATH=src
if compgen -G ".whl/*.whl" >/dev/null; then
    python -m pip install -q --no-index --no-deps .whl/*.whl
fi
SUITES=${1:-layernorm,rmsnorm,batchnorm}
shift || true
python benchmarks/scripts/profile_host.py --profile '' --bn-shapes 16x256x56x56 --norm-ns 256 \
    > "$OUT/profile_host.log" 2>&1 || echo "profile_host failed (see $OUT/profile_host.log)"
grep -E "^\| " "$OUT/profile_host.log" || true
status=0
python -m fastnorm report --out "$OUT/report" --suites "$SUITES" "$@" || status=$?
if [ -d "$OUT/report" ]; then
    tar czf "$OUT/report.tgz" -C "$OUT" report && rm -rf "$OUT/report"
fi
exit $status
