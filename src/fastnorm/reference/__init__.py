"""The float64 NumPy reference: forward and hand-written backward of every op. Imports NumPy only.

Every function takes NumPy arrays (any real dtype; they are converted), computes in float64 — or in
float32 when called with ``dtype=np.float32`` — and returns arrays of that precision. The derivations
are in ``docs/math.md``.
"""

from .layer_norm import layer_norm_backward, layer_norm_forward
from .rms_norm import rms_norm_backward, rms_norm_forward

__all__ = [
    "layer_norm_forward",
    "layer_norm_backward",
    "rms_norm_forward",
    "rms_norm_backward",
]
