# session 43, call 2: held whole rows (x as loaded) in the forward at 24576-65536, as one or two pieces, bf16
export PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
python $A --fwd --passes 2 --ns 32768 --rms-ns 32768 --configs "NormConfig(1, 32768, False, 32, hold_loaded=True);NormConfig(1, 16384, False, 16, block_n2=16384, hold_loaded=True);NormConfig(1, 32768, False, 16, hold_loaded=True);NormConfig(1, 16384, False, 32, block_n2=16384, hold_loaded=True)" 2>&1 | tail -14
mv $OUT/norm_configs_ab.json $OUT/ab_32768.json
python $A --fwd --passes 2 --ns 49152 --rms-ns 49152 --configs "NormConfig(1, 32768, False, 32, block_n2=16384, hold_loaded=True);NormConfig(1, 32768, False, 16, block_n2=16384, hold_loaded=True);NormConfig(1, 65536, False, 32, hold_loaded=True)" 2>&1 | tail -12
mv $OUT/norm_configs_ab.json $OUT/ab_49152.json
python $A --fwd --passes 2 --ns 65536 --rms-ns 65536 --configs "NormConfig(1, 32768, False, 32, block_n2=32768, hold_loaded=True);NormConfig(1, 65536, False, 32, hold_loaded=True)" 2>&1 | tail -10
mv $OUT/norm_configs_ab.json $OUT/ab_65536.json
python $A --fwd --passes 2 --ns 24576 --rms-ns "" --configs "NormConfig(1, 16384, False, 32, block_n2=8192, hold_loaded=True);NormConfig(1, 16384, False, 16, block_n2=8192, hold_loaded=True);NormConfig(1, 16384, False, 16, block_n2=8192)" 2>&1 | tail -8
mv $OUT/norm_configs_ab.json $OUT/ab_24576.json
