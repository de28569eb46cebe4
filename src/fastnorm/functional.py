"""The public functional API (each op is defined in ``fastnorm.ops``)."""

from .ops.batch_norm import batch_norm
from .ops.layer_norm import layer_norm, rms_norm

__all__: list[str] = ["layer_norm", "rms_norm", "batch_norm"]
