"""fastnorm: normalization layers for PyTorch that are exactly right and run at the speed of memory.

Public surface: the functional ops (``layer_norm``, ``rms_norm``, ``batch_norm``), the modules in
``fastnorm.nn`` and ``convert_model``. The NumPy reference lives in ``fastnorm.reference``.
"""

__version__ = "0.1.0"

from .functional import batch_norm, layer_norm, rms_norm  # noqa: E402
from .nn.convert import convert_model  # noqa: E402

__all__ = ["layer_norm", "rms_norm", "batch_norm", "convert_model"]
