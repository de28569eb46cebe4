# Session 24, call 9 (one H100, by kind): the BatchNorm suite on the code as committed (the training forward's apply
# reversed, the backward's dx ascending as before), Liger carried in .whl; the host's speed first (profile_host).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 400 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | grep -i "error" | tail -4
grep "^| " $OUT/profile_host.log
