"""A per-program timeline of BatchNorm's statistics pass: where its fixed cost goes (NOTES.md, session 31).

    python3 benchmarks/scripts/bn_timeline.py [--dtype bf16] [--cl] [--runs 5] [--set 'NAME=literal;...'] N C H W

Copies ``src`` to a temporary tree and patches ``_bn_fwd_fused_kernel`` there to write ``%globaltimer`` (ns) at
points of every program of the statistics launch (``fastnorm.ops.batch_norm.local_stats``, MODE 1): its start,
the end of its item's loop, the end of its statistics branch (partial stored, arrivals and any merge done), for
the program that writes a channel block's final statistics that write, and in the merging programs the start and
end of a sub-group's merge and the start of the channel block's. The stamps go, as the low 32 bits, into the
launch's scratch buffer past its partials (the patched ``stats`` allocates the room and keeps the buffer). Nothing in
``src`` changes. Prints, per run, the launch's span by CUDA events and by the stamps, and percentiles (from the
earliest start) of each point over the programs: the start spread is the grid's ramp-up, the loop ends' spread the
imbalance, and the time from the last loop end to the last final write the merge chain's tail; then, over the
merging programs, how long each step of the chain took (percentiles p0/p50/p100, µs). ``--set``: overrides of
``fastnorm.kernels.config``, as ``bn_ab.py`` takes them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

_STAMP = '''

@triton.jit
def _stamp(part_ptr, at, k):
    """The low 32 bits of %globaltimer at part_ptr (as int32 words) + at + k (the timeline patch)."""
    t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(part_ptr.to(tl.pointer_type(tl.int32)) + at + k, (t & 0xFFFFFFFF).to(tl.int32))

'''

# (anchor, replacement) pairs applied to fastnorm/kernels/batch_norm.py of the copy; each anchor must occur once.
_PATCHES = [
    ("@triton.jit(do_not_specialize=[\"S_MG\", \"KEEPV\"])\ndef _bn_fwd_fused_kernel(",
     _STAMP + "@triton.jit(do_not_specialize=[\"S_MG\", \"KEEPV\"])\ndef _bn_fwd_fused_kernel("),
    ("    if kind == _STATS:\n        shift = _channel_shift(x_ptr, c, cmask, S, S_RT, ACC)\n",
     "    at = 3 * C * (SPLIT + NSUB) + 8 * tl.program_id(0)\n"
     "    if kind == _STATS:\n        _stamp(part_ptr, at, 0)\n"
     "        shift = _channel_shift(x_ptr, c, cmask, S, S_RT, ACC)\n"),
    ("                                    BS, STAGES, KEEP, ACC)\n        # The channel block's statistics",
     "                                    BS, STAGES, KEEP, ACC)\n        _stamp(part_ptr, at, 1)\n"
     "        # The channel block's statistics"),
    ("            if _arrive(sub_ptr + cb * NSUB + jj, j1 - j0):\n"
     "                sn_, fmean, fm2 = _merge_partials(part_ptr, c, cmask, j0, j1, C * SPLIT, SPLIT, MS, CB, ACC)\n",
     "            if _arrive(sub_ptr + cb * NSUB + jj, j1 - j0):\n                _stamp(part_ptr, at, 4)\n"
     "                sn_, fmean, fm2 = _merge_partials(part_ptr, c, cmask, j0, j1, C * SPLIT, SPLIT, MS, CB, ACC)\n"
     "                _stamp(part_ptr, at, 5)\n"),
    ("                    if last:\n                        _, fmean, fm2 = _merge_partials(p2_ptr",
     "                    if last:\n                        _stamp(part_ptr, at, 6)\n"
     "                        _, fmean, fm2 = _merge_partials(p2_ptr"),
    ("        if last:\n            if STATS_ONLY:\n",
     "        if last:\n            _stamp(part_ptr, at, 3)\n            if STATS_ONLY:\n"),
    ("                if MODE == 0:\n                    if _arrive(grp_ptr + g, NCB_G):\n"
     "                        tl.atomic_xchg(ready_ptr + g, 1, sem=\"release\", scope=\"gpu\")\n    elif MODE == 0:\n"
     "        _pass_ready(ready_ptr, G, g, K)\n",
     "                if MODE == 0:\n                    if _arrive(grp_ptr + g, NCB_G):\n"
     "                        tl.atomic_xchg(ready_ptr + g, 1, sem=\"release\", scope=\"gpu\")\n"
     "        _stamp(part_ptr, at, 2)\n    elif MODE == 0:\n        _pass_ready(ready_ptr, G, g, K)\n"),
    ("    part = _scratch(3 * c * (plan.split + plan.nsub), acc, dev)\n    sync = _sync(plan, dev)\n"
     "    ch, cl = _hilo(float(xv.count))\n",
     "    global TIMELINE\n    grid = plan.groups * plan.ncb_g * plan.split\n"
     "    part = torch.zeros(3 * c * (plan.split + plan.nsub) + 8 * grid, dtype=acc, device=dev)\n"
     "    TIMELINE = (part, grid)\n"
     "    sync = _sync(plan, dev)\n    ch, cl = _hilo(float(xv.count))\n"),
]


def traced_tree() -> str:
    """A temporary copy of ``src`` with the timeline patch applied -> its path (for sys.path)."""
    tree = tempfile.mkdtemp(prefix="bn_timeline_")
    shutil.copytree(os.path.join(ROOT, "src", "fastnorm"), os.path.join(tree, "fastnorm"))
    path = os.path.join(tree, "fastnorm", "kernels", "batch_norm.py")
    with open(path) as f:
        text = f.read()
    for anchor, new in _PATCHES:
        if text.count(anchor) != 1:
            raise SystemExit(f"the timeline patch no longer fits batch_norm.py at:\n{anchor}")
        text = text.replace(anchor, new)
    with open(path, "w") as f:
        f.write(text)
    return tree


def _pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", nargs=4, type=int, help="N C H W")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--cl", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--set", default="")
    args = ap.parse_args()
    sys.path.insert(0, traced_tree())
    sys.path.insert(1, HERE)
    import torch
    import tune_batchnorm as tb

    import fastnorm
    from fastnorm.kernels import batch_norm as K

    assert K.__file__.startswith(tempfile.gettempdir()), K.__file__
    from bn_ab import _overrides

    tb._apply_overrides(_overrides(args.set))
    case = tb.make_case(tuple(args.shape), args.dtype, args.cl)
    x = case["x"]
    fastnorm.ops.batch_norm.local_stats(x)  # compile
    torch.cuda.synchronize()
    layout = "CL" if args.cl else "NCHW"
    print(f"{args.dtype} {layout} {tuple(args.shape)}: µs from the earliest program start; "
          f"p0/p50/p90/p100 over the programs{'; ' + args.set if args.set else ''}")
    for run in range(args.runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fastnorm.ops.batch_norm.local_stats(x)
        end.record()
        torch.cuda.synchronize()
        buf, grid = K.TIMELINE
        stamps = buf.view(torch.int32)[-8 * grid:].view(grid, 8).cpu().long() & 0xFFFFFFFF
        t0 = int(stamps[:, 0].min())
        rel = ((stamps - t0) % (1 << 32)).float() / 1e3
        rows = {"start": rel[:, 0].tolist(), "loop end": rel[:, 1].tolist(), "branch end": rel[:, 2].tolist()}
        finals = rel[:, 3][stamps[:, 3] != 0].tolist()
        span = max(rows["branch end"])
        print(f"run {run}: events {start.elapsed_time(end) * 1e3:7.1f} µs, stamps {span:7.1f} µs, "
              f"{stamps.shape[0]} programs, {len(finals)} final writes")
        for name, vals in (*rows.items(), ("final write", finals)):
            if vals:
                print(f"  {name:12s}" + "".join(f"{_pct(vals, q):8.1f}" for q in (0, 0.5, 0.9, 1.0)))
        last_loop = max(rows["loop end"])
        if finals:
            print(f"  tail: last loop end -> last final write {max(finals) - last_loop:6.1f} µs")
        # the merging programs' steps (µs each): a sub-group's last item, and a channel block's last sub-group
        sub = stamps[:, 4] != 0
        steps = [("loop end -> sub-group arrival won", sub, 1, 4), ("sub-group merge", sub, 4, 5)]
        blk = stamps[:, 6] != 0
        steps += [("sub-group merge -> block arrival won", blk, 5, 6), ("block merge", blk, 6, 3)]
        for name, who, a, b in steps:
            if who.any():
                d = (rel[who, b] - rel[who, a]).tolist()
                print(f"  {name:37s}" + "".join(f"{_pct(d, q):6.2f}" for q in (0, 0.5, 1.0)) + f"  ({len(d)})")


if __name__ == "__main__":
    main()
