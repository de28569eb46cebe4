"""The speed targets of the issues, scored on the suites' records: how many cells meet them, as timed and in GPU time
alone (``common.Timer.graph_ms``), and at how many a peer is faster.

Targets (% of copy bandwidth on the fewest bytes, the same run):

* LayerNorm / RMSNorm, bfloat16, x of shape (49152, N): forward >= 90 for 512 <= N <= 65536 and >= 70 at N = 128
  and 256; backward (dx and the parameter gradients) >= 80 for 1024 <= N <= 32768 and >= 50 at N = 256.
* BatchNorm, every listed shape, layout and dtype: training forward >= 60, training backward >= 55, evaluation
  forward and frozen backward >= 85.

Both also ask that fastnorm be no slower than any peer anywhere; a peer counts as faster only beyond
``PEER_MARGIN`` (the run-to-run noise of one figure). A missed cell where the suite's reference (torch's copy of the
same bytes under the same timer, ``common.REFERENCE``) is below the target too, in its better figure, is a cell
where the device's copy of those bytes does not reach it either (``COPY_SHORT_MARK``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import common

BN_TARGETS = {"train_fwd": 60.0, "train_bwd": 55.0, "eval_fwd": 85.0, "frozen_bwd": 85.0}
PEER_MARGIN = 0.02
#: Marks a missed cell where the copy of the same bytes is below the target too.
COPY_SHORT_MARK = "ᶜ"
_SHORT = {common.dtype_name(d): short for d, short in common.SHORT_DTYPE.items()}
#: The figures a cell is scored on: as timed (host time included where it reaches the GPU's), and GPU time alone.
KEYS = {"timed": ("pct_copy", "ms"), "gpu": ("graph_pct_copy", "graph_ms")}


#: LayerNorm/RMSNorm (bfloat16) by direction: ((lowest N, highest N, % of copy), ...) — the first span holding N.
NORM_TARGETS = {"fwd": ((512, 65536, 90.0), (128, 128, 70.0), (256, 256, 70.0)),
                "bwd": ((1024, 32768, 80.0), (256, 256, 50.0))}


def norm_target(direction: str, n: int) -> float | None:
    """The % of copy a LayerNorm/RMSNorm direction must reach at N (bfloat16); None where no target is set."""
    return next((pct for lo, hi, pct in NORM_TARGETS[direction] if lo <= n <= hi), None)


def describe_norm_target(direction: str) -> str:
    """NORM_TARGETS[direction] in words, one part per target, e.g. "≥ 90 (512 ≤ N ≤ 65536), ≥ 70 (N = 128, 256)"."""
    spans: dict[float, list[str]] = {}
    for lo, hi, pct in NORM_TARGETS[direction]:
        spans.setdefault(pct, []).append(str(lo) if lo == hi else f"{lo} ≤ N ≤ {hi}")
    return ", ".join(f"≥ {pct:g} ({'N = ' if parts[0].isdigit() else ''}{', '.join(parts)})"
                     for pct, parts in spans.items())


@dataclass
class Score:
    """One group of cells (a suite's direction or mode): its target(s) and, per figure kind (``KEYS``), the cells
    measured, those meeting their target, those where a peer is faster, the missed cells, and those of them where the
    copy of the same bytes (the suite's reference) is below the target too."""

    cells: int = 0
    measured: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEYS, 0))
    met: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEYS, 0))
    peer_faster: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEYS, 0))
    misses: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KEYS})
    copy_short: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KEYS})

    @property
    def shown(self) -> str:
        """The figure kind a summary shows: GPU time where measured, else as timed."""
        return "gpu" if self.measured["gpu"] else "timed"

    def missed_at(self, kind: str | None = None) -> list[str]:
        """The missed cells' labels in ``kind``'s figures (default ``shown``), each marked where the copy of the same
        bytes misses too."""
        kind = kind or self.shown
        return [m + (COPY_SHORT_MARK if m in self.copy_short[kind] else "") for m in self.misses[kind]]


def score(cells: Iterable[tuple[str, float, dict[str, dict]]]) -> Score:
    """Score ``(label, target, implementation -> record)`` cells (see ``Score``)."""
    out = Score()
    for label, target, recs in cells:
        out.cells += 1
        mine, ref = recs.get(common.FASTNORM), recs.get(common.REFERENCE)
        if mine is None or mine["status"] != "ok":
            continue
        for kind, (pct, ms) in KEYS.items():
            if mine.get(pct) is None:
                continue
            out.measured[kind] += 1
            if mine[pct] >= target:
                out.met[kind] += 1
            else:
                out.misses[kind].append(label)
                if _copy_rate(ref) < target:
                    out.copy_short[kind].append(label)
            best = common.speedup(recs, ms)  # (best peer's time / fastnorm's, the peer)
            if best and best[0] * (1 + PEER_MARGIN) < 1:
                out.peer_faster[kind] += 1
    return out


def _copy_rate(ref: dict | None) -> float:
    """The best % of copy the reference record reached in any of its figures (a graph replay of a large copy can
    read lower than the eager copy: the higher one is what the copy can do); infinite without one."""
    rates = [ref[pct] for pct, _ in KEYS.values() if ref and ref["status"] == "ok" and ref.get(pct) is not None]
    return max(rates, default=float("inf"))


def _cells(doc: dict, key: Callable[[dict], tuple], target: Callable[[dict], float | None],
           label: Callable[[dict], str]) -> dict[tuple, list]:
    """The records of ``doc`` as cells grouped by ``key``: group -> [(label, target, implementation -> record)]."""
    by_cell: dict[tuple, dict[str, dict]] = {}
    for r in doc["records"]:
        aim = target(r)
        if aim is not None:
            by_cell.setdefault((*key(r), label(r), aim), {})[r["impl"]] = r
    groups: dict[tuple, list] = {}
    for (*group, name, aim), recs in by_cell.items():
        groups.setdefault(tuple(group), []).append((name, aim, recs))
    return groups


def norm_scores(doc: dict, dtype: str = "bfloat16") -> dict[str, Score]:
    """A LayerNorm/RMSNorm suite's (49152, N) sweep in ``dtype``, scored per direction."""
    groups = _cells(doc, lambda r: (r["direction"],),
                    lambda r: norm_target(r["direction"], r["n"])
                    if r["dtype"] == dtype and r.get("group") == "sweep" else None,
                    lambda r: str(r["n"]))
    return {direction: score(cells) for (direction,), cells in groups.items()}


def bn_scores(doc: dict) -> dict[str, Score]:
    """A BatchNorm suite's cells (every shape, layout and dtype), scored per mode."""
    groups = _cells(doc, lambda r: (r["mode"],), lambda r: BN_TARGETS.get(r["mode"]),
                    lambda r: f"{_SHORT.get(r['dtype'], r['dtype'])} {r['layout']} {r['label']}")
    return {mode: score(cells) for (mode,), cells in sorted(groups.items(), key=lambda g: list(BN_TARGETS).index(
        g[0][0]))}
