"""Launch heuristics for every kernel, in one place: plain functions of the shape and the device.

Each function returns the constexprs and grid a launcher needs; the measurements that chose the
numbers are in ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

import functools

import torch


@functools.cache
def multiprocessor_count(device_index: int | None) -> int:
    """SMs on the CUDA device (a fixed small number under the interpreter, to keep grids short)."""
    if device_index is None or not torch.cuda.is_available():
        return 4
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def device_index(t: torch.Tensor) -> int | None:
    return t.device.index if t.device.type == "cuda" else None


# ----------------------------------------------------------------------------- LayerNorm / RMSNorm


# ----------------------------------------------------------------------------- BatchNorm
