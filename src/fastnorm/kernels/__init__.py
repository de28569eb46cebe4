"""Triton kernels and their launchers: tensors in, tensors out. No autograd, no modules.

Launch heuristics (block sizes, warps, rows per program, grid sizes) live in ``config.py``.
"""
