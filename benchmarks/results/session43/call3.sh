# session 43, call 3: RMS forward's 49152 key as a held 32768 + rest (x as loaded, 32 warps) over the key's rows;
# persistent held rows with the next row prefetched (2 stages), LN and RMS, bf16
export PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
python $A --fwd --passes 2 --ns "" --rms-ns 33000,36000,40000,45000,49152 --configs "NormConfig(1, 32768, False, 32, block_n2=max(4096, np2(n - 32768)), hold_loaded=True);NormConfig(1, 32768, False, 32, block_n2=max(8192, np2(n - 32768)), hold_loaded=True)" 2>&1 | tail -8
mv $OUT/norm_configs_ab.json $OUT/ab_rms_rows.json
python $A --fwd --passes 2 --ns 32768 --rms-ns 32768 --configs "NormConfig(1, 32768, False, 32, 2, sms, hold_loaded=True);NormConfig(1, 16384, False, 32, 2, sms, block_n2=16384, hold_loaded=True);NormConfig(1, 16384, False, 16, 2, sms, block_n2=16384, hold_loaded=True)" 2>&1 | tail -3
mv $OUT/norm_configs_ab.json $OUT/ab_p32768.json
python $A --fwd --passes 2 --ns 49152 --rms-ns 49152 --configs "NormConfig(1, 32768, False, 32, 2, sms, block_n2=16384, hold_loaded=True)" 2>&1 | tail -3
mv $OUT/norm_configs_ab.json $OUT/ab_p49152.json
python $A --fwd --passes 2 --ns 24576,16384 --rms-ns "" --configs "NormConfig(1, 16384, False, 16, 2, sms, block_n2=max(4096, n - 16384) if n > 16384 else 0, hold_loaded=True);NormConfig(1, 16384, False, 16, 3, sms, block_n2=max(4096, n - 16384) if n > 16384 else 0, hold_loaded=True)" 2>&1 | tail -3
mv $OUT/norm_configs_ab.json $OUT/ab_p24576.json
