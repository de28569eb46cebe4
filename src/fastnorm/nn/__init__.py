"""Drop-in ``torch.nn`` modules backed by fastnorm's ops."""

from .layer_norm import LayerNorm, RMSNorm

__all__: list[str] = ["LayerNorm", "RMSNorm"]
