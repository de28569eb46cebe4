"""fastnorm.convert_model: same outputs and gradients, state and flags carried over."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import fastnorm
from test_batch_norm import TorchvisionFrozenBatchNorm2d


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + x)


class TinyResNet(nn.Module):
    def __init__(self, frozen_stem=False):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.stem_bn = TorchvisionFrozenBatchNorm2d(8) if frozen_stem else nn.BatchNorm2d(8)
        self.blocks = nn.Sequential(Block(8), Block(8))
        self.bn1d = nn.BatchNorm1d(8)
        self.head_norm = nn.LayerNorm(8)
        self.rms = nn.RMSNorm(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.stem_bn(self.stem(x)))
        x = self.blocks(x).mean((2, 3))
        return self.fc(self.rms(self.head_norm(self.bn1d(x))))


def _outputs_and_grads(model, x):
    model.zero_grad(set_to_none=True)
    y = model(x)
    y.square().sum().backward()
    return y.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("cl", [False, True])
def test_convert_resnet_like(training, cl, device, monkeypatch):
    # fp32 convolutions and matmuls (TF32 would round the tiny BN differences into 1e-3 ones)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    torch.manual_seed(0)
    model = TinyResNet().to(device)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
    model.blocks[1].conv.weight.requires_grad_(False)
    model.train(training)
    x = torch.randn(2, 3, 5, 6, device=device)
    if cl:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    before = copy.deepcopy(model)
    y0, g0 = _outputs_and_grads(before, x)
    weight = model.blocks[0].bn.weight
    out = fastnorm.convert_model(model)
    assert out is model
    assert isinstance(model.blocks[0].bn, fastnorm.nn.BatchNorm2d)
    assert isinstance(model.bn1d, fastnorm.nn.BatchNorm1d)
    assert isinstance(model.head_norm, fastnorm.nn.LayerNorm)
    assert isinstance(model.rms, fastnorm.nn.RMSNorm)
    assert model.blocks[0].bn.weight is weight  # the same Parameter: optimizers keep working
    assert all(m.training == training for m in model.modules())
    assert not model.blocks[1].conv.weight.requires_grad
    y1, g1 = _outputs_and_grads(model, x)
    torch.testing.assert_close(y1, y0, rtol=1e-4, atol=1e-5)
    assert g1.keys() == g0.keys()
    for name in g0:
        torch.testing.assert_close(g1[name], g0[name], rtol=1e-3, atol=1e-4, msg=name)
    for (n0, b0), (n1, b1) in zip(before.named_buffers(), model.named_buffers(), strict=True):
        assert n0 == n1
        torch.testing.assert_close(b1, b0, rtol=1e-5, atol=1e-6, msg=n0)
    # torch.nn state_dict keys are unchanged: a checkpoint loads either way, strictly
    before.load_state_dict(model.state_dict(), strict=True)


def test_convert_frozen(device):
    torch.manual_seed(1)
    model = TinyResNet(frozen_stem=True).to(device).eval()
    with torch.no_grad():
        model.stem_bn.weight.uniform_(0.5, 1.5)
        model.stem_bn.running_var.uniform_(0.5, 1.5)
        model.stem_bn.running_mean.uniform_(-1, 1)
    x = torch.randn(2, 3, 4, 4, device=device)
    y0 = model(x).detach()
    fastnorm.convert_model(model)
    assert isinstance(model.stem_bn, TorchvisionFrozenBatchNorm2d)  # only with frozen=True
    fastnorm.convert_model(model, frozen=True)
    assert isinstance(model.stem_bn, fastnorm.nn.FrozenBatchNorm2d)
    torch.testing.assert_close(model(x), y0, rtol=1e-4, atol=1e-5)


def test_convert_root_and_idempotent(device):
    bn = nn.BatchNorm3d(4, momentum=None, affine=False).to(device)
    new = fastnorm.convert_model(bn)
    assert isinstance(new, fastnorm.nn.BatchNorm3d) and new.momentum is None and not new.affine
    assert fastnorm.convert_model(new) is new
    with pytest.raises(TypeError, match="torch.nn.Module"):
        fastnorm.convert_model("not a module")


def test_convert_sync(device):
    sync_mod = pytest.importorskip("fastnorm.nn.sync_batch_norm")
    model = TinyResNet().to(device)
    fastnorm.convert_model(model, sync=True)
    assert isinstance(model.blocks[0].bn, sync_mod.SyncBatchNorm)
    assert isinstance(model.head_norm, fastnorm.nn.LayerNorm)
