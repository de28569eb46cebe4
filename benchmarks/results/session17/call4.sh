# Session 17, call 4: the BatchNorm suite (session 16's one-tile apply rule had not reached the report: its run
# met a slow host), after the host's speed (profile_host; compare the session 15 run's figures before committing).
export PYTHONUNBUFFERED=1
timeout 560 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -25
