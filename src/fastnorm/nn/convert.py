"""``fastnorm.convert_model``: swap a model's normalization layers for fastnorm's, state and all."""

from __future__ import annotations

import torch
from torch import nn

from .batch_norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, FrozenBatchNorm2d

__all__ = ["convert_model"]

_BN = ((nn.BatchNorm3d, BatchNorm3d), (nn.BatchNorm2d, BatchNorm2d), (nn.BatchNorm1d, BatchNorm1d))
_FROZEN_BUFFERS = ("weight", "bias", "running_mean", "running_var")


def _is_uninitialized(m: nn.Module) -> bool:
    return isinstance(m, nn.modules.lazy.LazyModuleMixin) and m.has_uninitialized_params()


def _take_state(new: nn.Module, old: nn.Module, names) -> nn.Module:
    """Give ``new`` the very Parameter/buffer objects of ``old`` (values, device, dtype, requires_grad and
    optimizer references carry over) and its training flag."""
    for name in names:
        t = getattr(old, name)
        if name in old._parameters:
            new._parameters[name] = t
        else:
            new._buffers[name] = t
    new.train(old.training)
    return new


def _convert_one(m: nn.Module, frozen: bool) -> nn.Module | None:
    from .layer_norm import LayerNorm, RMSNorm

    if _is_uninitialized(m):
        return None
    if isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm):
        if isinstance(m, (BatchNorm1d, BatchNorm2d, BatchNorm3d)):
            return None
        for torch_cls, fast_cls in _BN:
            if isinstance(m, torch_cls):
                new = fast_cls(m.num_features, m.eps, m.momentum, m.affine, m.track_running_stats, device="meta")
                return _take_state(new, m, ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"))
        return None
    if isinstance(m, nn.LayerNorm) and not isinstance(m, LayerNorm):
        new = LayerNorm(m.normalized_shape, m.eps, m.elementwise_affine, bias=m.bias is not None, device="meta")
        return _take_state(new, m, ("weight", "bias"))
    if isinstance(m, nn.RMSNorm) and not isinstance(m, RMSNorm):
        new = RMSNorm(m.normalized_shape, m.eps, m.elementwise_affine, device="meta")
        return _take_state(new, m, ("weight",))
    if (frozen and type(m).__name__ == "FrozenBatchNorm2d" and not isinstance(m, FrozenBatchNorm2d)
            and all(isinstance(m._buffers.get(n), torch.Tensor) for n in _FROZEN_BUFFERS)):
        new = FrozenBatchNorm2d(m.weight.numel(), float(getattr(m, "eps", 1e-5)), device="meta")
        return _take_state(new, m, _FROZEN_BUFFERS)
    return None


def _convert(m: nn.Module, frozen: bool) -> nn.Module:
    new = _convert_one(m, frozen)
    if new is not None:
        return new
    for name, child in m.named_children():
        converted = _convert(child, frozen)
        if converted is not child:
            m._modules[name] = converted
    return m


def convert_model(model: nn.Module, *, sync: bool = False, frozen: bool = False, process_group=None) -> nn.Module:
    """Replace, recursively, every ``torch.nn.BatchNorm1d/2d/3d``, ``LayerNorm`` and ``RMSNorm`` in ``model``
    by fastnorm's; with ``frozen=True`` also every torchvision-style ``FrozenBatchNorm2d`` (any module of
    that class name holding ``weight``, ``bias``, ``running_mean``, ``running_var`` buffers); with
    ``sync=True`` every batch norm becomes a ``fastnorm.nn.SyncBatchNorm`` over ``process_group``.

    The new layers take the old ones' Parameter and buffer objects themselves (so values, device, dtype,
    ``requires_grad`` and optimizer references carry over) and their training flags: outputs and gradients
    are unchanged up to rounding. ``model`` is modified in place; the return value is ``model``, or the new
    layer when ``model`` itself is a normalization layer. Lazy modules that are not initialized yet and
    ``torch.nn.SyncBatchNorm`` (without ``sync``) are left as they are.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    out = _convert(model, frozen)
    if sync:
        from .sync_batch_norm import SyncBatchNorm

        out = SyncBatchNorm.convert_sync_batchnorm(out, process_group)
    return out
