# Session 27, call 1 (one GPU): the BatchNorm suite with the new GPU-time figures (each call captured in a CUDA
# graph, its replays timed), on the current code; profile_host first (host speed).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 570 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -4
mkdir -p /tmp/r && tar xzf $OUT/report.tgz -C /tmp/r && grep -h "not captured\|error in\|elapsed" /tmp/r/report/report.md | head
python -c "import json;d=json.load(open('/tmp/r/report/batchnorm.json'));print('elapsed',d['elapsed_s']);r=[x for x in d['records'] if x['status']=='ok'];print(len(r),'ok',sum('graph_ms' in x for x in r),'graphed')"
