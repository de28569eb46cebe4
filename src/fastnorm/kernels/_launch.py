"""Cheap repeat launches of Triton kernels (shared by the LayerNorm and BatchNorm launchers).

``JITFunction.run`` binds and specializes every argument in Python on each launch, which costs more
host time than a small normalization takes on the GPU. :class:`_Launcher` sends the first launch of
each specialization through Triton and then runs the cached ``CompiledKernel`` directly. Those direct
launches are noted in the ``_replay`` recording open on the thread, if any, so that an op can replay them.
"""

from __future__ import annotations

from operator import itemgetter

import torch
from torch.library import wrap_triton
from triton import knobs

from .._runtime import INTERPRETER
from ._replay import no_hooks as _no_hooks
from ._replay import recording


def _int_key(a: int) -> tuple:
    """What Triton specializes an integer on: equal to 1, divisible by 16, its width (i32, i64, u64)."""
    return int, a == 1, (a & 15) == 0, -(2**31) <= a < 2**31, a < 2**63


def _rare_key(a):
    """``_launch_args``' key of the argument types it does not test first: a bool is an i1 argument (its
    value is the key), another int subclass an integer, anything else (a float subclass) its type."""
    if isinstance(a, bool):
        return bool, a
    if isinstance(a, int):
        return _int_key(a)
    return type(a)


def _launch_args(args: tuple) -> tuple[list, list]:
    """-> (what Triton specializes each argument on, so that equal keys share one binary; the arguments as the C
    launcher takes them), in one pass with the common exact types tested first (this runs on every launch): a
    float is always fp32, an int keyed by ``_int_key``, None a constexpr None, a tensor by its dtype, 16-byte
    alignment and device kind. Tensors are passed as their addresses: given a tensor, Triton's launcher calls
    ``data_ptr()`` and asks the driver about the address (``cuPointerGetAttribute``) for every pointer argument of
    every launch; the address is read here anyway for the alignment key."""
    keys, vals = [], []
    for a in args:
        tp = type(a)
        if tp is float:
            keys.append(float)
        elif tp is int:
            keys.append(_int_key(a))
        elif a is None:
            keys.append(None)
        elif isinstance(a, torch.Tensor):
            p = a.data_ptr()
            keys.append((a.dtype, (p & 15) == 0, a.is_cuda))  # a host tensor never reuses a CUDA launch
            vals.append(p)
            continue
        else:
            keys.append(_rare_key(a))
        vals.append(a)
    return keys, vals


class _Launcher:
    """Launches one Triton kernel, cheaply on repeat calls.

    The first launch of each specialization goes through Triton normally and the returned
    ``CompiledKernel`` is cached under a key that distinguishes at least everything Triton specializes
    on (argument dtypes, 16-byte alignment of pointers, integers equal to 1 / divisible by 16 / beyond
    32 bits, bools, None pointers, floats, constexprs, warps, stages, register cap, device); later launches call its
    launcher directly. A launch runs on the device of its first argument (a tensor), whatever the current
    device. Every constexpr must be given in ``meta`` (any order). Grids are 1-D. Inside a
    traced ``triton_op`` the kernel goes through ``wrap_triton``; under the interpreter through Triton
    as usual.
    """

    def __init__(self, fn):
        self.fn = fn
        self.cache: dict = {}
        self.constexprs: tuple[str, ...] | None = None
        self._consts_of = None  # meta -> the constexpr values in signature order

    def __call__(self, grid: tuple[int, ...], args: tuple, meta: dict, num_warps: int, num_stages: int | None,
                 traceable: bool = False, maxnreg: int | None = None, cooperative: bool = False) -> None:
        rec = recording()
        if traceable:  # torch's kernel wrapper takes no register cap: traced launches go without it
            wrap_triton(self.fn)[grid](*args, **meta, **_options(num_warps, num_stages, None, cooperative))
            return
        if INTERPRETER:
            self.fn[grid](*args, **meta, **_options(num_warps, num_stages, maxnreg, cooperative))
            return
        consts_of = self._consts_of
        if consts_of is None:
            names = self.constexprs = tuple(self.fn.arg_names[len(args):])
            consts_of = self._consts_of = (itemgetter(*names) if len(names) > 1 else
                                           (lambda m, n=names: tuple(m[k] for k in n)))
        if len(self.constexprs) != len(meta):
            raise RuntimeError(f"{self.fn.__name__} needs every constexpr {self.constexprs}, got {tuple(meta)}")
        device = torch._C._cuda_getDevice()  # CUDA is initialized: these are CUDA tensors
        home = args[0].get_device() if isinstance(args[0], torch.Tensor) else device
        if home != device and home >= 0:  # launch on the tensors' device, as torch's own ops do
            if rec is not None:
                rec.complete = False
            with torch.cuda.device(home):
                self(grid, args, meta, num_warps, num_stages, traceable, maxnreg, cooperative)
            return
        consts = consts_of(meta)
        keys, vals = _launch_args(args)
        key = (device, num_warps, num_stages, maxnreg, cooperative, len(args), consts, *keys)
        entry = self.cache.get(key)
        if entry is None:
            if rec is not None:
                rec.complete = False
            self.cache[key] = _Compiled(self.fn[grid](*args, **meta,
                                                      **_options(num_warps, num_stages, maxnreg, cooperative)),
                                        cooperative)
            return
        stream = torch._C._cuda_getCurrentRawStream(device)
        enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
        if entry.launch is not None and _no_hooks(enter) and _no_hooks(leave):
            entry.direct(grid[0], stream, (*vals, *consts))
            if rec is not None:
                rec.launches.append((entry, grid[0], args, consts))
            return
        if rec is not None:
            rec.complete = False
        full = (*args, *consts)  # hooks may inspect the arguments: the tensors themselves
        compiled = entry.kernel
        metadata = None if _no_hooks(enter) and _no_hooks(leave) else compiled.launch_metadata(grid, stream, *full)
        compiled.run(grid[0], 1, 1, stream, compiled.function, compiled.packed_metadata, metadata, enter, leave,
                     *full)


