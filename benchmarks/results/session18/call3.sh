# Session 18, call 3: (a) the new table entries against the old on one machine (bf16 LN backward 12288 3 stages,
# 16384 hold_loaded; kernels only, two passes); (b) hold_loaded in the split rows (32768, 65536: LN and RMS);
# (c) the CUDA tests of hold_loaded, split and whole-row backward.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=norm_configs_ab.py
python benchmarks/scripts/$A --configs "NormConfig(1,8192,False,16,1,sms,True,4096);NormConfig(1,16384,False,16,3,sms,True)" --ns 12288,16384 --rms-ns "" --passes 2 > $OUT/c3_whole.log 2>&1
S8="NormConfig(1,8192,False,16,1,sms,False,split=True,early_loads=True)"
S8H="NormConfig(1,8192,False,16,1,sms,False,split=True,early_loads=True,hold_loaded=True)"
S8WH="NormConfig(1,8192,False,16,1,sms,True,split=True,early_loads=True,hold_loaded=True)"
S8LH="NormConfig(1,8192,False,16,1,sms,False,split=True,early_loads=False,hold_loaded=True)"
S4H="NormConfig(1,4096,False,8,1,2*sms,True,split=True,early_loads=True,hold_loaded=True)"
python benchmarks/scripts/$A --configs "$S8;$S8H;$S8WH;$S8LH;$S4H" --ns 32768,65536 --rms-ns 32768,65536 --passes 2 > $OUT/c3_split.log 2>&1
timeout 150 python -m pytest -q -x tests/test_layer_norm.py -k "hold_loaded or split or two_piece or prefetched or weight_in_loop or long or large" > $OUT/c3_pytest.log 2>&1; tail -3 $OUT/c3_pytest.log
for f in $OUT/c3_whole.log $OUT/c3_split.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|RMS|skip)" $f | cut -c1-150; done
