"""``fastnorm.nn.BatchNorm1d/2d/3d`` and ``FrozenBatchNorm2d``: drop-ins backed by :func:`fastnorm.batch_norm`.

``BatchNorm1d/2d/3d`` subclass torch's classes: same constructor, parameters and buffers (``weight``,
``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``), the same input-dimension errors,
so a state_dict moves to and from ``torch.nn.BatchNorm*d`` with ``strict=True`` and ``isinstance``
checks against torch's classes keep working. Differences: nothing is read back to the host (with
``momentum=None`` the factor 1/num_batches_tracked is read on the device), so a training step can be
captured in a CUDA graph; and two keyword-only extras, ``activation="relu"`` in the constructor and a
residual ``z`` in ``forward``: ``y = relu(BN(x) + z)`` in one pass, with its backward.

``FrozenBatchNorm2d`` matches torchvision's: ``weight``, ``bias``, ``running_mean``, ``running_var`` are
buffers (no gradients), ``eps`` (default 1e-5) is honoured, and a ``BatchNorm2d`` state_dict loads into it
(``num_batches_tracked`` is dropped). Its forward is the one-pass evaluation kernel and its backward the
one-pass frozen one, ``dx = dy·weight/sqrt(running_var + eps)``. Unlike torchvision's (which promotes a
bf16 input with fp32 buffers to an fp32 output) its output has the input's dtype.
"""

from __future__ import annotations

import torch
from torch import nn

from ..ops.batch_norm import batch_norm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "FrozenBatchNorm2d"]

_ACTIVATIONS = (None, "relu")


class _FastBatchNorm:
    """The forward shared by BatchNorm1d/2d/3d (mixed into torch's classes)."""

    def _init_extras(self, activation: str | None) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be None or 'relu', got {activation!r}")
        self.activation = activation

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.activation is None else f"{s}, activation={self.activation!r}"

    def forward(self, input: torch.Tensor, z: torch.Tensor | None = None) -> torch.Tensor:
        """Normalize ``input``; ``z`` is an optional residual of its shape added before the activation."""
        self._check_input_dim(input)
        # Parameters and buffers are read once each (every read goes through Module.__getattr__).
        training, nbt = self.training, self.num_batches_tracked
        running_mean, running_var = self.running_mean, self.running_var
        if training and self.track_running_stats and nbt is not None:
            nbt.add_(1)
        bn_training = training or (running_mean is None and running_var is None)
        track = not training or self.track_running_stats
        return batch_norm(input, running_mean if track else None, running_var if track else None,
                          self.weight, self.bias, bn_training, self.momentum, self.eps,
                          activation=self.activation, z=z, num_batches_tracked=nbt)


class BatchNorm1d(_FastBatchNorm, nn.BatchNorm1d):
    """``torch.nn.BatchNorm1d`` on fastnorm's kernels: input (N, C) or (N, C, L)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, activation: str | None = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self._init_extras(activation)


class BatchNorm2d(_FastBatchNorm, nn.BatchNorm2d):
    """``torch.nn.BatchNorm2d`` on fastnorm's kernels: input (N, C, H, W), contiguous or channels_last."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, activation: str | None = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self._init_extras(activation)


class BatchNorm3d(_FastBatchNorm, nn.BatchNorm3d):
    """``torch.nn.BatchNorm3d`` on fastnorm's kernels: input (N, C, D, H, W), contiguous or channels_last_3d."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, activation: str | None = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self._init_extras(activation)


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with fixed statistics and affine parameters, all buffers (torchvision's layout):
    ``y = weight·(x − running_mean)/sqrt(running_var + eps) + bias``."""

    def __init__(self, num_features: int, eps: float = 1e-5, device=None, dtype=None):
        super().__init__()
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, got {num_features!r}")
        self.num_features = num_features
        self.eps = eps
        factory = {"device": device, "dtype": dtype}
        self.register_buffer("weight", torch.ones(num_features, **factory))
        self.register_buffer("bias", torch.zeros(num_features, **factory))
        self.register_buffer("running_mean", torch.zeros(num_features, **factory))
        self.register_buffer("running_var", torch.ones(num_features, **factory))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_dict.pop(prefix + "num_batches_tracked", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"expected 4D input (got {x.dim()}D input)")
        return batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}"
