"""Elementwise partials whose formulas do not fit in a template (NumPy only): digamma (for
``math.lgamma``/``math.gamma``) and its derivative ``trigamma``, sinc's derivative and its own,
clip, the slope of a power, ties of ``min``/``max``, and the per-item partials of
``math.prod``/``math.dist``, each next to its tangent (``math_prod_grad_tangent``: the
tangent of ``math_prod_grad``).
"""

from __future__ import annotations

import math

import numpy as np

from runtime.arrays import asarray, is_array, is_zero
from runtime.broadcast import unbroadcast, zeros_like_grad
from runtime.containers import GradList, GradTuple


def balanced_eq(x, z, y):
    """Where ``x`` equals the result ``z`` of max/min(x, y): 1, or 1/2 on a tie with ``y``.

    Splitting ties evenly keeps ``max(x, x)`` differentiable with gradient 1. A NaN equals a
    NaN here: ``np.maximum`` returns its NaN argument, so the gradient follows it (and
    ``np.fmax``, which returns the other one, gives that one the gradient).
    """
    return ((x == z) | ((x != x) & (z != z))) / (1.0 + ((x == y) | ((x != x) & (y != y))))


def pow_slope(x, y):
    """``d(x ** y)/dx = y * x ** (y - 1)``, 0 where ``y`` is 0: ``x ** 0`` is 1 everywhere, at
    ``x == 0`` too, where the formula gives ``0 * inf``. At ``x == 0`` with ``y < 1`` the slope
    is infinite (Python numbers as NumPy's: ``inf``, not ``ZeroDivisionError``)."""
    if type(x) in _NUMBERS and type(y) in _NUMBERS:
        if y == 0:
            return 0.0
        try:
            return y * x ** (y - 1)
        except ZeroDivisionError:  # 0.0 ** negative
            return y * math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = y * x ** (y - 1)
    return np.where(np.equal(y, 0), 0, slope)


