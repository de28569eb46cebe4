"""Replaying an eager op's kernel launches without working out their arguments again.

An eager norm call spends most of its host time before its launches: viewing its inputs, choosing a plan,
building each launch's argument list and keying Triton's specializations (on a slow host, more time than a
small normalization takes on the GPU). For a given *signature* of the call (every input's shape, strides and
dtype, the options, the device and stream) all of that comes out the same except the tensors' addresses.

:class:`Programs` caches, per signature, what one call launched. A call is made the usual way once while a
:class:`Recording` is open: every launch that goes through a kernel's cached C launch function is noted (its
compiled kernel, grid, argument list and constexprs). The noted launches become a :class:`Program` when each
tensor they were given is

* one of the call's inputs or outputs (what it returned), or a view of one at the same address (the same
  signature makes the same view again),
* scratch it registered with :func:`scratch` (buffers only its own launches read: partial sums, allocated
  again for each replay, all in one allocation; and the zeroed counters that launches leave at zero, which
  the program keeps and passes again: launches on one stream run one after another, and the stream is part
  of the signature);

and when every output it returns is an input, an empty tensor, or a tensor a launch wrote. Otherwise (a copy
made on the way, a result computed by a torch op, two distinct inputs at one address) the signature is marked
as not replayable. Which input positions hold one same tensor is part of the key (one gradient is often passed
for two outputs). A later call with the signature runs the program: a function written for it when it was
recorded (straight-line code, see :class:`Program`) that allocates the outputs, reads the tensors' addresses and
calls the C launch functions with the noted arguments, addresses substituted; its scratch allocation is held
until its last launch is queued, as the full call holds its buffers.

Not replayed: under CUDA-graph capture (a captured launch needs its own counters), on a device other than
the current one, when Triton launch hooks are set, when an address the kernel was compiled as 16-byte aligned
is not, and under the interpreter (whose launches never reach the C launch function). A program recorded with
an unaligned input serves aligned ones too (the same binary the unaligned call used; correct, possibly
slower). Programs are dropped when the launch heuristics change (``config.generation``) and when there are
more than :data:`MAX_PROGRAMS`.
"""

from __future__ import annotations

import threading

import torch
from triton import knobs

from .._runtime import INTERPRETER
from . import config

#: Programs kept at most per op: all are dropped when one more is made.
MAX_PROGRAMS = 512
#: Fresh scratch buffers start at multiples of this many bytes of their replay's one allocation.
_SCRATCH_ALIGN = 256

_local = threading.local()


class Recording:
    """The launches of one call, as ``_Launcher`` reports them while this recording is open."""

    __slots__ = ("launches", "scratch", "complete")

    def __init__(self):
        self.launches: list[tuple] = []  # (compiled entry, grid size, arguments, constexpr values)
        self.scratch: dict[int, tuple[torch.Tensor, bool]] = {}  # id -> (tensor, kept)
        self.complete = True  # False once a launch went another way (compiled first, hooks): not replayable


def recording() -> Recording | None:
    """The recording open on this thread, if any (``_Launcher`` calls this on every launch)."""
    return getattr(_local, "rec", None)


def scratch(t: torch.Tensor, *, keep: bool = False) -> torch.Tensor:
    """Mark ``t`` as scratch of the call being recorded, read only by the call's own launches; returns ``t``.
    ``keep``: the same buffer serves every replay (counters the launches leave at zero); else each replay
    gets a new uninitialized one."""
    rec = getattr(_local, "rec", None)
    if rec is not None:
        rec.scratch[id(t)] = (t, keep)
    return t


def _signature(inputs: tuple) -> tuple:
    """The part of a call's signature its tensors make: shape, strides and dtype of each (None for None)."""
    return tuple(None if t is None else (t.shape, t.stride(), t.dtype) for t in inputs)


def _aliases(inputs: tuple, tensors: tuple) -> tuple | None:
    """Which input positions hold the same tensor (the first position holding each, per position), or None when
    they are all distinct — part of a program's key (one gradient passed for two outputs is common). ``tensors``:
    the inputs' signature, which counts the Nones cheaply (``inputs.count(None)`` would compare tensors with ==):
    the inputs are all distinct when their ids number the tensors plus one for None if any."""
    nones = tensors.count(None)
    if len(set(map(id, inputs))) == len(inputs) - nones + (nones > 0):
        return None
    first: dict[int, int] = {}
    return tuple(None if t is None else first.setdefault(id(t), j) for j, t in enumerate(inputs))


def _replays_on(t: torch.Tensor) -> bool:
    """Whether launches for ``t`` may be replayed: those for CUDA tensors, outside the interpreter."""
    return t.is_cuda and not INTERPRETER


