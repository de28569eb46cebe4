# Session 26, call 9 (one H100): call 8's two CUDA failures were test_reductions_keep_their_tail (the plans on 132 SMs:
# items of one tile, nothing to split); its plans are now pinned to 4 SMs as the interpreter's. That test again, with
# the plan and sums tests, failures in full.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 200 python -m pytest -q -p no:cacheprovider tests/test_batch_norm.py -k "keep_their_tail or sums_plan or two_launch or apply_reverse" 2>&1 | grep -v Warning | tail -30