def pow_slope_dy(x, y):
    """``d(pow_slope(x, y))/dy = x ** (y - 1) * (1 + y log x)`` (the log taken as 0 at
    ``x == 0``, where ``x ** (y - 1)`` carries the limit)."""
    x = np.asarray(x, dtype=np.result_type(x, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return x ** (y - 1) * (1 + y * np.log(np.where(x == 0, 1.0, x)))


_NUMBERS = (float, int, bool)


def _per_item(parts, items):
    """Per-item gradients in the structure of ``items``: an array, a tuple or a list."""
    if is_array(items):
        return asarray(parts, dtype=_real_float_dtype(items))
    return GradTuple(parts) if isinstance(items, tuple) else GradList(parts)


def _real_float_dtype(x):
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
    t = asarray(x, dtype=float)
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
    return psi.astype(_real_float_dtype(x), copy=False)



# psi'(x) ~ 1/x + 1/(2x^2) + sum_k B_2k / x^(2k+1) (Bernoulli numbers B_2 ... B_14)
_TRIGAMMA_SERIES = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6)


def trigamma(x):
    """psi'(x), the derivative of ``digamma`` (the tangent of ``digamma``):
    reflection for x < 1/2, the recurrence psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then
    the asymptotic series. A float gives a float."""
    t = asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = t < 0.5
        z = np.where(reflect, 1.0 - t, t)
        acc = np.zeros_like(z)
        for _ in range(10):
            small = z < 10.0
            acc += np.where(small, 1.0 / (z * z), 0.0)
            z = np.where(small, z + 1.0, z)
        w = 1.0 / (z * z)
        series = 0.0
        for c in reversed(_TRIGAMMA_SERIES):
            series = (series + c) * w
        psi1 = acc + 1.0 / z + 0.5 * w + series / z
        # psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)
        psi1 = np.where(reflect, (np.pi / np.sin(np.pi * t)) ** 2 - psi1, psi1)
    if isinstance(x, float | int):
        return float(psi1)
    return psi1.astype(_real_float_dtype(x), copy=False)


def sinc_grad(x):
    """d/dx of ``np.sinc(x) = sin(pi x) / (pi x)``: (cos(pi x) - sinc(x)) / x, by its Taylor
    series near 0 (where the quotient loses precision; the derivative is 0 at x = 0)."""
    x = asarray(x) if not isinstance(x, float | int) else x
    px = np.pi * x
    p2 = px * px
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (np.cos(px) - np.sinc(x)) / np.where(x == 0, 1.0, x)
    # pi * (-(px)/3 + (px)^3/30 - (px)^5/840 + (px)^7/45360), accurate to ~1e-14 for |px| < 0.1
    series = np.pi * px * (-1.0 / 3 + p2 * (1.0 / 30 + p2 * (-1.0 / 840 + p2 / 45360)))
    return np.where(np.abs(px) < 0.1, series, direct)[()]  # [()]: a scalar for a scalar


def sinc_second(x):
    """The derivative of ``sinc_grad``: ``sinc''(x) = pi^2 f''(pi x)``, ``f(u) =
    sin(u) / u``, ``f''(u) = (2 sin u - 2 u cos u - u^2 sin u) / u^3``; near 0 the derivative of
    the series ``sinc_grad`` uses there."""
    x = asarray(x) if not isinstance(x, float | int) else x
    u = np.pi * x
    u2 = u * u
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(u == 0, 1.0, u)
        direct = (2.0 * np.sin(u) - 2.0 * u * np.cos(u) - u2 * np.sin(u)) / (safe * safe * safe)
    series = -1.0 / 3 + u2 * (1.0 / 10 + u2 * (-1.0 / 168 + u2 / 6480))
    return (np.pi * np.pi * np.where(np.abs(u) < 0.1, series, direct))[()]


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
    if is_array(items):  # (a NaN result is the NaN item's: the gradient follows it)
        hits = (items == ans) | (np.isnan(items) & np.isnan(ans)) if items.dtype.kind in "fc" \
            else items == ans
        return np.where(hits, g / np.count_nonzero(hits), 0.0).astype(_real_float_dtype(items))
    hits = [item is not None and bool(item == ans or (item != item and ans != ans))
            for item in items]
    share = g / sum(hits)
    return _per_item([share if hit else 0.0 for hit in hits], items)


def default_partial(g, items, default):
    """Gradient of ``default`` in ``max(items, default=default)``: ``g`` when ``items`` is
    empty, else zero."""
    return g if len(items) == 0 else zeros_like_grad(default)


def math_prod_grad(g, items, start=1):
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
    return _per_item([g * before[i] * after[i + 1] for i in range(n)], items)


def math_prod_grad_tangent(g, items, ditems, start=1, dstart=0.0):
    """Terms of ``items`` and ``start`` in the tangent of ``math_prod_grad(g, items, start)``:
    ``g`` times the tangent of each item's product of the other factors."""
    n = len(items)
    ditems = [0.0] * n if is_zero(ditems) else list(ditems)
    before, dbefore = [start] * (n + 1), [dstart] * (n + 1)
    after, dafter = [1.0] * (n + 1), [0.0] * (n + 1)
    for i in range(n):
        before[i + 1] = before[i] * items[i]
        dbefore[i + 1] = dbefore[i] * items[i] + before[i] * ditems[i]
        j = n - 1 - i
        after[j] = after[j + 1] * items[j]
        dafter[j] = dafter[j + 1] * items[j] + after[j + 1] * ditems[j]
    return _per_item([g * (dbefore[i] * after[i + 1] + before[i] * dafter[i + 1])
                      for i in range(n)], items)


def dist_grad(g, p, q, ans):
    """Gradient of ``math.dist(p, q)`` (= ``ans``) with respect to ``p``: ``g (p - q) / ans``,
    in the structure of ``p`` (0 where p == q, the kink)."""
    scale = 0.0 if ans == 0 else g / ans
    parts = [scale * (float(a) - float(b)) for a, b in zip(p, q, strict=True)]
    return _per_item(parts, p)


def dist_grad_tangent(g, dp, dq, dans, p, q, ans):
    """Terms of ``p``, ``q`` and ``ans`` in the tangent of ``dist_grad(g, p, q, ans)``
    (``g (p - q) / ans``)."""
    n = len(p)
    dp = [0.0] * n if is_zero(dp) else list(dp)
    dq = [0.0] * n if is_zero(dq) else list(dq)
    scale = 0.0 if ans == 0 else g / ans
    dscale = 0.0 if ans == 0 else -g * dans / (ans * ans)
    parts = [scale * (float(da) - float(db)) + dscale * (float(a) - float(b))
             for a, b, da, db in zip(p, q, dp, dq, strict=True)]
    return _per_item(parts, p)
