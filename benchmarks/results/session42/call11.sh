# Session 42, call 11 (tree 4a7ddce): the reference tests on CUDA at the new boundary rows (the first rows read in
# vectors past each least entry's first piece: float32 520 / 8200 and the 16-bit ones up to 16392) and the other
# rows the least pieces changed (the held LN forward's 16385-24575 rows are in the large test, call 4).
export PYTHONUNBUFFERED=1
PYTHONPATH=src timeout 400 python -m pytest -q -p no:cacheprovider -n 16 tests/test_layer_norm.py -k "matches_reference and (520- or 1032- or 2056- or 4104- or 8200- or 16392- or 16385- or 16386- or 24577-)" > $OUT/tests.log 2>&1
echo "== tests (rc $?)"; grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
