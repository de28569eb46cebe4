# Session 18, call 6: hold_loaded in the forward's whole rows (final form: LayerNorm forms x again after the mean's
# reduction too; the zero-add is no longer a pure asm, so two of them are not merged): bf16 LN/RMS forward 65536
# against the current chunked entries; the backward's 16384 entry again (the asm change); CUDA tests.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
A=benchmarks/scripts/norm_configs_ab.py
python $A --fwd --configs "NormConfig(1,65536,False,32,1,0,hold_loaded=True);NormConfig(1,65536,False,32,1,0)" --ns 65536 --rms-ns 65536 --passes 2 > $OUT/c6_fwd64k.log 2>&1
python $A --configs "NormConfig(1,16384,False,16,3,sms,True)" --ns 16384 --rms-ns "" --passes 2 > $OUT/c6_bwd16k.log 2>&1
timeout 120 python -m pytest -q tests/test_layer_norm.py -k "hold_loaded or two_piece or prefetched" > $OUT/c6_pytest.log 2>&1; tail -3 $OUT/c6_pytest.log
for f in $OUT/c6_f*.log $OUT/c6_b*.log; do echo "== $(basename $f)"; grep -E "^device|^  (LN|RMS|skip)" $f | cut -c1-150; done
