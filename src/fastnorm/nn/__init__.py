"""Drop-in ``torch.nn`` modules backed by fastnorm's ops."""

from .batch_norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, FrozenBatchNorm2d
from .layer_norm import LayerNorm, RMSNorm
from .sync_batch_norm import SyncBatchNorm

__all__: list[str] = ["LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "FrozenBatchNorm2d",
                       "SyncBatchNorm"]
