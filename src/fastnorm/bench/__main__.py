"""``python -m fastnorm.bench SUITE [options]`` (also ``fastnorm bench SUITE``): SUITE is one of ``SUITES``.

Each suite prints its tables, and writes ``SUITE.json`` and its PNG plots to ``--out``.
"""

from __future__ import annotations

import sys

SUITES = {
    "layernorm": "LayerNorm vs peers, x (49152, N), forward and backward",
    "rmsnorm": "RMSNorm vs peers, x (49152, N), forward and backward",
    "batchnorm": "BatchNorm2d train/eval/frozen, NCHW and channels_last, vs torch eager and torch.compile",
    "syncbn": "SyncBatchNorm step vs torch.nn.SyncBatchNorm (run under torchrun with 2+ GPUs)",
}


def usage() -> str:
    lines = ["usage: python -m fastnorm.bench SUITE [options]   (SUITE --help for its options)", "", "suites:"]
    lines += [f"  {name:10s} {what}" for name, what in SUITES.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    suite, rest = argv[0], argv[1:]
    if suite in ("layernorm", "rmsnorm"):
        from .norms import main as norms_main

        return norms_main(rest, suite)
    if suite == "batchnorm":
        from .batchnorm import main as bn_main

        return bn_main(rest)
    if suite == "syncbn":
        try:
            from . import syncbn
        except ImportError as exc:
            print(f"the syncbn suite is not in this build ({exc})", file=sys.stderr)
            return 1
        return int(syncbn.main(rest))
    print(f"unknown suite {suite!r}\n\n{usage()}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
