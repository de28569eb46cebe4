"""Where the kernels run.

CUDA tensors always take the Triton kernels. CPU tensors take PyTorch's own CPU implementation,
except when ``TRITON_INTERPRET=1`` is set in the environment before fastnorm is imported: then
Triton's interpreter runs the real kernels on the CPU (slowly), which is how the test suite checks
them on machines without a GPU.
"""

from __future__ import annotations

import os

import torch
from torch.autograd import forward_ad

#: Read once, at import, because Triton itself reads it when ``@triton.jit`` decorates a kernel.
INTERPRETER: bool = os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "yes", "on")


def uses_triton(t: torch.Tensor) -> bool:
    """True when ``t`` is processed by fastnorm's Triton kernels (else by PyTorch's implementation)."""
    return t.is_cuda or (INTERPRETER and t.device.type == "cpu")


def describe() -> str:
    """One line saying where kernels run in this process (for the CLI and reports)."""
    if torch.cuda.is_available():
        return f"CUDA ({torch.cuda.get_device_name()}): Triton kernels"
    if INTERPRETER:
        return "CPU with TRITON_INTERPRET=1: Triton kernels through the interpreter"
    return "CPU: PyTorch's own implementation (set TRITON_INTERPRET=1 to run the Triton kernels)"


def forward_ad_active() -> bool:
    """True inside a forward-mode AD level (``torch.autograd.forward_ad.dual_level``)."""
    return forward_ad._current_level >= 0


_is_legacy_batched = getattr(getattr(torch._C, "_functorch", None), "is_legacy_batchedtensor", None)


def vmapped(t: torch.Tensor | None) -> bool:
    """True for a gradient batched by the vmap that ``torch.autograd.functional.jacobian(..., vectorize=True)`` runs a
    backward under: it has no storage for a kernel to read, and nothing can be copied from it into a plain tensor."""
    return t is not None and _is_legacy_batched is not None and _is_legacy_batched(t)


def backward_in_torch_ops(*grads: torch.Tensor | None) -> bool:
    """Whether a backward must run as PyTorch operations instead of the kernels: with ``create_graph=True`` (grad mode
    is on inside it; its gradients will be differentiated again), inside a forward-mode AD level (they carry
    tangents), or on vmapped gradients (``vmapped``)."""
    return torch.is_grad_enabled() or forward_ad_active() or any(vmapped(g) for g in grads)


def needs_autograd(*tensors: torch.Tensor | None) -> bool:
    """True when an op must run through its autograd Function: grad mode is on and an input requires a gradient,
    or a forward-mode AD level is open (a dual input's tangent must not be dropped silently: the Function forms it,
    or raises where it has no forward-mode formula). False lets the op call its forward directly, without the
    Function's host cost."""
    if forward_ad_active():
        return True
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def apply_function(cls: type[torch.autograd.Function]):
    """``cls.apply`` for an autograd Function without ``setup_context`` whose arguments are four tensors or None (the
    first a tensor) and one tuple, minus the Python wrapper that ``torch.autograd.Function.apply`` runs on every call
    (a quarter of an eager norm forward's host time on a fast CPU). Outside functorch transforms it does what that
    wrapper does — unwraps dead functorch wrappers, then calls the C++ apply; inside them, ``cls.apply`` itself.
    A Function with ``setup_context``, or a torch without those internals, gets ``cls.apply``."""
    internals = torch._C
    base = getattr(internals, "_FunctionBase", None) and internals._FunctionBase.__dict__.get("apply")
    unwrap = getattr(getattr(internals, "_functorch", None), "unwrap_if_dead", None)
    active = getattr(internals, "_are_functorch_transforms_active", None)
    if (base is None or unwrap is None or active is None
            or cls.setup_context is not torch.autograd.Function.setup_context):
        return cls.apply
    base = base.__get__(None, cls)

    def apply(x, t1, t2, t3, rest):
        if active():
            return cls.apply(x, t1, t2, t3, rest)
        return base(unwrap(x), t1 if t1 is None else unwrap(t1), t2 if t2 is None else unwrap(t2),
                    t3 if t3 is None else unwrap(t3), rest)

    return apply
