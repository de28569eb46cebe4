"""The ``fastnorm`` command (also ``python -m fastnorm``).

* ``fastnorm check [--quick]`` — every op against the float64 NumPy reference, forward and backward; exit
  status 1 when anything fails.
* ``fastnorm bench SUITE [options]`` — one benchmark suite (``layernorm``, ``rmsnorm``, ``batchnorm``,
  ``syncbn``), as ``python -m fastnorm.bench SUITE``.
* ``fastnorm report [--out DIR] [--quick]`` — the check, and on a GPU every benchmark suite, written to
  ``DIR/report.md`` with plots and raw JSON.

``--interpret`` (check, report) restarts the command with ``TRITON_INTERPRET=1`` on a machine without a GPU,
so the Triton kernels themselves run through Triton's interpreter (the variable must be set before the
kernels are imported).
"""

from __future__ import annotations

import argparse
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fastnorm", description="fastnorm: exact, memory-speed normalization layers")
    sub = p.add_subparsers(dest="command", required=True, metavar="{check,bench,report}")

    c = sub.add_parser("check", help="check every op against the float64 reference (exit 1 on failure)")
    c.add_argument("--quick", action="store_true", help="a smaller battery")
    c.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when present, else cpu")
    c.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    c.add_argument("--ops", help="comma list of layer_norm,rms_norm,batch_norm,'bn stages',module (default: all)")
    c.add_argument("--interpret", action="store_true", help="on a CPU, run the Triton kernels through the interpreter")
    c.add_argument("--jobs", type=int, help="worker processes (default: up to 8 on a GPU, 1 on a CPU)")

    b = sub.add_parser("bench", help="run a benchmark suite (python -m fastnorm.bench SUITE --help)", add_help=False)
    b.add_argument("args", nargs=argparse.REMAINDER, help="SUITE and its options")

    r = sub.add_parser("report", help="check + benchmarks (on a GPU) -> DIR/report.md, plots, JSON")
    r.add_argument("--out", default="report", help="output directory (default: report)")
    r.add_argument("--quick", action="store_true", help="a few minutes instead of up to ~30")
    r.add_argument("--suites", help="comma list of layernorm,rmsnorm,batchnorm,syncbn, or none "
                                    "(default: all that apply)")
    r.add_argument("--skip-check", action="store_true", help="benchmarks only")
    r.add_argument("--reuse", action="store_true",
                   help="keep results already in --out (check.json when --skip-check, and the suites not run now): "
                        "build one report over several shorter runs")
    r.add_argument("--interpret", action="store_true", help="on a CPU, run the Triton kernels through the interpreter")
    return p


def _restart_interpreted(argv: list[str]) -> None:
    """Replace this process by the same command with ``TRITON_INTERPRET=1`` (no return)."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    args = [a for a in argv if a != "--interpret"]
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "fastnorm", *args], env)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # everything after "bench" belongs to the suite's own parser (--help included)
        from .bench.__main__ import main as bench_main

        return bench_main(argv[1:])
    args = build_parser().parse_args(argv)

    if getattr(args, "interpret", False) and os.environ.get("TRITON_INTERPRET", "0") != "1":
        import torch

        if torch.cuda.is_available():
            print("--interpret ignored: a CUDA device is present, and the kernels run on it", file=sys.stderr)
        else:
            _restart_interpreted(argv)

    if args.command == "check":
        from . import check

        ops = [s.strip() for s in args.ops.split(",")] if args.ops else None
        unknown = [o for o in ops or [] if o not in check.RUNNERS]
        if unknown:
            print(f"fastnorm check: unknown --ops {', '.join(unknown)} (choose from {', '.join(check.RUNNERS)})",
                  file=sys.stderr)
            return 2
        if args.jobs is not None and args.jobs < 1:
            print(f"fastnorm check: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
            return 2
        return check.main(args.quick, args.device, args.json, ops, args.jobs)

    from . import report

    suites = [s.strip() for s in args.suites.split(",") if s.strip()] if args.suites else None
    return report.main(args.out, args.quick, suites=suites, skip_check=args.skip_check, reuse=args.reuse)


if __name__ == "__main__":
    sys.exit(main())
