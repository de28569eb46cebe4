"""Per-channel statistics of BatchNorm and the pieces synchronized BatchNorm is built from.

A batch split over ranks (shards) is normalized exactly as if it were one batch when:

forward   every rank computes ``shard_stats`` = (count, mean, M2) of its shard (M2 = Σ (x - mean)^2,
          two passes), all ranks exchange them (one all-gather), and every rank merges them with
          ``merge_stats`` in rank order — so every rank holds bitwise the same global statistics;
backward  every rank computes ``backward_sums`` = (Σ dy, Σ dy * xhat) of its shard with the global
          mean/invstd, the sums are added over ranks (one all-reduce), and ``input_grad_from_sums``
          turns them and the global count into the local dx.

``batch_norm_forward``/``batch_norm_backward`` use the same pieces with one shard.
"""

from __future__ import annotations

import numpy as np

from ._common import as_work, as_work_grad, work_dtype


def channel_axes(ndim: int, axis) -> tuple[int, tuple[int, ...]]:
    """``(channel_axis, reduced_axes)`` for an input of ``ndim`` dims, channel at ``axis`` (1 or -1)."""
    if isinstance(axis, bool) or axis not in (1, -1):
        raise ValueError(f"axis must be 1 (channels first) or -1 (channels last), got {axis!r}")
    if ndim < 2:
        raise ValueError(f"x must have at least 2 dims (N, C, ...), got {ndim}")
    ch = 1 if axis == 1 else ndim - 1
    return ch, tuple(a for a in range(ndim) if a != ch)


def channel_view(v: np.ndarray, ndim: int, ch: int) -> np.ndarray:
    """A per-channel vector reshaped to broadcast against an ``ndim``-dim input with channels at ``ch``."""
    shape = [1] * ndim
    shape[ch] = v.shape[0]
    return v.reshape(shape)