def no_hooks(hook) -> bool:
    """Triton's launch hooks are a chain that may be empty (then nothing needs the launch metadata)."""
    return hook is None or (isinstance(hook, knobs.HookChain) and not hook.calls)


def _no_launch_hooks() -> bool:
    return no_hooks(knobs.runtime.launch_enter_hook) and no_hooks(knobs.runtime.launch_exit_hook)


class Program:
    """One signature's launches, replayed with new tensors (see the module docstring).

    ``run(inputs, stream)`` is a function written for this program alone (``_program_source``): it reads the
    input addresses the launches take, returns None (nothing launched) when one of those the kernels were compiled
    as 16-byte aligned is not, allocates the new outputs and the fresh scratch (one allocation), calls each launch's
    C launch function with the addresses in place, and returns the outputs — straight-line code, no loops over
    argument lists. ``source`` is its text; ``kept``: the kept scratch tensors, whose addresses it holds, and the
    compiled kernels whose launch functions and handles it calls (held so that they outlive it)."""

    __slots__ = ("_run", "source", "kept")

    def __init__(self, source: str, names: dict, kept: tuple):
        scope = {"torch": torch, **names}
        exec(compile(source, "<fastnorm replay program>", "exec"), scope)  # noqa: S102 (generated above, no user text)
        self._run, self.source, self.kept = scope["run"], source, kept

    def run(self, inputs: tuple, stream: int) -> tuple | None:
        """The call's outputs, launched on ``stream``; None (nothing launched) when an input is not aligned as
        the kernels were compiled for. (A method around the generated function, where tests and scripts count
        replays.)"""
        return self._run(inputs, stream)


def _program_source(device, used, aligned, outputs, offsets, work_bytes, launches) -> tuple[str, dict]:
    """The text of a program's ``run`` and the values it names: allocations on ``device``; ``used`` input positions
    whose addresses launches take (``a<i>``), ``aligned`` those of them compiled as 16-byte aligned, ``outputs`` per
    output None, ``("input", j)`` or ``(shape, stride, dtype)`` of a new tensor (``o<k>``, address ``p<k>``),
    ``offsets`` of the fresh scratch buffers in one allocation of ``work_bytes`` (``w<i>``), ``launches`` (entry,
    grid, arguments as ``(kind, index)`` or ``("value", v)``, constexpr values). The scratch allocation is held until
    the function returns, after every launch is queued, as the full call holds its buffers (freed earlier, its
    memory could go to an allocation of another thread on this stream, queued between these launches)."""
    names: dict = {"device": device}

    def value(v) -> str:
        name = f"v{len(names)}"
        names[name] = v
        return name

    body = [f"    a{i} = inputs[{j}].data_ptr()" for i, j in enumerate(used)]
    if aligned:
        body += [f"    if ({' | '.join(f'a{i}' for i in aligned)}) & 15:", "        return None"]
    result = []
    for k, o in enumerate(outputs):
        if o is None:
            result.append("None")
        elif o[0] == "input":
            result.append(f"inputs[{o[1]}]")
        else:
            shape, stride, dtype = (value(v) for v in o)
            body += [f"    o{k} = torch.empty_strided({shape}, {stride}, dtype={dtype}, device=device)",
                     f"    p{k} = o{k}.data_ptr()"]
            result.append(f"o{k}")
    if offsets:
        body += [f"    work = torch.empty({work_bytes}, dtype=torch.uint8, device=device)", "    w = work.data_ptr()"]
        body += [f"    w{i} = w + {off}" for i, off in enumerate(offsets)]
    for entry, grid, args, consts in launches:
        vals = [value(a[1]) if a[0] == "value" else f"{a[0]}{a[1]}" for a in args] + [value(c) for c in consts]
        head = (f"{value(entry.launch)}({grid}, 1, 1, stream, {value(entry.function)}, {entry.cooperative}, "
                f"{value(entry.pdl)}, None, None, {value(entry.packed_metadata)}, None, None, None")
        body.append(f"    {head}, {', '.join(vals)})")
    body.append(f"    return ({', '.join(result)}{',' if len(result) == 1 else ''})")
    return "def run(inputs, stream):\n" + "\n".join(body) + "\n", names


#: Stored for signatures whose calls cannot be replayed.
_NOT_REPLAYABLE = object()


