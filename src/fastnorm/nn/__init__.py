"""Drop-in ``torch.nn`` modules backed by fastnorm's ops."""

__all__: list[str] = []
