# session 43, call 5: RMS forward's 65536 key rows (49153-65536) held as 32768 + the rest against the whole held row
export PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
python $A --fwd --passes 2 --ns "" --rms-ns 49160,53248,57344,61440,65536 --configs "NormConfig(1, 32768, False, 32, block_n2=32768, hold_loaded=True);NormConfig(1, 65536, False, 32, hold_loaded=True)" 2>&1 | grep "RMS fwd"
