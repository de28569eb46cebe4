# session 43, call 8: LN backward at 256 (42% in GPU time; target 50) and 512: the whole backward sweep on the H200,
# and persistent grids with more tiles in flight (prefetch, more programs an SM), bf16
export PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
timeout 300 python $A --all --passes 2 --ns 256,512 --rms-ns "" 2>&1 | grep -E "current|N=   256" | sort -t% -k1 | tail -60
mv $OUT/norm_configs_ab.json $OUT/sweep_256_512.json
python $A --passes 2 --ns 256 --rms-ns 256 --configs "NormConfig(16, 256, False, 8, 3, sms * 6);NormConfig(8, 256, False, 4, 3, sms * 8);NormConfig(4, 256, False, 2, 3, sms * 16);NormConfig(32, 256, False, 8, 3, sms * 4);NormConfig(64, 256, False, 16, 3, sms * 2);NormConfig(16, 256, False, 4, 3, sms * 8)" 2>&1 | grep -E "fwd|bwd" | tail -20
mv $OUT/norm_configs_ab.json $OUT/more_256.json