class _Compiled:
    """A ``CompiledKernel`` and what its repeat launches need. ``launch`` is the C launch function of Triton's
    CUDA launcher, called directly when the kernel needs no global or profiling scratch memory (the launcher's
    Python wrapper would only allocate those) and the launcher shows the cooperative flag the launch asked for,
    else None (then ``kernel.run`` is called, which launches as Triton compiled it)."""

    __slots__ = ("kernel", "function", "packed_metadata", "launch", "cooperative", "pdl")

    def __init__(self, kernel, cooperative: bool):
        runner = kernel.run  # loads the module and creates the launcher on first access
        self.kernel = kernel
        self.function = kernel.function
        self.packed_metadata = kernel.packed_metadata
        direct = (getattr(runner, "global_scratch_size", 1) == 0 and getattr(runner, "profile_scratch_size", 1) == 0
                  and hasattr(runner, "launch")
                  and bool(getattr(runner, "launch_cooperative_grid", False)) == cooperative)
        self.launch = runner.launch if direct else None
        self.cooperative = cooperative
        self.pdl = getattr(runner, "launch_pdl", False)

    def direct(self, grid: int, stream: int, vals: tuple) -> None:
        """Launch through the C launch function (only when ``launch`` is set): ``vals`` are the arguments as
        it takes them (tensors as addresses) followed by the constexpr values."""
        self.launch(grid, 1, 1, stream, self.function, self.cooperative, self.pdl, None, None, self.packed_metadata,
                    None, None, None, *vals)


def specialization(fn, args: tuple, meta: dict, num_warps: int, num_stages: int | None, maxnreg: int | None,
                   backend, cooperative: bool = False) -> tuple[dict, dict, dict, dict]:
    """What Triton compiles ``fn`` for, launched with ``args``/``meta`` on ``backend`` (e.g.
    ``triton.compiler.make_backend(GPUTarget("cuda", 90, 32))``): ``(signature, constexprs, attrs, options)``,
    bound by Triton's own binder, as ``JITFunction.run`` does — for offline compilation without a GPU (the
    tensors may be on the meta device). Uses Triton's internal binder (pinned triton 3.6)."""
    from triton.runtime.jit import create_function_from_signature

    kwargs = {**meta, **_options(num_warps, num_stages, maxnreg, cooperative)}
    bound, spec, opts = create_function_from_signature(fn.signature, fn.params, backend)(*args, **kwargs)
    _, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, spec, opts)
    return signature, constexprs, attrs, _options(num_warps, num_stages, maxnreg, cooperative)


def _options(num_warps: int, num_stages: int | None, maxnreg: int | None, cooperative: bool = False) -> dict:
    """Triton's launch options (the defaults for those given as None). ``cooperative``: a cooperative launch
    (CUDA guarantees that every program of the grid is resident at once, or refuses the launch)."""
    opts = {"num_warps": num_warps}
    if num_stages is not None:
        opts["num_stages"] = num_stages
    if maxnreg is not None:
        opts["maxnreg"] = maxnreg
    if cooperative:
        opts["launch_cooperative_grid"] = True
    return opts

