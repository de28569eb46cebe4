# Session 27, call 4 (one GPU): the backward's captures from leaves of their own (7f3dcd7 + the mend): call 3's
# case again, then the BatchNorm suite whole with the GPU-time figures.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 100 python benchmarks/results/session27/capture_diag2.py train_fwd,train_bwd,eval_fwd,frozen_bwd nchw 2>&1 | grep "^fastnorm \|^torch \|FAILED" | tail -12
timeout 480 bash benchmarks/scripts/gpu_report.sh batchnorm --skip-check 2>&1 | grep -v "^  \|Warning" | tail -3
mkdir -p /tmp/r && tar xzf $OUT/report.tgz -C /tmp/r && grep -h "not captured\|error in" /tmp/r/report/report.md | head
python -c "import json;d=json.load(open('/tmp/r/report/batchnorm.json'));print('elapsed',d['elapsed_s']);r=[x for x in d['records'] if x['status']=='ok'];print(len(r),'ok',sum('graph_ms' in x for x in r),'graphed')"
