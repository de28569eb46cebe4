# Session 20, call 7: host time of the eager path, HEAD (ab/base/src) against the working tree (programs as generated
# straight-line functions, the tensor signature and alias test inside Programs.run, apply_function): profile_host's
# cold steps (forward / backward / step, torch beside), two rounds alternating the trees; then backward_host.py per tree.
export PYTHONUNBUFFERED=1
for r in 1 2; do for t in ab/base/src src; do
  echo "== round $r tree $t"
  PYTHONPATH=$t:benchmarks/scripts timeout 120 python benchmarks/scripts/profile_host.py --profile '' --bn-shapes 16x256x56x56,32x2048x7x7 --norm-ns 256,1024 --iters 100 2>&1 | grep "^| "
done; done > $OUT/host_ab.log
cat $OUT/host_ab.log
for t in ab/base/src src; do
  echo "== backward_host tree $t"
  PYTHONPATH=$t:benchmarks/scripts timeout 120 python benchmarks/scripts/backward_host.py 2>&1 | grep "^| " | grep -v "no-work\|x\*1\|torch.empty"
done > $OUT/backward_host_ab.log
cat $OUT/backward_host_ab.log
