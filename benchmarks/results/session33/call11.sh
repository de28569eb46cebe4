# Session 33, call 11 (one GPU): call 10 found the new N = 65536 forward entry losing at 40000 (RMS, by the 49152
# key's fallback: 66.6% against 89.3 for 32768's looped rows, now RMS's 49152 entry). The 65536 key also serves rows of
# 49153-65535: the entry against the held whole row and 4096-column looped rows at 57344 (chunks tile the row) and
# 60000 (a ragged last chunk), LN and RMS, 49152 rows, three passes.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=src timeout 400 python -c "
import sys; sys.path.insert(0, 'benchmarks/scripts')
import tune_norms as T; T.ELEMS_CAP = 1 << 33
import norm_configs_ab as A
sys.argv = ['norm_configs_ab.py', '--fwd', '--passes', '3', '--ns', '57344,60000', '--rms-ns', '57344,60000,40000',
            '--rows', '49152', '--configs', 'NormConfig(1, 4096, True, 16, 1, 0, evict=True, unroll=8); '
            'NormConfig(1, 65536, False, 32, 1, 0, hold_loaded=True); NormConfig(1, 8192, True, 32, 1, sms, evict=True, unroll=8)']
A.main()" 2>&1 | tail -22
