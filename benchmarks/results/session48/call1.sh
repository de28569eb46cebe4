# Session 48, call 1 (one H200): branch bwd-reg-prefetch (the whole-row backward's next tile prefetched into
# registers, not through shared memory). (a) kernels only, norm_configs_ab, bf16, 3 passes: the current entry vs
# reg_prefetch configs at LN/RMS 256, 512, 1024; (b) the suites' harness (GPU time), trees ab/base (main) vs ab/new
# (the branch with the current entries' shapes at 1 stage + reg_prefetch), two alternating rounds.
export PYTHONUNBUFFERED=1 PYTHONPATH=src
RP="reg_prefetch=True"
C256="NormConfig(32,256,False,16,1,sms,$RP);NormConfig(16,256,False,8,1,2*sms,$RP);NormConfig(8,256,False,4,1,4*sms,$RP);NormConfig(16,256,False,16,1,sms,$RP);NormConfig(64,256,False,16,1,sms,$RP);NormConfig(32,256,False,8,1,2*sms,$RP)"
C512="NormConfig(4,512,False,4,1,4*sms,$RP);NormConfig(8,512,False,8,1,2*sms,$RP);NormConfig(16,512,False,16,1,sms,$RP);NormConfig(8,512,False,4,1,4*sms,$RP);NormConfig(2,512,False,2,1,8*sms,$RP);NormConfig(16,512,False,8,1,2*sms,$RP)"
C1024="NormConfig(2,1024,False,4,1,4*sms,$RP);NormConfig(4,1024,False,8,1,2*sms,$RP);NormConfig(8,1024,False,16,1,sms,$RP);NormConfig(1,1024,False,2,1,8*sms,$RP);NormConfig(4,1024,False,4,1,4*sms,$RP)"
for spec in "256:256:$C256" "512:512:$C512" "1024::$C1024"; do
  IFS=: read -r ns rns cf <<< "$spec"
  echo "=== kernels only N=$ns (${SECONDS}s)"
  timeout 150 python benchmarks/scripts/norm_configs_ab.py --passes 3 --ns $ns --rms-ns "$rns" --configs "$cf" 2>&1 \
    | sed -n '/^device/,$p' | tail -40
  cp "$OUT/norm_configs_ab.json" "$OUT/ab_$ns.json" 2>/dev/null
done
for r in 1 2; do for t in base new; do
  [ $SECONDS -gt 470 ] && { echo "=== skipped round $r $t (${SECONDS}s)"; continue; }
  echo "=== suites' harness round $r tree $t"
  (cd ab/$t && PYTHONPATH=src timeout 100 python -m fastnorm.bench layernorm --shapes 256,512,1024 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/ln_${t}_$r 2>&1 | tail -8)
  (cd ab/$t && PYTHONPATH=src timeout 80 python -m fastnorm.bench rmsnorm --shapes 256,512 --dtypes bf16 \
     --no-models --compile none --no-plots --impls fastnorm,copy --ops bwd --out $OUT/rms_${t}_$r 2>&1 | tail -6)
done; done
