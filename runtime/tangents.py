"""Runtime helpers of the tangent (forward-mode) rules of reductions and shape functions (NumPy
only).

Each function takes the tangent ``v`` of one argument (with the primal values it needs) and
returns that argument's term of the result's tangent, shaped and typed like the result ``ans``.
Each is the transpose of the matching adjoint helper in ``runtime/reductions.py`` or
``runtime/shapes.py`` (same tie conventions, same handling of zeros and NaNs), so forward and
reverse mode agree: ``<u, J v> == <J^T u, v>``.
"""

from __future__ import annotations

import math

import numpy as np

from runtime.containers import GradList, GradTuple
from runtime.reductions import (
    _axes,
    _exclusive_products,
    _expand,
    _float_dtype,
    _observations,
    _split_ties,
    _tie_weights,
    _to_lanes,
    norm_grad,
    vector_norm_grad,
)


def _like(t, ans):
    """``t`` with the shape of ``ans`` and its dtype when floating (a NumPy scalar for a scalar
    ``ans``)."""
    t = np.asarray(t)
    kind = getattr(ans, "dtype", None)
    if kind is not None and kind.kind in "fc":
        if t.dtype != kind:
            t = t.astype(kind)
    elif t.dtype.kind not in "fc":
        t = t.astype(float)
    shape = np.shape(ans)
    if t.shape != shape:
        t = np.reshape(t, shape) if t.size == math.prod(shape) else np.broadcast_to(t, shape)
    return t if isinstance(ans, np.ndarray) else t[()]


def _lane_sum(w, v, axes, keepdims, ans):
    """``sum(w * v)`` over the reduced ``axes``: the transpose of ``expand(g) * w``."""
    return _like(np.sum(w * v, axis=axes, keepdims=keepdims), ans)


def unsupported(v, what: str):
    """Raise for a variant of a function that has no derivative (e.g. an ``out=`` argument)."""
    raise NotImplementedError(f"{what} cannot be differentiated; assign the result instead")


def constant_only(v, name: str):
    """Raise: the derivative through argument ``name`` is not supported (it must be constant)."""
    raise NotImplementedError(f"no derivative with respect to {name}: it must not depend on the "
                              "differentiated inputs")


def block(arrays):
    """``np.block`` of nested lists of tangents: gradient lists become plain lists, as NumPy
    before 2.3 arranges only ``list`` itself."""
    def plain(x):
        return [plain(v) for v in x] if isinstance(x, list) else x

    return np.block(plain(arrays))


def listed(items):
    """The tangents of a list result (``np.split``...) as a gradient list (``+`` adds items)."""
    return GradList(items)


# --- products, extrema ------------------------------------------------------------------------

