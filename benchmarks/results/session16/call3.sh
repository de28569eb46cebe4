export PYTHONPATH=src PYTHONUNBUFFERED=1
R=benchmarks/scripts
python $R/norm_configs_ab.py --looped --ns 1024,2048,4096,8192,16384,32768,65536 --rms-ns 4096,8192,16384,32768,65536 --deadline 190 > $OUT/looped_bf16.log 2>&1; grep "==\|current" $OUT/looped_bf16.log
python $R/norm_configs_ab.py --looped --dtype float32 --ns 1024,2048,4096,8192,16384,32768,65536 --rms-ns 1024,2048,4096,8192,16384,65536 --deadline 190 > $OUT/looped_fp32.log 2>&1; grep "==\|current" $OUT/looped_fp32.log
