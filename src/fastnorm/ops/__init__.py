"""The ops: argument checks, torch custom-op registration (autograd, fake shapes), and the choice
between the Triton kernels and PyTorch's CPU implementation."""
