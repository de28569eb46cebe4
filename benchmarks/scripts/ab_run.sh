# The suites' harness for a device A/B call, one shape a process (source this file from the repository root):
#   ab_run TREE SUITE N DTYPE OP VARIANT ROUND [NAME=value ...]
# runs `python -m fastnorm.bench SUITE` on x of (rows, N) for OP (fwd or bwd) and DTYPE beside the copy (GPU time;
# no models, no torch.compile, no plots) in the source tree ab/TREE with the environment given (the A/B trees' knobs,
# e.g. NT=... for NORM_TUNED entries), and leaves $OUT/runs/SUITE_VARIANT_ROUND/SUITE_OP_N.json for harness_table.py
# (VARIANT and ROUND without underscores; until session 52 the name lacked OP, so a variant's forward and backward at
# one N overwrote each other). AB_TIMEOUT: seconds a run (default 90).
ab_run() {
  local tree=$1 suite=$2 n=$3 dtype=$4 op=$5 variant=$6 round=$7
  shift 7
  local dir=$OUT/runs/${suite}_${variant}_${round}
  (cd "ab/$tree" && env "$@" PYTHONPATH=src timeout "${AB_TIMEOUT:-90}" python -m fastnorm.bench "$suite" \
     --shapes "$n" --dtypes "$dtype" --no-models --compile none --no-plots --impls fastnorm,copy --ops "$op" \
     --out "$dir" >/dev/null 2>&1) || echo "FAILED $tree $suite $n $dtype $op $variant $round"
  mv "$dir/$suite.json" "$dir/${suite}_${op}_$n.json" 2>/dev/null
}