class Programs:
    """The programs of one op, by signature: the inputs' shapes, strides and dtypes, which of them are one tensor,
    the device and stream, and the op's ``options`` (a hashable tuple of its other arguments); together they must
    determine every launch argument except the input and output tensors' addresses."""

    def __init__(self):
        self._by_signature: dict = {}
        self._generation = -1

    def run(self, options: tuple, inputs: tuple, make):
        """The op's outputs for ``inputs`` (tensors or None, the first a tensor on the launches' device) and
        ``options``: replayed when their signature has a program, else ``make()`` (which launches and returns a
        tuple of outputs, each a tensor or None), recorded when it may be replayed."""
        x = inputs[0]
        if not _replays_on(x):
            return make()
        index = x.get_device()
        if index != torch._C._cuda_getDevice() or torch._C._cuda_isCurrentStreamCapturing() or not _no_launch_hooks():
            return make()
        if self._generation != config.generation:
            self._by_signature.clear()
            self._generation = config.generation
        tensors = _signature(inputs)
        stream = torch._C._cuda_getCurrentRawStream(index)
        key = (index, stream, tensors, _aliases(inputs, tensors), options)
        program = self._by_signature.get(key)
        if program is _NOT_REPLAYABLE:
            return make()
        if program is not None:
            out = program.run(inputs, stream)
            return make() if out is None else out
        outer = getattr(_local, "rec", None)
        rec = _local.rec = Recording()
        try:
            out = make()
        finally:
            _local.rec = outer
        if rec.complete and rec.launches:
            if len(self._by_signature) >= MAX_PROGRAMS:
                self._by_signature.clear()
            self._by_signature[key] = _program(rec, inputs, out) or _NOT_REPLAYABLE
        return out


def _program(rec: Recording, inputs: tuple, outputs: tuple) -> Program | None:
    """The recorded launches as a program, or None when they cannot be replayed (see the module docstring)."""
    slots: dict[int, tuple[str, int]] = {}  # id(tensor) -> ("input", position) or ("output", position)
    at: dict[int, tuple[str, int]] = {}  # a view of an input or output starting at its address is that tensor
    for j, t in enumerate(inputs):
        if t is not None and id(t) not in slots:  # one tensor in two positions: the key's alias pattern says so
            p = t.data_ptr() if t.numel() else None
            if p in at:
                return None  # two tensors at one address: a later call of this key may pass two apart
            slots[id(t)] = ("input", j)
            if p is not None:
                at[p] = ("input", j)
    out_specs: list = []
    for k, t in enumerate(outputs):
        if t is None:
            out_specs.append(None)
        elif slots.get(id(t), ("",))[0] == "input":
            out_specs.append(slots[id(t)])
        elif id(t) in slots or id(t) in rec.scratch:
            return None  # one output returned twice, or scratch returned
        elif t.numel() and t.data_ptr() in at:
            return None  # a view of an input returned as an output
        else:
            slots[id(t)] = ("output", k)
            if t.numel():
                at[t.data_ptr()] = ("output", k)
            out_specs.append((tuple(t.shape), t.stride(), t.dtype))
    used: list[int] = []  # input positions read for their addresses, in order of first use
    aligned: set[int] = set()
    written: set[int] = set()
    fresh: list[int] = []  # ids of the scratch buffers each replay allocates anew, in order of first use
    offsets: list[int] = []
    work_bytes = 0
    kept: dict[int, torch.Tensor] = {}
    raw = []
    for entry, grid, args, consts in rec.launches:
        where = []
        for a in args:
            if not isinstance(a, torch.Tensor):
                where.append(("value", a))
                continue
            kind, j = slots.get(id(a)) or (a.numel() and at.get(a.data_ptr())) or ("", -1)
            if kind == "input":
                if j not in used:
                    used.append(j)
                if a.data_ptr() & 15 == 0:
                    aligned.add(j)
                where.append(("a", used.index(j)))
            elif kind == "output":
                written.add(j)
                where.append(("p", j))
            elif id(a) not in rec.scratch:
                return None  # a tensor made on the way (a copy): its contents change per call
            elif rec.scratch[id(a)][1]:
                kept[id(a)] = a
                where.append(("value", a.data_ptr()))
            else:
                if id(a) not in fresh:
                    fresh.append(id(a))
                    offsets.append(work_bytes)
                    nbytes = a.untyped_storage().nbytes()
                    work_bytes += -(-nbytes // _SCRATCH_ALIGN) * _SCRATCH_ALIGN
                where.append(("w", fresh.index(id(a))))
        raw.append((entry, grid, where, consts))
    if any(s is not None and s[0] != "input" and outputs[k].numel() and k not in written
           for k, s in enumerate(out_specs)):
        return None  # an output no launch wrote: computed some other way
    aligned_at = sorted(used.index(j) for j in aligned)
    source, names = _program_source(inputs[0].device, used, aligned_at, out_specs, offsets, work_bytes, raw)
    return Program(source, names, (*kept.values(), *(entry for entry, *_ in raw)))
