# Session 33, call 7 (one GPU): (1) call 5's miss: the merge prefetch took the channels-last 56² statistics tail
# from 6.7 to 5.0 µs (timeline, eager, no flush) but the suite-style GPU time only +0.4 points (predicted ~+3%):
# the statistics kernel's duration in the profiler, flushed and back to back, HEAD~1 (ab/base/src) and HEAD.
# (2) call 4's N = 65536 forward candidates (a persistent grid of one 32-warp program an SM over 8192-column chunks:
# LN 73.6 -> 77.3, RMS 83.3 -> 85.3, 8192 rows) at the suite's 49152 rows, three passes.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for tree in ab/base/src src; do
  echo "== $tree"
  PYTHONPATH=$tree timeout 60 python benchmarks/scripts/bn_kernel_trace.py --ops stats --cl 256 64 56 56 2>&1 \
    | grep -v "Warning\|_warn_once" | tail -8
done
PYTHONPATH=src timeout 300 python -c "
import sys; sys.path.insert(0, 'benchmarks/scripts')
import tune_norms as T; T.ELEMS_CAP = 1 << 33
import norm_configs_ab as A
sys.argv = ['norm_configs_ab.py', '--fwd', '--passes', '3', '--ns', '65536', '--rms-ns', '65536', '--rows', '49152',
            '--configs', 'NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=8); '
            'NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=4); '
            'NormConfig(1, 16384, True, 32, 1, sms, evict=True, unroll=4)']
A.main()" 2>&1 | tail -12
