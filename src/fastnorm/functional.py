"""The public functional API (each op is defined in ``fastnorm.ops``)."""

__all__: list[str] = []