def shard_stats(x, axis=1, *, dtype=None):
    """``(count, mean[C], m2[C])`` of one shard: count = values per channel, m2 = Σ (x - mean)^2.

    Two passes (mean first, then squared deviations from it). An empty shard gives count 0 and
    zero mean and m2, which ``merge_stats`` treats as "nothing to add".
    """
    dt = work_dtype(dtype)
    x = as_work(x, dt, "x")
    ch, red = channel_axes(x.ndim, axis)
    c = x.shape[ch]
    count = int(x.size // c) if c else int(np.prod([x.shape[a] for a in red], dtype=np.int64))
    if count == 0:
        return 0, np.zeros(c, dt), np.zeros(c, dt)
    mean = x.sum(axis=red, dtype=dt) / dt.type(count)
    d = x - channel_view(mean, x.ndim, ch)
    m2 = (d * d).sum(axis=red, dtype=dt)
    return count, mean.astype(dt, copy=False), m2.astype(dt, copy=False)


def merge_stats(counts, means, m2s, *, dtype=None):
    """Merge per-shard ``(count, mean, m2)`` into the statistics of the whole batch.

    Chan et al.'s pairwise formula, folded left to right in the order given (a fixed order, so
    every rank that merges the same inputs gets bitwise the same result):

        n = n_a + n_b,   delta = mean_b - mean_a
        mean = mean_a + delta * n_b / n
        m2   = m2_a + m2_b + delta^2 * n_a * n_b / n

    A shard with count 0 is skipped; when the running total is still empty the next shard is taken
    as it is, so empty shards change nothing, bit for bit.
    """
    dt = work_dtype(dtype)
    counts = [int(n) for n in counts]
    means = [as_work(m, dt, "means") for m in means]
    m2s = [as_work(m, dt, "m2s") for m in m2s]
    if not (len(counts) == len(means) == len(m2s)) or not counts:
        raise ValueError("counts, means and m2s must be non-empty sequences of the same length")
    if any(n < 0 for n in counts):
        raise ValueError(f"counts must be >= 0, got {counts}")
    shape = means[0].shape
    if any(m.shape != shape for m in means + m2s):
        raise ValueError("every mean and m2 must have the same shape")
    n = 0
    mean = np.zeros(shape, dt)
    m2 = np.zeros(shape, dt)
    for nb, mb, m2b in zip(counts, means, m2s, strict=True):
        if nb == 0:
            continue
        if n == 0:
            n, mean, m2 = nb, mb.copy(), m2b.copy()
            continue
        tot = n + nb
        delta = mb - mean
        mean = mean + delta * dt.type(nb / tot)
        m2 = m2 + m2b + delta * delta * dt.type(n * nb / tot)
        n = tot
    return n, mean, m2


def invstd_from_stats(count: int, m2, eps: float, *, dtype=None):
    """``1 / sqrt(m2 / count + eps)``: the biased variance normalizes (count 0 is variance 0)."""
    dt = work_dtype(dtype)
    m2 = as_work(m2, dt, "m2")
    var = m2 / dt.type(count) if count > 0 else np.zeros_like(m2)
    return (1.0 / np.sqrt(var + dt.type(eps))).astype(dt)


def update_running_stats(running_mean, running_var, count: int, mean, m2, momentum, num_batches_tracked=0, *,
                         dtype=None):
    """PyTorch's running-statistics update after one training batch: ``(new_mean, new_var, new_count)``.

    ``num_batches_tracked`` is incremented first; the factor is ``momentum``, or, with
    ``momentum=None``, ``1 / num_batches_tracked`` (the new value: a cumulative average). The running
    variance takes the unbiased batch variance ``m2 / (count - 1)``. With ``count == 0`` (an empty
    batch) the running statistics are returned unchanged and only the counter moves, as in torch.
    ``running_mean=None`` (no running statistics) gives ``(None, None, num_batches_tracked)``.
    """
    dt = work_dtype(dtype)
    if running_mean is None:
        return None, None, num_batches_tracked
    rm = as_work(running_mean, dt, "running_mean")
    rv = as_work(running_var, dt, "running_var")
    nbt = int(num_batches_tracked) + 1
    if count == 0:
        return rm.copy(), rv.copy(), nbt
    if count == 1:
        raise ValueError("the unbiased variance needs more than 1 value per channel")
    f = 1.0 / nbt if momentum is None else float(momentum)
    mean = as_work(mean, dt, "mean")
    var_unbiased = as_work(m2, dt, "m2") / dt.type(count - 1)
    new_rm = (dt.type(1.0 - f) * rm + dt.type(f) * mean).astype(dt, copy=False)
    new_rv = (dt.type(1.0 - f) * rv + dt.type(f) * var_unbiased).astype(dt, copy=False)
    return new_rm, new_rv, nbt


def backward_sums(dy, x, mean, invstd, axis=1, *, dtype=None):
    """Per-channel ``(Σ dy, Σ dy * xhat)`` with ``xhat = (x - mean) * invstd``.

    ``dy`` is the gradient reaching the normalization (after the activation's mask, if any); with
    the global ``mean``/``invstd`` these sums add over shards.
    """
    dt = work_dtype(dtype)
    dy, x = as_work_grad(dy, x, dt)
    ch, red = channel_axes(x.ndim, axis)
    mean = as_work(mean, dt, "mean")
    invstd = as_work(invstd, dt, "invstd")
    xhat = (x - channel_view(mean, x.ndim, ch)) * channel_view(invstd, x.ndim, ch)
    return dy.sum(axis=red, dtype=dt), (dy * xhat).sum(axis=red, dtype=dt)


def input_grad_from_sums(dy, x, weight, mean, invstd, sum_dy, sum_dy_xhat, count: int, axis=1, *,
                         dtype=None):
    """dx of BatchNorm with batch statistics, from the global sums and the global count:

        dx = w * invstd * (dy - sum_dy / count - xhat * sum_dy_xhat / count)

    ``weight=None`` means w = 1 (also how ``fix_gamma`` is expressed). ``dy`` is after the
    activation's mask. With ``count == 0`` the shard is empty too and dx is empty.
    """
    dt = work_dtype(dtype)
    x = as_work(x, dt, "x")
    dy = as_work(dy, dt, "dy")
    ch, _ = channel_axes(x.ndim, axis)
    if x.size == 0:
        return np.zeros(x.shape, dt)

    def cv(v, name):
        return channel_view(as_work(v, dt, name), x.ndim, ch)

    xhat = (x - cv(mean, "mean")) * cv(invstd, "invstd")
    inv_n = dt.type(1.0 / count)
    scale = cv(invstd, "invstd") if weight is None else cv(weight, "weight") * cv(invstd, "invstd")
    dx = scale * (dy - cv(sum_dy, "sum_dy") * inv_n - xhat * (cv(sum_dy_xhat, "sum_dy_xhat") * inv_n))
    return dx.astype(dt, copy=False)
