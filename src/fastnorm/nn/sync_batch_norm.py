"""``fastnorm.nn.SyncBatchNorm``: BatchNorm over the global batch of a ``torch.distributed`` process group."""

from __future__ import annotations

import torch
from torch.nn.modules.batchnorm import _BatchNorm

from .. import distributed as _dist
from .._validate import check_eps, check_float, check_momentum, check_same_device
from ..functional import batch_norm

_ACTIVATIONS = (None, "relu")


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization whose statistics are those of the whole batch spread over the ranks of a group.

    Drop-in for :class:`torch.nn.SyncBatchNorm`: same constructor, parameters and buffers (``weight``,
    ``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``), so a state_dict moves to and
    from ``torch.nn.SyncBatchNorm`` and ``torch.nn.BatchNorm*d`` with ``strict=True``; input
    ``(N, C, *)`` of any rank ≥ 2, contiguous or channels-last; fp32/fp16/bf16 input with fp32 (or
    input-dtype) parameters; also CPU tensors over gloo.

    In training, with the ``R > 1`` ranks of ``process_group`` (default: the world) each holding a shard
    ``x_r`` of the batch, every rank computes

    .. math::
        y = \mathrm{act}\Big(\gamma \frac{x_r - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta + z\Big)

    with :math:`\mu, \sigma^2` the mean and biased variance of the concatenation of all shards, per
    channel. Forward makes exactly ONE exchange (an all-gather of each rank's packed count, mean and
    M2; every rank merges them with Chan's formula in rank order, so all ranks hold bitwise the same
    statistics and end the step with bitwise the same running statistics); backward makes exactly ONE
    (an all-reduce of the packed per-channel :math:`\sum dy` and :math:`\sum dy\,\hat x`, skipped when
    the input needs no gradient). Shards may differ in size and may be empty: a rank with an empty batch
    still joins both exchanges, contributes count 0, and gets an empty output, an empty ``dx`` and zero
    parameter gradients. No host synchronization in a training step's forward or backward on CUDA (after
    the first steps, which set up the symmetric-memory exchange below): a training step can be
    captured in a CUDA graph (NCCL).

    Running statistics, as in torch: ``running_mean ← (1 − f)·running_mean + f·μ`` and
    ``running_var ← (1 − f)·running_var + f·σ²·n/(n − 1)`` with ``n`` the global count per channel and
    ``f = momentum``, or ``f = 1/num_batches_tracked`` when ``momentum=None`` (cumulative average).

    Parameter gradients are this rank's LOCAL sums: ``weight.grad = Σ_local dy·x̂`` and
    ``bias.grad = Σ_local dy`` (``dy`` after the ReLU mask when fused). Their sum over the ranks is the
    gradient of the global batch; ``DistributedDataParallel`` all-reduces them like any other parameter
    gradient (and divides by the world size, consistently with every other parameter).

    Fused extras (same as ``fastnorm.nn.BatchNorm2d``): ``activation="relu"`` and a residual ``z`` passed
    to ``forward`` (``z`` has the input's shape): ``y = relu(BN(x) + z)``.

    No collective runs in evaluation mode, with ``track_running_stats=False`` in evaluation, or when the
    group has a single rank (or this rank is not a member of ``process_group``): the layer is then a local
    ``fastnorm`` BatchNorm, so a rank evaluating alone never waits for the others.

    .. warning::
        In training every rank of the group must call the layer the same number of times, in the same
        order as the group's other collectives (and all ranks must agree on whether the input needs a
        gradient, which decides the backward all-reduce). A rank that skips a call, or calls it when the
        others do not, is a bug in the caller: the collectives mismatch and the job hangs (or NCCL's
        watchdog kills it).

    Use, one process per GPU under ``torchrun`` (NCCL for CUDA tensors, gloo for CPU tensors)::

        torch.distributed.init_process_group("nccl")
        model = fastnorm.convert_model(model, sync=True)    # or SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])

        # one host:   torchrun --standalone --nproc_per_node=8 train.py
        # two hosts (run on each; HOST0 reachable from both):
        #   torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=HOST0:29500 \
        #            --rdzv_id=job1 train.py

    On one host whose GPUs have peer access (NVLink), the two exchanges run through PyTorch's symmetric
    memory inside fastnorm's own launches — no NCCL call, far less host work per layer — with the same
    results (see ``fastnorm._symm_exchange``). The first training call of a group then makes a few setup
    collectives, and the first call with each channel count allocates that count's buffers (collectively),
    so those calls must not be the first ones made inside CUDA-graph capture if the graph should use them
    (warm up first, as graph capture needs anyway). Layers of one group must not run concurrently on
    different streams. ``FASTNORM_SYNCBN_EXCHANGE=collective`` turns it off (torch.distributed's
    collectives throughout).

    One value per channel over the whole group (e.g. one rank with a ``(1, C)`` input and the others
    empty) is torch's ``ValueError("Expected more than 1 value per channel when training, ...")``. With
    one rank (local BatchNorm) and with CPU tensors it is raised in that call; on CUDA it cannot be known
    without waiting for the all-gather, so it is raised at this layer's next training call (see
    :class:`fastnorm.distributed.GlobalCountCheck`): that step's variance is 0 and its running variance
    becomes NaN — never a silently wrong finite value.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True, activation: str | None = None) -> None:
        if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, got {num_features!r}")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be None or 'relu', got {activation!r}")
        super().__init__(num_features, check_eps(eps), check_momentum(momentum), affine, track_running_stats,
                         device=device, dtype=dtype)
        if affine and not bias:
            self.bias = None
        self.process_group = process_group
        self.activation = activation
        self._count_check = _dist.GlobalCountCheck()

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.activation is None else f"{s}, activation={self.activation!r}"

    def _check_input_dim(self, input: torch.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: torch.Tensor, z: torch.Tensor | None = None) -> torch.Tensor:
        """Normalize ``input`` (N, C, *); ``z`` is an optional residual of the same shape, added before
        the activation. Synchronizes over the group in training when it has more than one rank."""
        check_float("input", input)
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        if input.size(1) != self.num_features:
            raise ValueError(f"input has {input.size(1)} channels (dim 1), but SyncBatchNorm was built for "
                             f"num_features={self.num_features}")
        if z is not None:
            check_float("z", z)
            if z.shape != input.shape:
                raise ValueError(f"z must have the input's shape {tuple(input.shape)}, got {tuple(z.shape)}")
            check_same_device("z", z, input)
        for name in ("weight", "bias", "running_mean", "running_var"):
            t = getattr(self, name)
            if t is not None:
                check_same_device(name, t, input)

        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        # Batch statistics in training, and in evaluation when there are no running statistics.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None

        world_size = _dist.sync_world_size(self.process_group) if self.training else 1
        if world_size == 1:
            return self._local(input, z, running_mean, running_var, bn_training)
        return _dist.sync_batch_norm(
            input, running_mean, running_var, self.weight, self.bias, momentum=self.momentum, eps=self.eps,
            process_group=self.process_group, world_size=world_size,
            num_batches_tracked=self.num_batches_tracked if running_mean is not None else None,
            activation=self.activation, z=z, count_check=self._count_check)

    def _local(self, input, z, running_mean, running_var, bn_training):
        """No synchronization: fastnorm's local batch norm of this rank's batch (as fastnorm.nn.BatchNorm2d)."""
        return batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, self.momentum,
                          self.eps, activation=self.activation, z=z, num_batches_tracked=self.num_batches_tracked)

    @classmethod
    def convert_sync_batchnorm(cls, module: torch.nn.Module, process_group=None) -> torch.nn.Module:
        """Replace, recursively, every ``torch.nn.BatchNorm1d/2d/3d`` and ``torch.nn.SyncBatchNorm`` (and
        fastnorm's ``BatchNorm*d``) in ``module`` by a ``fastnorm.nn.SyncBatchNorm`` over
        ``process_group`` (default: the world).

        The new layer takes the old one's ``Parameter`` and buffer objects themselves (so values, device,
        dtype and ``requires_grad`` carry over, and an optimizer holding them keeps working), its
        hyper-parameters, its training flag and fastnorm's fused activation. Returns ``module`` with its
        children replaced, or the new layer when ``module`` itself is a batch norm.
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None or not module.affine,
                      activation=getattr(module, "activation", None))
            if module.affine:
                with torch.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
