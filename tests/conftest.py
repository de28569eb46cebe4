"""Test set-up: without a GPU, the Triton kernels run through Triton's interpreter.

TRITON_INTERPRET must be set before any kernel module is imported (Triton reads it when
``@triton.jit`` decorates), so it is set here, at collection, before fastnorm is imported.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

from fastnorm.kernels import config as _config  # noqa: E402  (after TRITON_INTERPRET is set)

# Every spatial size compiled into the BatchNorm kernels, whatever order the tests run in: a process past
# BN_SPATIAL_COMPILED sizes runs later ones with S as an argument (test_batch_norm.py tests that on purpose).
_config.BN_SPATIAL_COMPILED = 1 << 30


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device; run on the GPU machine")
    for item in items:
        if "gpu" in item.keywords or "multigpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture
def device():
    return DEVICE
