# Session 18, call 4: (a) the CUDA tests of hold_loaded (no longer bitwise: compiled, dx may contract another
# product) and the LN backward tests; (b) bf16 RMS backward 12288 (no entry: 16384's masked tile) and 16384 with
# the LN winners (two pieces with 3 stages; hold_loaded); (c) LN 10000 (key 12288, 8192 + 2048) against 1 stage.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
timeout 200 python -m pytest -q tests/test_layer_norm.py -k "hold_loaded or split or two_piece or prefetched or weight_in_loop or long or large or backward" > $OUT/c4_pytest.log 2>&1; tail -3 $OUT/c4_pytest.log
A=benchmarks/scripts/norm_configs_ab.py
python $A --configs "NormConfig(1,8192,False,16,3,sms,True,4096);NormConfig(1,8192,False,16,3,sms,False,4096);NormConfig(1,16384,False,16,3,sms,True,hold_loaded=True);NormConfig(1,16384,False,16,3,sms,True)" --ns "" --rms-ns 12288 --passes 2 > $OUT/c4_rms12k.log 2>&1
python $A --configs "NormConfig(1,16384,False,16,3,sms,True,hold_loaded=True);NormConfig(1,16384,False,16,3,sms,True);NormConfig(1,16384,False,16,1,sms,True,hold_loaded=True)" --ns "" --rms-ns 16384 --passes 2 > $OUT/c4_rms16k.log 2>&1
python $A --configs "NormConfig(1,8192,False,16,1,sms,True,2048);NormConfig(1,8192,False,16,3,sms,True,2048,hold_loaded=True)" --ns 10000 --rms-ns "" --passes 2 > $OUT/c4_ln10k.log 2>&1
for f in $OUT/c4_r*.log $OUT/c4_ln*.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|RMS|skip)" $f | cut -c1-150; done
