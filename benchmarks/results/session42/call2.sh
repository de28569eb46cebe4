# Session 42, call 2 (carry ["ab"]): source trees compared, --current per tree (kernels only, GPU time, % of copy).
# ab/base = HEAD 0967788. ab/v1: float32 least second pieces (LN fwd 12288 key least_n2 2048, LN fwd 768 key 256; a
# new RMS fwd 12288 key (1, 8192, w16) least 2048) and bf16 LN fwd 24576 key held 16384 + least_n2 4096 (for the
# fixed 8192). ab/v3: that key + least_n2 2048. ab/chunk: that key as 2048 x w8 chunks, u8 (call 1: 18432 88.9,
# 20480 84.7 against 68.7 / 75.3).
export PYTHONUNBUFFERED=1
A=benchmarks/scripts/norm_configs_ab.py
for t in base v1 v3 chunk; do
  PYTHONPATH=ab/$t/src timeout 90 python ab/$t/$A --current --fwd --ns 17408,18432,20000,20480,22528,24576 --rms-ns "" --dtype bfloat16 --passes 2 > $OUT/bf16_$t.log 2>&1
  echo "== bf16 $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/bf16_$t.log | cut -c1-90
done
for t in base v1; do
  PYTHONPATH=ab/$t/src timeout 90 python ab/$t/$A --current --fwd --ns 544,640,8448,8704,9216 --rms-ns 8448,9216,10240,11264,12288 --dtype float32 --passes 2 > $OUT/fp32_$t.log 2>&1
  echo "== fp32 $t (rc $?)"; grep -hE "^  (LN|RMS)" $OUT/fp32_$t.log | cut -c1-90
done
