# Session 47, call 8 (one H200): the RMSNorm suite again with the forward's new tiles at N = 128 (2a8d896), for the
# report's RMSNorm section (last run in session 43).
export PYTHONUNBUFFERED=1
mkdir -p $OUT
timeout 360 bash benchmarks/scripts/gpu_report.sh rmsnorm --skip-check > $OUT/suite.log 2>&1
tail -3 $OUT/suite.log
