"""The stage functions SyncBatchNorm is built from, against the reference's sync pieces."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastnorm import reference as ref
from fastnorm.ops import batch_norm as bn
from helpers import assert_close, to_np64

CASES = [((4, 3, 5), False, torch.float32), ((3, 65, 2, 2), True, torch.float32), ((5, 7), False, torch.bfloat16),
         ((2, 4, 3, 3), False, torch.float16), ((2, 3, 2, 2, 3), True, torch.bfloat16)]


def _x(shape, cl, dtype, device, seed=0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g) * 2 + offset).to(dtype).to(device)
    if cl:
        x = x.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
    return x


@pytest.mark.parametrize("shape,cl,dtype", CASES)
def test_local_stats(shape, cl, dtype, device):
    x = _x(shape, cl, dtype, device, offset=3.0)
    mean, m2 = bn.local_stats(x)
    assert mean.dtype == m2.dtype == torch.float32
    count, rmean, rm2 = ref.shard_stats(to_np64(x))
    assert count == x.numel() // x.shape[1]
    assert_close("mean", mean, rmean, torch.float32)
    assert_close("m2", m2, rm2, torch.float32)
    empty = bn.local_stats(x[:0])
    assert all(torch.equal(t, torch.zeros_like(t)) for t in empty)


def test_merge_stats_with_empty_and_uneven_shards(device):
    shards = [_x((n, 5, 3), False, torch.float32, device, seed=n, offset=float(n)) for n in (0, 1, 4, 0, 7)]
    counts, means, m2s = [], [], []
    for s in shards:
        m, q = bn.local_stats(s)
        counts.append(float(s.numel() // 5))
        means.append(m)
        m2s.append(q)
    count, mean, var = bn.merge_stats(torch.tensor(counts, device=device), torch.stack(means), torch.stack(m2s))
    rc, rmean, rm2 = ref.merge_stats([int(c) for c in counts], [to_np64(m) for m in means], [to_np64(q) for q in m2s])
    assert count.dim() == 0 and float(count) == rc
    assert_close("mean", mean, rmean, torch.float32)
    assert_close("var", var, rm2 / rc, torch.float32)
    whole = torch.cat(shards)
    _, wmean, wm2 = ref.shard_stats(to_np64(whole))
    assert_close("mean (whole batch)", mean, wmean, torch.float32)
    assert_close("var (whole batch)", var, wm2 / rc, torch.float32)
    # empty shards are exact no-ops, bit for bit; all empty gives zeros
    c2, m2_, v2 = bn.merge_stats(torch.tensor([c for c in counts if c], device=device),
                                 torch.stack([m for m, c in zip(means, counts, strict=True) if c]),
                                 torch.stack([q for q, c in zip(m2s, counts, strict=True) if c]))
    assert torch.equal(mean, m2_) and torch.equal(var, v2) and torch.equal(count, c2)
    z = torch.zeros(2, 5, device=device)
    c0, m0, v0 = bn.merge_stats(torch.zeros(2, device=device), z, z)
    assert float(c0) == 0 and torch.equal(m0, z[0]) and torch.equal(v0, z[0])


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("count_on_device", [False, True])
def test_update_running_stats(momentum, count_on_device, device):
    rm = torch.randn(6, device=device)
    rv = torch.rand(6, device=device) + 0.5
    mean = torch.randn(6, device=device)
    var = torch.rand(6, device=device)
    nbt = torch.tensor(3, device=device)
    count = torch.tensor(11.0, device=device) if count_on_device else 11
    rm0, rv0 = rm.clone(), rv.clone()
    bn.update_running_stats_(rm, rv, mean, var, count, momentum, nbt)
    new_rm, new_rv, _ = ref.update_running_stats(to_np64(rm0), to_np64(rv0), 11, to_np64(mean), to_np64(var) * 11,
                                                 momentum, num_batches_tracked=2)
    assert_close("running_mean", rm, new_rm, torch.float32)
    assert_close("running_var", rv, new_rv, torch.float32)
    bn.update_running_stats_(rm, rv, mean, var, torch.tensor(0.0, device=device) if count_on_device else 0,
                             momentum, nbt)
    assert_close("running_mean (count 0)", rm, new_rm, torch.float32)


@pytest.mark.parametrize("shape,cl,dtype", CASES)
@pytest.mark.parametrize("activation", [None, "relu"])
def test_apply_and_backward_stages(shape, cl, dtype, activation, device):
    x = _x(shape, cl, dtype, device, offset=1.0)
    c = x.shape[1]
    g = torch.Generator().manual_seed(5)
    w = (torch.rand(c, generator=g) + 0.5).to(device)
    b = torch.randn(c, generator=g).to(device)
    z = _x(shape, cl, dtype, device, seed=3)
    mean, m2 = bn.local_stats(x)
    n = x.numel() // c
    invstd = torch.rsqrt(m2 / n + 1e-5)
    y = bn.apply(x, mean, invstd, w, b, z=z, activation=activation)
    assert y.stride() == x.stride() and y.dtype == x.dtype
    ry = ref.batch_norm_normalize(to_np64(x), to_np64(mean), to_np64(invstd), to_np64(w), to_np64(b), z=to_np64(z),
                                  activation=activation)
    assert_close("y", y, ry, dtype)
    dy = _x(shape, cl, dtype, device, seed=4)
    sdy, sdx = bn.backward_sums(dy, x, mean, invstd, y=y, activation=activation)
    gnp = ref.activation_backward(to_np64(dy), to_np64(y), activation)
    rs, rsx = ref.backward_sums(gnp, to_np64(x), to_np64(mean), to_np64(invstd))
    assert_close("sum_dy", sdy, rs, torch.float32, param_grad=True)
    assert_close("sum_dy_xhat", sdx, rsx, torch.float32, param_grad=True)
    for count in (n, torch.tensor(float(n), device=device)):
        dx, dz = bn.backward_dx(dy, x, mean, invstd, w, sdy, sdx, count, y=y, activation=activation)
        rdx = ref.input_grad_from_sums(gnp, to_np64(x), to_np64(w), to_np64(mean), to_np64(invstd), rs, rsx, n)
        assert_close("dx", dx, rdx, dtype)
        assert dx.stride() == x.stride()
        assert_close("dz", dz, gnp, dtype)
    _, dz_none = bn.backward_dx(dy, x, mean, invstd, None, sdy, sdx, n, y=y, activation=activation, need_dz=False)
    assert dz_none is None


def test_stages_equal_single_process_batch_norm(device):
    """Shards through the stages (merge in rank order) give the single-process BatchNorm of the whole batch."""
    shards = [_x((n, 4, 3), False, torch.float32, device, seed=10 + n) for n in (2, 0, 5)]
    whole = torch.cat(shards)
    stats = [bn.local_stats(s) for s in shards]
    counts = torch.tensor([float(s.numel() // 4) for s in shards], device=device)
    count, mean, var = bn.merge_stats(counts, torch.stack([m for m, _ in stats]), torch.stack([q for _, q in stats]))
    invstd = torch.rsqrt(var + 1e-5)
    fwd = ref.batch_norm_forward(to_np64(whole), None, None, None, None, training=True, momentum=0.1, eps=1e-5)
    y = torch.cat([bn.apply(s, mean, invstd, None, None) for s in shards])
    assert_close("y", y, fwd.y, torch.float32)
    dy = torch.randn_like(whole)
    parts = [bn.backward_sums(d, s, mean, invstd) for d, s in zip(dy.split([2, 0, 5]), shards, strict=True)]
    sdy = sum(p[0] for p in parts)
    sdx = sum(p[1] for p in parts)
    dx = torch.cat([bn.backward_dx(d, s, mean, invstd, None, sdy, sdx, count)[0]
                    for d, s in zip(dy.split([2, 0, 5]), shards, strict=True)])
    rdx, *_ = ref.batch_norm_backward(to_np64(dy), to_np64(whole), None, fwd, training=True)
    assert_close("dx", dx, rdx, torch.float32)
    assert np.isfinite(to_np64(dx)).all()


def test_stage_errors(device):
    x = torch.randn(3, 4, 2, device=device)
    with pytest.raises(ValueError, match=r"mean must have shape \(4,\)"):
        bn.apply(x, torch.zeros(3, device=device), torch.ones(4, device=device), None, None)
    with pytest.raises(ValueError, match="needs y"):
        bn.backward_sums(x, x, torch.zeros(4, device=device), torch.ones(4, device=device), activation="relu")
    with pytest.raises(ValueError, match="merge_stats needs"):
        bn.merge_stats(torch.ones(2, device=device), torch.zeros(3, 4, device=device), torch.zeros(3, 4, device=device))
    z4, o4 = torch.zeros(4, device=device), torch.ones(4, device=device)
    with pytest.raises(ValueError, match="count must be a number or a one-element tensor"):
        bn.backward_dx(x, x, z4, o4, None, z4, z4, torch.ones(2, device=device))
    with pytest.raises(TypeError, match="count must be a number"):
        bn.backward_dx(x, x, z4, o4, None, z4, z4, "6")
    with pytest.raises(ValueError, match=r"var must have running_mean's shape \(4,\)"):
        bn.update_running_stats_(z4.clone(), o4.clone(), z4, torch.ones(3, device=device), 6.0, 0.1)
    with pytest.raises(TypeError, match="count must be a number"):
        bn.update_running_stats_(z4.clone(), o4.clone(), z4, o4, None, 0.1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_stage_tensors_on_another_device_are_an_error():
    """A CPU count or num_batches_tracked with CUDA statistics is refused before any launch (a kernel would
    otherwise read a host address)."""
    x = torch.randn(3, 4, 2, device="cuda")
    z4, o4 = torch.zeros(4, device="cuda"), torch.ones(4, device="cuda")
    with pytest.raises(RuntimeError, match="count is on cpu"):
        bn.backward_dx(x, x, z4, o4, None, z4, z4, torch.tensor(6.0))
    with pytest.raises(RuntimeError, match="count is on cpu"):
        bn.update_running_stats_(z4.clone(), o4.clone(), z4, o4, torch.tensor(6.0), 0.1)
    with pytest.raises(RuntimeError, match="num_batches_tracked is on cpu"):
        bn.update_running_stats_(z4.clone(), o4.clone(), z4, o4, 6.0, None, torch.ones((), dtype=torch.long))
