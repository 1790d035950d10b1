"""Runtime helpers of the special rules (NumPy only).

Also the helpers of the elementwise ``numpy``/``math``/builtin rules whose formulas do not fit in
a template: digamma (for ``math.lgamma``/``math.gamma``), sinc's derivative, clip, ties of
``min``/``max`` and the per-item partials of ``math.prod``/``math.dist``.
"""

from __future__ import annotations

import numpy as np

from runtime.accumulate import zeros_like_grad
from runtime.broadcast import unbroadcast
from runtime.containers import GradList, GradTuple
from runtime.ops import balanced_eq


def _like(parts, items):
    """Per-item gradients in the structure of ``items``: an array, a tuple or a list."""
    if isinstance(items, np.ndarray):
        return np.asarray(parts, dtype=_float_dtype(items))
    return GradTuple(parts) if isinstance(items, tuple) else GradList(parts)


def _float_dtype(x):
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else np.dtype(float)


# Coefficients of the asymptotic series psi(x) ~ log(x) - 1/(2x) - sum_k B_2k / (2k x^2k).
_PSI_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760)


def digamma(x):
    """The digamma function psi(x) = d/dx log|Gamma(x)| for real ``x``.

    A float gives a float, an array an array of its floating dtype. Non-positive integers (the
    poles) give inf or nan. Computed in float64: reflection for x < 1/2, the recurrence
    psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series.
    """
    t = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = t < 0.5
        z = np.where(reflect, 1.0 - t, t)
        acc = np.zeros_like(z)
        for _ in range(10):  # z >= 1/2, so ten steps reach z >= 10
            small = z < 10.0
            acc -= np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        w = 1.0 / (z * z)
        series = 0.0
        for c in reversed(_PSI_SERIES):
            series = (series + c) * w
        psi = acc + np.log(z) - 0.5 / z - series
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        psi = np.where(reflect, psi - np.pi / np.tan(np.pi * t), psi)
    if isinstance(x, float | int):
        return float(psi)
    return psi.astype(_float_dtype(x), copy=False)


def sinc_grad(x):
    """d/dx of ``np.sinc(x) = sin(pi x) / (pi x)``: (cos(pi x) - sinc(x)) / x, by its Taylor
    series near 0 (where the quotient loses precision; the derivative is 0 at x = 0)."""
    x = np.asarray(x) if not isinstance(x, float | int) else x
    px = np.pi * x
    p2 = px * px
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (np.cos(px) - np.sinc(x)) / np.where(x == 0, 1.0, x)
    # pi * (-(px)/3 + (px)^3/30 - (px)^5/840 + (px)^7/45360), accurate to ~1e-14 for |px| < 0.1
    series = np.pi * px * (-1.0 / 3 + p2 * (1.0 / 30 + p2 * (-1.0 / 840 + p2 / 45360)))
    return np.where(np.abs(px) < 0.1, series, direct)[()]  # [()]: a scalar for a scalar


_NON_FINITE = {"finite": np.isfinite, "nan": np.isnan, "posinf": np.isposinf,
               "neginf": np.isneginf}


def nan_to_num_mask(x, copy, kind):
    """Where ``np.nan_to_num(x)`` takes its value from ``x`` (``kind="finite"``) or from its
    ``nan``/``posinf``/``neginf`` argument.

    Raises for ``copy=False``: the primal overwrote ``x``, so its non-finite entries are lost.
    """
    if not copy:
        raise ValueError("np.nan_to_num(x, copy=False) overwrites x and cannot be "
                         "differentiated; leave copy=True")
    return _NON_FINITE[kind](x)


def clip_partials(g, a, a_min=None, a_max=None, min=None, max=None):
    """Gradients ``(ga, glo, ghi)`` of ``np.clip(a, lo, hi)``: the bounds are ``a_min``/``a_max``
    or NumPy 2's ``min``/``max``, None when absent (their gradient is then None).

    clip is ``minimum(maximum(a, lo), hi)``; the gradient goes to whichever of ``a`` and the
    bounds the result equals, split evenly on ties like ``np.maximum``/``np.minimum``.
    """
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    m = a if lo is None else np.maximum(a, lo)
    ans = m if hi is None else np.minimum(m, hi)
    gm, ghi = g, None
    if hi is not None:
        gm = g * balanced_eq(m, ans, hi)
        ghi = unbroadcast(g * balanced_eq(hi, ans, m), hi)
    ga, glo = gm, None
    if lo is not None:
        ga = gm * balanced_eq(a, m, lo)
        glo = unbroadcast(gm * balanced_eq(lo, m, a), lo)
    return unbroadcast(ga, a), glo, ghi


def tie_split(g, ans, items, key=None):
    """Gradients of ``max(items)``/``min(items)`` (builtins) for each item: ``g`` shared evenly
    among the items equal to the result ``ans``.

    ``items`` is the iterable (a list, tuple or 1-D array), or the tuple of separate arguments
    padded with None for arguments not passed (their gradient is 0.0). ``key`` must be None.
    """
    if key is not None:
        raise NotImplementedError("max/min with key= cannot be differentiated; select the item "
                                  "with an index (e.g. np.argmax of the keys) instead")
    if isinstance(items, np.ndarray):
        hits = items == ans
        return np.where(hits, g / np.count_nonzero(hits), 0.0).astype(_float_dtype(items))
    hits = [item is not None and bool(item == ans) for item in items]
    share = g / sum(hits)
    return _like([share if hit else 0.0 for hit in hits], items)


def default_partial(g, items, default):
    """Gradient of ``default`` in ``max(items, default=default)``: ``g`` when ``items`` is
    empty, else zero."""
    return g if len(items) == 0 else zeros_like_grad(default)


def prod_grad(g, items, start=1):
    """Gradients of ``math.prod(items, start=start)`` for each item, in the structure of
    ``items``: ``g`` times the product of every other factor (prefix and suffix products, so
    zero factors are fine)."""
    for item in items:
        if np.ndim(item) != 0:
            raise TypeError("math.prod of arrays cannot be differentiated; use np.prod or *")
    n = len(items)
    before, after = [start] * (n + 1), [1.0] * (n + 1)
    for i in range(n):
        before[i + 1] = before[i] * items[i]
        after[n - 1 - i] = after[n - i] * items[n - 1 - i]
    return _like([g * before[i] * after[i + 1] for i in range(n)], items)


def dist_grad(g, p, q, ans):
    """Gradient of ``math.dist(p, q)`` (= ``ans``) with respect to ``p``: ``g (p - q) / ans``,
    in the structure of ``p`` (0 where p == q, the kink)."""
    scale = 0.0 if ans == 0 else g / ans
    parts = [scale * (float(a) - float(b)) for a, b in zip(p, q, strict=True)]
    return _like(parts, p)