def prod(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``ans = np.prod(a, axis, keepdims=keepdims)``: each element's tangent times the
    product of the other elements of its lane (exact with zeros)."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    return _lane_sum(_exclusive_products(a, axes), np.asarray(v), axes, keepdims, ans)


def nanprod(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.nanprod``: NaNs count as ones with a zero tangent."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return prod(np.where(nan, 0.0, v), np.where(nan, 1.0, a), ans, axis, keepdims)


def extremum(v, a, ans, axis=None, keepdims=False):
    """Tangent of a max or min reduction with result ``ans``: the mean tangent of the elements
    equal to it (ties share equally; NaNs ignored by nanmax/nanmin count for nothing). A lane
    whose result is NaN gets a NaN tangent."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    full = _expand(ans, axes, keepdims)
    weights = _tie_weights(a == full, axes).astype(_float_dtype(a))
    t = _lane_sum(weights, np.asarray(v), axes, keepdims, ans)
    if np.isnan(ans).any():
        t = _like(np.where(np.isnan(ans), np.nan, t), ans)
    return t


def ptp(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.ptp(a)`` = max - min (ties split equally)."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    hi = _tie_weights(a == np.max(a, axis=axes, keepdims=True), axes)
    lo = _tie_weights(a == np.min(a, axis=axes, keepdims=True), axes)
    return _lane_sum((hi - lo).astype(_float_dtype(a)), np.asarray(v), axes, keepdims, ans)


# --- NaN-ignoring sums and moments -----------------------------------------------------------

def nanmean(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.nanmean``: the mean of the tangents of the non-NaN elements."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    valid = ~np.isnan(a)
    count = np.sum(valid, axis=axes, keepdims=True)
    weights = (valid / np.maximum(count, 1)).astype(_float_dtype(a))
    return _lane_sum(weights, np.where(valid, v, 0.0), axes, keepdims, ans)


def var(v, a, ans, axis=None, ddof=0, keepdims=False):
    """Tangent of ``np.var(a, axis, ddof=ddof, keepdims=keepdims)``:
    ``2 sum((a - mean) v) / (n - ddof)``."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    n = math.prod(a.shape[i] for i in axes)
    centered = a - np.mean(a, axis=axes, keepdims=True)
    return _lane_sum(centered * (2.0 / (n - ddof)), np.asarray(v), axes, keepdims, ans)


def nanvar(v, a, ans, axis=None, ddof=0, keepdims=False):
    """Tangent of ``np.nanvar``: as ``var`` over the non-NaN elements."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    valid = ~np.isnan(a)
    n = np.sum(valid, axis=axes, keepdims=True).astype(_float_dtype(a))
    mean = np.sum(np.where(valid, a, 0.0), axis=axes, keepdims=True) / np.maximum(n, 1.0)
    centered = np.where(valid, a - mean, 0.0)
    t = np.sum(centered * np.where(valid, v, 0.0), axis=axes, keepdims=True) * (2.0 / (n - ddof))
    return _like(t, ans)


# --- weighted average -------------------------------------------------------------------------

def _no_returned(returned):
    if returned:
        raise NotImplementedError("the derivative of np.average(..., returned=True) is not "
                                  "supported; compute the sum of the weights separately")


def average(v, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    """The term of ``a`` in the tangent of ``np.average``: the same average of ``v``."""
    _no_returned(returned)
    return _like(np.average(v, axis, weights, keepdims=keepdims), ans)


def average_weights(vw, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    """The term of ``weights`` in the tangent of ``ans = np.average(a, axis, weights)``:
    ``sum(vw (a - ans)) / sum(weights)`` over each lane."""
    _no_returned(returned)
    a = np.asarray(a)
    given = None if axis is None else tuple(
        int(ax) % a.ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    axes = _axes(given, a.ndim)
    w = np.asarray(weights)
    vw = np.broadcast_to(np.asarray(vw), w.shape)
    if w.shape != a.shape:  # weights along the given axes only, as NumPy aligns them
        order = np.argsort(given)
        shape = tuple(s if i in given else 1 for i, s in enumerate(a.shape))
        w = np.transpose(w, order).reshape(shape)
        vw = np.transpose(vw, order).reshape(shape)
    total = np.sum(np.broadcast_to(w, a.shape), axis=axes, keepdims=True)
    centered = a - _expand(ans, axes, keepdims)
    return _like(np.sum(vw * centered, axis=axes, keepdims=True) / total, ans)


# --- cumulative -------------------------------------------------------------------------------

def cumprod(v, a, ans, axis=None):
    """Tangent of ``ans = np.cumprod(a, axis)``, exact with zeros in ``a``.

    Before the first zero ``z`` of a lane it is ``ans * cumsum(v / a)``; from ``z`` on only the
    tangent of ``a[z]`` counts, times the cumulative product with ``a[z]`` replaced by 1 (a
    second zero makes that 0 too).
    """
    a, v = np.asarray(a), np.asarray(v)
    if axis is None:
        return cumprod(np.ravel(np.broadcast_to(v, a.shape)), np.ravel(a), ans, 0)
    zero = a == 0
    if not zero.any():
        return _like(ans * np.cumsum(v / a, axis=axis), ans)
    seen = np.cumsum(zero, axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    head = ans * np.cumsum(np.where(before, v / np.where(before, a, 1), 0), axis=axis)
    at_zero = np.cumsum(np.where(first, v, 0), axis=axis) \
        * np.cumprod(np.where(first, 1, a), axis=axis)
    return _like(head + at_zero, ans)


def nancumprod(v, a, ans, axis=None):
    """Tangent of ``np.nancumprod``: NaNs count as ones with a zero tangent."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return cumprod(np.where(nan, 0.0, v), np.where(nan, 1.0, a), ans, axis)


# --- norms ------------------------------------------------------------------------------------

def _norm_tangent(v, x, ans, weights_of, axes, keepdims):
    """``sum(W * v)`` over ``axes``, ``W`` the gradient of the norm for a gradient of ones
    (every norm gradient is the incoming gradient times such a ``W``)."""
    x = np.asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(float)
    ones = np.ones(np.shape(ans), dtype=_float_dtype(ans))
    w = weights_of(ones, x)
    return _lane_sum(w, np.asarray(v), _axes(axes, x.ndim), keepdims, ans)


def norm(v, x, ans, ord=None, axis=None, keepdims=False):
    """Tangent of ``ans = np.linalg.norm(x, ord, axis, keepdims)`` (vector and matrix norms)."""
    return _norm_tangent(v, x, ans, lambda g, x: norm_grad(g, x, ans, ord, axis, keepdims),
                         axis, keepdims)


def vector_norm(v, x, ans, axis=None, keepdims=False, ord=2):
    """Tangent of ``ans = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)``."""
    return _norm_tangent(v, x, ans,
                         lambda g, x: vector_norm_grad(g, x, ans, axis, keepdims, ord),
                         axis, keepdims)


def matrix_norm(v, x, ans, keepdims=False, ord="fro"):
    """Tangent of ``ans = np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)``."""
    return _norm_tangent(v, x, ans, lambda g, x: norm_grad(g, x, ans, ord, (-2, -1), keepdims),
                         (-2, -1), keepdims)


# --- order statistics -------------------------------------------------------------------------

def _quantile_frame(a, q, axis, method, scale):
    if method != "linear":
        raise NotImplementedError(f"the derivative of quantiles with method={method!r} is not "
                                  "supported; only method='linear'")
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    lanes, _ = _to_lanes(a, axes)
    n = lanes.shape[-1]
    order = np.argsort(lanes, axis=-1, kind="stable")
    s = np.take_along_axis(lanes, order, axis=-1)
    qs = np.ravel(np.asarray(q, dtype=float)) * scale
    position = qs * (n - 1)
    lo = np.clip(np.floor(position), 0, n - 1).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    t = np.clip(position - lo, 0.0, 1.0)
    return a, axes, order, s, n, lo, hi, t


def quantile(v, a, q, ans, axis=None, method="linear", keepdims=False, scale=1.0):
    """The term of ``a`` in the tangent of ``np.quantile(a, q * scale, axis, method, keepdims)``
    (linear interpolation between order statistics; tied order statistics share their tangent
    equally, as in ``reductions.quantile_grads``)."""
    a, axes, order, s, n, lo, hi, t = _quantile_frame(a, q, axis, method, scale)
    lanes, _ = _to_lanes(np.broadcast_to(np.asarray(v), a.shape), axes)
    vs = _split_ties(s, np.take_along_axis(lanes, order, axis=-1).astype(_float_dtype(a)))
    out = (1.0 - t) * vs[..., lo] + t * vs[..., hi]  # kept axes + (number of q,)
    return _like(np.moveaxis(out, -1, 0), ans)


def quantile_q(vq, a, q, ans, axis=None, method="linear", keepdims=False, scale=1.0):
    """The term of ``q`` in the tangent of ``np.quantile``: the slope between the two order
    statistics each quantile interpolates."""
    a, axes, order, s, n, lo, hi, t = _quantile_frame(a, q, axis, method, scale)
    slope = (s[..., hi] - s[..., lo]) * ((n - 1) * scale)
    vq = np.ravel(np.broadcast_to(np.asarray(vq, dtype=float), np.shape(q)))
    return _like(np.moveaxis(slope * vq, -1, 0), ans)


# --- covariance -------------------------------------------------------------------------------

def _cov(vm, vy, m, y, rowvar, bias, ddof):
    """The tangent of the full (unsqueezed) covariance matrix along ``vm`` and ``vy`` (None:
    a zero tangent)."""
    x = _observations(m, rowvar)
    if vm is None:
        dx = np.zeros_like(x)
    else:
        dx = np.array(vm, ndmin=2, dtype=x.dtype)
        dx = dx.T if not rowvar and np.ndim(m) != 1 else dx
        dx = np.broadcast_to(dx, x.shape)
    if y is not None:
        yy = np.array(y, ndmin=2, dtype=_float_dtype(y))
        flip = not rowvar and yy.shape[0] != 1
        yy = yy.T if flip else yy
        if vy is None:
            dy = np.zeros_like(yy)
        else:
            dy = np.array(vy, ndmin=2, dtype=yy.dtype)
            dy = np.broadcast_to(dy.T if flip else dy, yy.shape)
        x = np.concatenate((x, yy), axis=0)
        dx = np.concatenate((dx, dy), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - np.mean(x, axis=1, keepdims=True)
    dcentered = dx - np.mean(dx, axis=1, keepdims=True)
    product = dcentered @ centered.T
    return (product + product.T) * (1.0 / (x.shape[1] - ddof))


def cov(vm, vy, m, y, ans, rowvar=True, bias=False, ddof=None):
    """The term of ``m`` (``vy`` None) or ``y`` (``vm`` None) in the tangent of
    ``ans = np.cov(m, y, rowvar, bias, ddof)``."""
    return _like(_cov(vm, vy, m, y, rowvar, bias, ddof), ans)


def corrcoef(vx, vy, x, ans, y=None, rowvar=True):
    """The term of ``x`` (``vy`` None) or ``y`` (``vx`` None) in the tangent of
    ``ans = np.corrcoef(x, y, rowvar)``: ``R = C / sqrt(d d^T)`` with ``d = diag(C)``."""
    if np.ndim(ans) == 0:  # a single variable: always 1
        return _like(0.0, ans)
    dc = _cov(vx, vy, x, y, rowvar, False, None)
    c = np.cov(x, y, rowvar)
    variance = np.diag(c)
    scale = np.sqrt(np.outer(variance, variance))
    half = np.diag(dc) / (2.0 * variance)
    return _like(dc / scale - ans * (half[:, None] + half[None, :]), ans)


# --- interpolation, polynomials ---------------------------------------------------------------

def _interp_frame(x, xp, period):
    if period is not None:
        raise NotImplementedError("the derivative of np.interp with period= is not supported")
    x, xp = np.asarray(x), np.asarray(xp, dtype=float)
    n = xp.size
    below, above = x < xp[0], x > xp[-1]
    inside = ~(below | above)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    k = np.minimum(j + 1, n - 1)
    width = np.where(k > j, xp[k] - xp[j], 1.0)
    t = np.where(k > j, (x - xp[j]) / width, 0.0)
    return below, above, inside, j, k, width, t


def interp_x(vx, x, xp, fp, ans, period=None):
    """The term of ``x`` in the tangent of ``np.interp``: the slope of the segment (0 outside
    the sample points)."""
    below, above, inside, j, k, width, t = _interp_frame(x, xp, period)
    fp = np.asarray(fp)
    return _like(np.where(inside, (fp[k] - fp[j]) / width * vx, 0.0), ans)


def interp_fp(vfp, x, xp, ans, left=None, right=None, period=None):
    """The term of ``fp`` in the tangent of ``np.interp``: ``vfp`` interpolated (the end values
    outside the sample points, unless ``left`` / ``right`` replace them)."""
    below, above, inside, j, k, width, t = _interp_frame(x, xp, period)
    vfp = np.asarray(vfp)
    out = np.where(inside, (1.0 - t) * vfp[j] + t * vfp[k], 0.0)
    if left is None:
        out = out + np.where(below, vfp[0], 0.0)
    if right is None:
        out = out + np.where(above, vfp[-1], 0.0)
    return _like(out, ans)


def interp_left(vleft, x, xp, ans, period=None):
    """The term of ``left`` in the tangent of ``np.interp``: where ``x`` is below ``xp``."""
    below = _interp_frame(x, xp, period)[0]
    return _like(np.where(below, vleft, 0.0), ans)


def interp_right(vright, x, xp, ans, period=None):
    """The term of ``right`` in the tangent of ``np.interp``: where ``x`` is above ``xp``."""
    above = _interp_frame(x, xp, period)[1]
    return _like(np.where(above, vright, 0.0), ans)


def polyval_x(vx, p, x, ans):
    """The term of ``x`` in the tangent of ``np.polyval(p, x)``: ``p'(x) vx``."""
    p = np.asarray(p)
    n = p.shape[0]
    if n < 2:
        return _like(np.zeros(np.shape(ans)), ans)
    kind = np.result_type(p.dtype, np.float32)
    powers = np.arange(n - 1, 0, -1, dtype=kind).reshape((-1,) + (1,) * (p.ndim - 1))
    return _like(np.broadcast_to(np.polyval(p[:-1] * powers, x) * vx, np.shape(ans)), ans)


# --- shapes -----------------------------------------------------------------------------------

def reshape_each(ans, *tangents):
    """The tangents of ``np.atleast_Nd(a, b, ...)`` (a tuple): each reshaped like its result."""
    return GradTuple(_like(t, r) for t, r in zip(tangents, ans, strict=True))


def broadcast_arrays(ans, *tangents):
    """The tangents of ``np.broadcast_arrays(a, b, ...)``: each broadcast like its result."""
    return GradTuple(_like(np.broadcast_to(np.asarray(t), np.shape(r)), r)
                     for t, r in zip(tangents, ans, strict=True))


_INDEX_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad(v, pad_width, mode, vc, ans):
    """Tangent of ``np.pad(array, pad_width, mode, constant_values=...)`` for the tangents
    ``v`` of ``array`` and ``vc`` of ``constant_values``. Only modes that copy elements are
    linear; any other raises."""
    if not isinstance(mode, str) or mode not in _INDEX_MODES:
        raise NotImplementedError(f"np.pad with mode={mode!r} cannot be differentiated; "
                                  f"supported modes: {', '.join(_INDEX_MODES)}")
    v = np.asarray(v)
    if mode == "constant":
        return _like(np.pad(v, pad_width, mode, constant_values=vc), ans)
    return _like(np.pad(v, pad_width, mode), ans)


def cast(v, ans):
    """Tangent of ``ans = a.astype(dtype)``: ``v`` in ``ans``'s dtype; a cast to an integer or
    boolean type is piecewise constant, with a zero tangent."""
    kind = getattr(ans, "dtype", None)
    if kind is None or kind.kind not in "fc":
        return _like(np.zeros(np.shape(ans)), ans)
    return _like(v, ans)


def select(condlist, vchoices, vdefault, ans):
    """Tangent of ``np.select(condlist, choicelist, default)``: the same selection of the
    choices' and the default's tangents."""
    return _like(np.select(condlist, list(vchoices), vdefault), ans)


def piecewise(v, ans, funclist):
    """Tangent of ``np.piecewise(x, condlist, funclist)`` with constant values in ``funclist``:
    zero (the result does not depend on ``x``'s values). Functions raise."""
    if any(callable(f) for f in funclist):
        raise NotImplementedError("np.piecewise with functions in funclist cannot be "
                                  "differentiated; use np.where or np.select")
    return _like(np.zeros(np.shape(ans)), ans)
