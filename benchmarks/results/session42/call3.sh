# Session 42, call 3 (carry ["ab"]): (1) where LN forward's 24576 key should change from chunks (2048 x w8, u8) to
# the held 16384 + least 4096 (call 2: chunks won at 17408-18432 and 20480, lost at 20000, 22528, 24576): trees v1 and
# chunk at rows between. (2) float32 RMS forward's 12288 key: its entry (2 x 8192, w32) against 1 x 8192, w16 with
# a second piece of at least 2048 (call 1: 8448 89.2 -> 97.9, 9216 94.5 -> 97.9), at the key's other rows.
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for t in v1 chunk; do
  PYTHONPATH=ab/$t/src timeout 90 python ab/$t/$A --current --fwd --ns 16896,17000,17920,18432,19000,19456,20480,21504 --rms-ns "" --dtype bfloat16 --passes 2 > $OUT/bf16_$t.log 2>&1
  echo "== bf16 $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/bf16_$t.log | cut -c1-90
done
PYTHONPATH=src timeout 90 python $A --fwd --ns "" --rms-ns 8448,9216,10240 --dtype float32 --passes 2 --configs "NormConfig(1, 8192, False, 16, block_n2=2048)" > $OUT/fp32_rms_a.log 2>&1
echo "== fp32 RMS a (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_rms_a.log | cut -c1-90
PYTHONPATH=src timeout 90 python $A --fwd --ns "" --rms-ns 10500,11264,12288 --dtype float32 --passes 2 --configs "NormConfig(1, 8192, False, 16, block_n2=4096)" > $OUT/fp32_rms_b.log 2>&1
echo "== fp32 RMS b (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_rms_b.log | cut -c1-90
