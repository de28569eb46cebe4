"""The float64 NumPy reference: forward and hand-written backward of every op. Imports NumPy only.

Every function takes NumPy arrays (any real dtype; they are converted), computes in float64 — or in
float32 when called with ``dtype=np.float32`` — and returns arrays of that precision. The derivations
are in ``docs/math.md``.
"""

from .batch_norm import (
    BatchNormForward,
    activation_backward,
    batch_norm_backward,
    batch_norm_forward,
    batch_norm_normalize,
)
from .gradcheck import gradcheck
from .layer_norm import layer_norm_backward, layer_norm_forward
from .rms_norm import rms_norm_backward, rms_norm_forward
from .stats import (
    backward_sums,
    input_grad_from_sums,
    invstd_from_stats,
    merge_stats,
    shard_stats,
    update_running_stats,
)

__all__ = [
    "layer_norm_forward",
    "layer_norm_backward",
    "rms_norm_forward",
    "rms_norm_backward",
    "BatchNormForward",
    "batch_norm_forward",
    "batch_norm_backward",
    "batch_norm_normalize",
    "activation_backward",
    "shard_stats",
    "merge_stats",
    "backward_sums",
    "input_grad_from_sums",
    "invstd_from_stats",
    "update_running_stats",
    "gradcheck",
]
