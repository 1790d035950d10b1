"""Reductions and the other array functions that combine elements: products, extrema, moments,
cumulative sums and products, norms, quantiles, covariance, convolution, interpolation,
polynomials (NumPy only), and the builtin ``sum``.

Next to each adjoint helper (``prod_grad``: the gradient of ``np.prod``) are its tangents:
``<function>_tangent`` is the tangent (forward mode) of the NumPy function (``prod_tangent``, one
term per argument as ``<function>_tangent_<argument>`` where there are several), and
``<helper>_tangent`` the tangent of the adjoint helper itself (``prod_grad_tangent``, for forward
over reverse: ``hvp``, ``hessian``). Each tangent is the transpose of the matching adjoint
helper (same tie conventions, same handling of zeros and NaNs), so forward and reverse mode
agree: ``<u, J v> == <J^T u, v>``.

A helper's tangent takes the tangent of one argument (with the primal values it needs) and
returns that argument's term of the result's tangent, shaped and typed like the result ``ans``.
The tangent of an adjoint helper gives the terms of the primal values the helper also reads
(``a``, its result ``ans``, weights ...), by the product rule on the helper's own formula, with
the same masks, tie conventions and branches; a helper returning a tuple gets one term, computed
from all the tangents at once (``dg`` included), a ``GradTuple`` whose absent entries stay None.
Tangents arrive shaped like their values, or as a Python zero for an inactive scalar.
"""

from __future__ import annotations

import math

import numpy as np

from runtime.arrays import asarray, float_dtype, inverse_axes, is_array, is_zero, size
from runtime.broadcast import result_like, tangent_array, unbroadcast, unreduce
from runtime.containers import GradList, GradTuple, add_pairs
from runtime.linalg import svd_tangent


def _axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes (every axis for None)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(ax) % ndim for ax in axes))


def _expand(r, axes: tuple[int, ...], keepdims: bool):
    """A reduced result ``r`` (or its gradient) with the reduced ``axes`` back as length 1, so
    that it broadcasts against the input."""
    r = asarray(r)
    return r if keepdims else np.expand_dims(r, axes)


def _to_lanes(a, axes: tuple[int, ...]):
    """Move the reduced ``axes`` of ``a`` last and flatten them: shape ``kept + (n,)``.

    Returns the lanes array and a function mapping an array of that shape back to ``a``'s
    layout."""
    kept = [i for i in range(a.ndim) if i not in axes]
    perm = kept + list(axes)
    moved = np.transpose(a, perm)
    lanes = moved.reshape(moved.shape[:len(kept)] + (math.prod(moved.shape[len(kept):]),))

    def back(x):
        return np.transpose(x.reshape(moved.shape), inverse_axes(perm))

    return lanes, back


def _reverse_cumsum(g, axis: int):
    """``out[i] = sum(g[i:])`` along ``axis``: the adjoint of a cumulative sum."""
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _pad(x, axis: int, before: int, after: int):
    """``x`` with zeros added along ``axis`` (same dtype)."""
    widths = [(0, 0)] * x.ndim
    widths[axis] = (before, after)
    return np.pad(x, widths)


def _undiff(g, axis: int):
    """The adjoint of ``np.diff(x, axis=axis)`` (one difference): ``g[i-1] - g[i]``."""
    return -np.diff(_pad(g, axis, 1, 1), axis=axis)


def _tie_weights(hit, axes):
    """``hit`` (a boolean mask of the elements equal to a reduction's max or min) divided by
    the number of hits in its lane: ties share the gradient equally."""
    count = np.sum(hit, axis=axes, keepdims=True)
    return hit / np.maximum(count, 1)


# --- products --------------------------------------------------------------------------------

def _exclusive_products(a, axes):
    """For each element, the product of the other elements of its lane (no division, so
    zeros are exact)."""
    lanes, back = _to_lanes(a, axes)
    if lanes.shape[-1] == 0:
        return np.zeros_like(a)
    ones = np.ones_like(lanes[..., :1])
    left = np.cumprod(np.concatenate([ones, lanes[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, lanes[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return back(left * right)


def prod_grad(g, a, axis=None, keepdims=False):
    """Gradient of ``np.prod(a, axis, keepdims=keepdims)``: ``g`` times the product of the
    other elements of each lane (correct with zeros in ``a``)."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    return _expand(g, axes, keepdims) * _exclusive_products(a, axes)



def _exclusive_products_tangent(a, da, axes):
    """Tangent of ``_exclusive_products(a, axes)`` (each element: the product of the others in
    its lane) along ``da``: prefix times suffix products, each differentiated as a cumulative
    product (exact with zeros)."""
    lanes, back = _to_lanes(a, axes)
    dlanes = _to_lanes(tangent_array(da, a), axes)[0]
    if lanes.shape[-1] == 0:
        return np.zeros(a.shape, dtype=float_dtype(a))
    ones, zeros = np.ones_like(lanes[..., :1]), np.zeros_like(dlanes[..., :1])
    head = np.concatenate([ones, lanes[..., :-1]], axis=-1)
    dhead = np.concatenate([zeros, dlanes[..., :-1]], axis=-1)
    left = np.cumprod(head, axis=-1)
    dleft = cumprod_tangent(dhead, head, left, -1)
    tail = np.concatenate([ones, lanes[..., :0:-1]], axis=-1)
    dtail = np.concatenate([zeros, dlanes[..., :0:-1]], axis=-1)
    right = np.cumprod(tail, axis=-1)
    dright = cumprod_tangent(dtail, tail, right, -1)
    return back(dleft * right[..., ::-1] + left * dright[..., ::-1])


def prod_grad_tangent(g, da, a, axis=None, keepdims=False):
    """Term of ``a`` in the tangent of ``prod_grad(g, a, axis, keepdims)``."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    return _expand(g, axes, keepdims) * _exclusive_products_tangent(a, da, axes)



def prod_tangent(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``ans = np.prod(a, axis, keepdims=keepdims)``: each element's tangent times the
    product of the other elements of its lane (exact with zeros)."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    return _lane_sum(_exclusive_products(a, axes), asarray(v), axes, keepdims, ans)


def nanprod_grad(g, a, axis=None, keepdims=False):
    """Gradient of ``np.nanprod``: NaNs count as ones and get no gradient."""
    a = asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, prod_grad(g, np.where(nan, 1.0, a), axis, keepdims))


def nanprod_grad_tangent(g, da, a, axis=None, keepdims=False):
    """Term of ``a`` in the tangent of ``reductions.nanprod_grad`` (NaNs: ones, no tangent)."""
    a = asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, prod_grad_tangent(g, np.where(nan, 0.0, tangent_array(da, a)),
                                                np.where(nan, 1.0, a), axis, keepdims))


def nanprod_tangent(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.nanprod``: NaNs count as ones with a zero tangent."""
    a = asarray(a)
    nan = np.isnan(a)
    return prod_tangent(np.where(nan, 0.0, v), np.where(nan, 1.0, a), ans, axis, keepdims)


# --- max, min ---------------------------------------------------------------------------------

def extremum_grad(g, a, ans, axis=None, keepdims=False):
    """Gradient of a max or min reduction with result ``ans``: to the elements equal to it,
    split equally on ties. NaNs (ignored by nanmax/nanmin) get none; a lane whose result is NaN
    (np.max of a lane holding a NaN) gets a NaN gradient, as the result carries no slope."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    full = _expand(ans, axes, keepdims)
    weights = _tie_weights(a == full, axes)
    out = _expand(g, axes, keepdims) * weights.astype(float_dtype(a))
    if np.isnan(ans).any():
        out = np.where(np.isnan(full), np.nan, out)
    return out


def extremum_tangent(v, a, ans, axis=None, keepdims=False):
    """Tangent of a max or min reduction with result ``ans``: the mean tangent of the elements
    equal to it (ties share equally; NaNs ignored by nanmax/nanmin count for nothing). A lane
    whose result is NaN gets a NaN tangent."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    full = _expand(ans, axes, keepdims)
    weights = _tie_weights(a == full, axes).astype(float_dtype(a))
    t = _lane_sum(weights, asarray(v), axes, keepdims, ans)
    if np.isnan(ans).any():
        t = result_like(np.where(np.isnan(ans), np.nan, t), ans)
    return t


def ptp_grad(g, a, axis=None, keepdims=False):
    """Gradient of ``np.ptp(a)`` = max - min (ties split equally)."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    hi = _tie_weights(a == np.max(a, axis=axes, keepdims=True), axes)
    lo = _tie_weights(a == np.min(a, axis=axes, keepdims=True), axes)
    return _expand(g, axes, keepdims) * (hi - lo).astype(float_dtype(a))


def ptp_tangent(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.ptp(a)`` = max - min (ties split equally)."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    hi = _tie_weights(a == np.max(a, axis=axes, keepdims=True), axes)
    lo = _tie_weights(a == np.min(a, axis=axes, keepdims=True), axes)
    return _lane_sum((hi - lo).astype(float_dtype(a)), asarray(v), axes, keepdims, ans)


# --- NaN-ignoring sums and moments -----------------------------------------------------------

def nanmean_grad(g, a, axis=None, keepdims=False):
    """Gradient of ``np.nanmean``: ``g`` over the count of non-NaN elements, 0 at NaNs."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    valid = ~np.isnan(a)
    count = np.sum(valid, axis=axes, keepdims=True)
    return _expand(g, axes, keepdims) * (valid / np.maximum(count, 1)).astype(float_dtype(a))



def nanmean_tangent(v, a, ans, axis=None, keepdims=False):
    """Tangent of ``np.nanmean``: the mean of the tangents of the non-NaN elements."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    valid = ~np.isnan(a)
    count = np.sum(valid, axis=axes, keepdims=True)
    weights = (valid / np.maximum(count, 1)).astype(float_dtype(a))
    return _lane_sum(weights, np.where(valid, v, 0.0), axes, keepdims, ans)


def var_grad(g, a, axis=None, ddof=0, keepdims=False):
    """Gradient of ``np.var(a, axis, ddof=ddof, keepdims=keepdims)``:
    ``2 (a - mean) / (n - ddof)``."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    n = math.prod(a.shape[i] for i in axes)
    if n == 0:  # an empty lane: nothing to differentiate (np.var gives nan)
        return np.zeros(a.shape, float_dtype(a))
    centered = a - np.mean(a, axis=axes, keepdims=True)
    scale = 2.0 / (n - ddof) if n != ddof else np.inf  # var is nan then: so is its gradient
    return _expand(g, axes, keepdims) * centered * scale


def over_twice(g, ans):
    """``g / (2 ans)``, the chain rule through ``ans = sqrt(...)`` (``np.std``), with 0 where
    ``ans`` is 0: there all entries are equal, a kink, and the gradient is 0 as that of
    ``np.linalg.norm`` at 0 (one entry: ``np.std`` is constant, 0)."""
    zero = np.equal(ans, 0)
    return np.where(zero, 0.0, g * 0.5 / np.where(zero, 1.0, ans))


def var_tangent(v, a, ans, axis=None, ddof=0, keepdims=False):
    """Tangent of ``np.var(a, axis, ddof=ddof, keepdims=keepdims)``:
    ``2 sum((a - mean) v) / (n - ddof)``."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    n = math.prod(a.shape[i] for i in axes)
    centered = a - np.mean(a, axis=axes, keepdims=True)
    return _lane_sum(centered * (2.0 / (n - ddof)), asarray(v), axes, keepdims, ans)


def _nan_centered(a, axis):
    """What ``np.nanvar``'s derivatives share: the axes, where ``a`` is not NaN, how many such
    elements each lane has, and ``a`` less its lane's mean there (0 at NaNs)."""
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    valid = ~np.isnan(a)
    n = np.sum(valid, axis=axes, keepdims=True).astype(float_dtype(a))
    mean = np.sum(np.where(valid, a, 0.0), axis=axes, keepdims=True) / np.maximum(n, 1.0)
    return axes, valid, n, np.where(valid, a - mean, 0.0)


def nanvar_grad(g, a, axis=None, ddof=0, keepdims=False):
    """Gradient of ``np.nanvar``: as ``var`` over the non-NaN elements, 0 at NaNs."""
    axes, valid, n, centered = _nan_centered(a, axis)
    return _expand(g, axes, keepdims) * centered * (2.0 / (n - ddof))



def nanvar_grad_tangent(g, da, a, axis=None, ddof=0, keepdims=False):
    """Term of ``a`` in the tangent of ``nanvar_grad(g, a, ...)``: the same helper on
    ``da`` with ``a``'s NaNs (the centring is linear, the counts constant)."""
    a = asarray(a)
    return nanvar_grad(g, np.where(np.isnan(a), np.nan, tangent_array(da, a)), axis, ddof,
                       keepdims)


def nanvar_tangent(v, a, ans, axis=None, ddof=0, keepdims=False):
    """Tangent of ``np.nanvar``: as ``var`` over the non-NaN elements."""
    axes, valid, n, centered = _nan_centered(a, axis)
    t = np.sum(centered * np.where(valid, v, 0.0), axis=axes, keepdims=True) * (2.0 / (n - ddof))
    return result_like(t, ans)


# --- cumulative -------------------------------------------------------------------------------

def cumsum_grad(g, a, axis=None):
    """Gradient of ``np.cumsum(a, axis)`` (a flat result for ``axis=None``)."""
    g = asarray(g)
    if axis is None:
        return _reverse_cumsum(g, 0).reshape(np.shape(a))
    return _reverse_cumsum(g, axis)


def cumprod_grad(g, a, ans, axis=None):
    """Gradient of ``ans = np.cumprod(a, axis)``, exact with zeros in ``a``.

    Before the first zero of a lane the usual ``revcumsum(g * ans) / a`` holds. At the first
    zero ``z`` the gradient is ``revcumsum(g * y)`` with ``y`` the cumulative product where
    ``a[z]`` is replaced by 1. After it every product still holds that zero: gradient 0.
    """
    a, g, ans = asarray(a), asarray(g), asarray(ans)
    if axis is None:
        return cumprod_grad(g, np.ravel(a), ans, 0).reshape(a.shape)
    zero = a == 0
    if not zero.any():
        return _reverse_cumsum(g * ans, axis) / a
    seen = np.cumsum(zero, axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    head = _reverse_cumsum(g * ans, axis) / np.where(before, a, 1)
    at_zero = _reverse_cumsum(g * np.cumprod(np.where(first, 1, a), axis=axis), axis)
    return np.where(before, head, np.where(first, at_zero, 0))



def cumprod_grad_tangent(g, da, dans, a, ans, axis=None):
    """Terms of ``a`` and ``ans`` in the tangent of ``cumprod_grad(g, a, ans, axis)``
    (the same split at the first zero ``z`` of each lane). Before ``z`` and at ``z`` the
    helper's formulas are differentiated. After ``z`` its gradient is 0 only because every
    product there holds ``a[z]``: its tangent is ``da[z]`` times the gradient of the cumulative
    product with ``a[z]`` replaced by 1."""
    a, g, ans = asarray(a), asarray(g), asarray(ans)
    da, dans = tangent_array(da, a), tangent_array(dans, ans)
    if axis is None:
        return cumprod_grad_tangent(g, np.ravel(da), np.ravel(dans), np.ravel(a), ans,
                                    0).reshape(a.shape)
    rev = _reverse_cumsum
    zero = a == 0
    if not zero.any():
        return rev(g * dans, axis) / a - rev(g * ans, axis) * da / (a * a)
    seen = np.cumsum(zero, axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    ab, dab = np.where(before, a, 1), np.where(before, da, 0)
    dhead = rev(g * dans, axis) / ab - rev(g * ans, axis) * dab / (ab * ab)
    base, dbase = np.where(first, 1, a), np.where(first, 0, da)
    y = np.cumprod(base, axis=axis)
    dat_zero = rev(g * cumprod_tangent(dbase, base, y, axis), axis)
    dz = np.sum(np.where(first, da, 0), axis=axis, keepdims=True)
    dafter = dz * cumprod_grad(g, base, y, axis)
    return np.where(before, dhead, np.where(first, dat_zero, dafter))



def cumprod_tangent(v, a, ans, axis=None):
    """Tangent of ``ans = np.cumprod(a, axis)``, exact with zeros in ``a``.

    Before the first zero ``z`` of a lane it is ``ans * cumsum(v / a)``; from ``z`` on only the
    tangent of ``a[z]`` counts, times the cumulative product with ``a[z]`` replaced by 1 (a
    second zero makes that 0 too).
    """
    a, v = asarray(a), asarray(v)
    if axis is None:
        return cumprod_tangent(np.ravel(np.broadcast_to(v, a.shape)), np.ravel(a), ans, 0)
    zero = a == 0
    if not zero.any():
        return result_like(ans * np.cumsum(v / a, axis=axis), ans)
    seen = np.cumsum(zero, axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    head = ans * np.cumsum(np.where(before, v / np.where(before, a, 1), 0), axis=axis)
    at_zero = np.cumsum(np.where(first, v, 0), axis=axis) \
        * np.cumprod(np.where(first, 1, a), axis=axis)
    return result_like(head + at_zero, ans)


def nancumprod_grad(g, a, ans, axis=None):
    """Gradient of ``np.nancumprod``: NaNs count as ones and get no gradient."""
    a = asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, cumprod_grad(g, np.where(nan, 1.0, a), ans, axis))


def nancumprod_grad_tangent(g, da, dans, a, ans, axis=None):
    """Terms of ``a`` and ``ans`` in the tangent of ``reductions.nancumprod_grad``."""
    a = asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, cumprod_grad_tangent(g, np.where(nan, 0.0, tangent_array(da, a)),
                                                   dans, np.where(nan, 1.0, a), ans, axis))


def nancumprod_tangent(v, a, ans, axis=None):
    """Tangent of ``np.nancumprod``: NaNs count as ones with a zero tangent."""
    a = asarray(a)
    nan = np.isnan(a)
    return cumprod_tangent(np.where(nan, 0.0, v), np.where(nan, 1.0, a), ans, axis)


# --- differences ------------------------------------------------------------------------------

def diff_grads(g, a, n=1, axis=-1, prepend=None, append=None):
    """Gradients ``(a, prepend, append)`` of ``np.diff(a, n, axis, prepend, append)``."""
    g = asarray(g)
    axis = axis % g.ndim
    length = np.shape(a)[axis] + sum(0 if p is None else 1 if np.ndim(p) == 0
                                     else np.shape(p)[axis] for p in (prepend, append))
    if length < n:  # fewer elements than differences: an empty result, no gradient
        g = np.zeros(g.shape[:axis] + (length,) + g.shape[axis + 1:], g.dtype)
    else:
        for _ in range(n):
            g = _undiff(g, axis)
    sizes = [0 if p is None else 1 if np.ndim(p) == 0 else np.shape(p)[axis]
             for p in (prepend, append)]
    ga = np.take(g, np.arange(sizes[0], g.shape[axis] - sizes[1]), axis=axis)
    parts = []
    for p, piece in ((prepend, np.arange(sizes[0])),
                     (append, np.arange(g.shape[axis] - sizes[1], g.shape[axis]))):
        like = asarray(p) if isinstance(p, (list, tuple)) else p
        parts.append(None if p is None else unbroadcast(np.take(g, piece, axis=axis), like))
    return ga, parts[0], parts[1]


def ediff1d_grads(g, ary, to_end=None, to_begin=None):
    """Gradients ``(ary, to_end, to_begin)`` of ``np.ediff1d``."""
    g = np.ravel(g)
    nb = 0 if to_begin is None else size(to_begin)
    ne = 0 if to_end is None else size(to_end)
    ga = _undiff(g[nb:g.size - ne], 0).reshape(np.shape(ary))
    gb = None if to_begin is None else g[:nb].reshape(np.shape(to_begin))
    ge = None if to_end is None else g[g.size - ne:].reshape(np.shape(to_end))
    return ga, ge, gb


# --- weighted average -------------------------------------------------------------------------

def _average_frame(g, a, axis, returned, keepdims):
    """What the derivatives of ``np.average(a, axis, ...)`` share: ``a`` as an array, the axes
    given (None: all) and averaged over, and ``g`` expanded to broadcast against ``a``."""
    if returned:
        raise NotImplementedError("the gradient of np.average(..., returned=True) is not "
                                  "supported; compute the sum of the weights separately")
    a = asarray(a)
    given = None if axis is None else tuple(
        int(ax) % a.ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    axes = _axes(given, a.ndim)
    return a, given, axes, _expand(g, axes, keepdims)


def average_grads(g, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    """Gradients ``(a, weights)`` of ``np.average(a, axis, weights, keepdims=keepdims)``."""
    a, given, axes, ge = _average_frame(g, a, axis, returned, keepdims)
    if weights is None:
        n = math.prod(a.shape[i] for i in axes)
        return np.broadcast_to(ge * (1.0 / n), a.shape), None
    w = asarray(weights)
    order = None
    if w.shape != a.shape:  # weights along the given axes only, as NumPy aligns them
        order = np.argsort(given)
        w = np.transpose(w, order).reshape(
            tuple(s if i in given else 1 for i, s in enumerate(a.shape)))
    total = np.sum(np.broadcast_to(w, a.shape), axis=axes, keepdims=True)
    ga = unbroadcast(ge * w / total, a)
    gw = unbroadcast(ge * (a - _expand(ans, axes, keepdims)) / total, w)
    if order is not None:
        gw = np.transpose(gw.reshape(np.transpose(weights, order).shape), inverse_axes(order))
    return ga, gw


def average_grads_tangent(g, dg, a, da, ans, dans, axis=None, weights=None, dweights=None,
                          returned=False, keepdims=False):
    """Tangent of ``(ga, gw) = reductions.average_grads(g, a, ans, axis, weights, ...)``:
    ``ga = g w / W`` and ``gw = g (a - ans) / W`` with ``W`` the sum of the weights."""
    a, given, axes, ge = _average_frame(g, a, axis, returned, keepdims)
    dge = _expand(tangent_array(dg, g), axes, keepdims)
    if weights is None:
        n = math.prod(a.shape[i] for i in axes)
        return GradTuple((np.broadcast_to(dge * (1.0 / n), a.shape), None))
    w = asarray(weights)
    dw = tangent_array(dweights, w)
    order = None
    if w.shape != a.shape:  # weights along the given axes only, as NumPy aligns them
        order = np.argsort(given)
        shape = tuple(s if i in given else 1 for i, s in enumerate(a.shape))
        w = np.transpose(w, order).reshape(shape)
        dw = np.transpose(dw, order).reshape(shape)
    total = np.sum(np.broadcast_to(w, a.shape), axis=axes, keepdims=True)
    dtotal = np.sum(np.broadcast_to(dw, a.shape), axis=axes, keepdims=True)
    dga = unbroadcast(dge * w / total + ge * dw / total - ge * w * dtotal / total ** 2, a)
    centered = a - _expand(ans, axes, keepdims)
    dcentered = tangent_array(da, a) - _expand(tangent_array(dans, ans), axes, keepdims)
    dgw = unbroadcast((dge * centered + ge * dcentered) / total
                      - ge * centered * dtotal / total ** 2, w)
    if order is not None:
        dgw = np.transpose(dgw.reshape(np.transpose(weights, order).shape), inverse_axes(order))
    return GradTuple((dga, dgw))



def _no_returned(returned):
    if returned:
        raise NotImplementedError("the derivative of np.average(..., returned=True) is not "
                                  "supported; compute the sum of the weights separately")


def average_tangent(v, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    """The term of ``a`` in the tangent of ``np.average``: the same average of ``v``."""
    _no_returned(returned)
    return result_like(np.average(v, axis, weights, keepdims=keepdims), ans)


def average_tangent_weights(vw, a, ans, axis=None, weights=None, returned=False, keepdims=False):
    """The term of ``weights`` in the tangent of ``ans = np.average(a, axis, weights)``:
    ``sum(vw (a - ans)) / sum(weights)`` over each lane."""
    _no_returned(returned)
    a = asarray(a)
    given = None if axis is None else tuple(
        int(ax) % a.ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    axes = _axes(given, a.ndim)
    w = asarray(weights)
    vw = np.broadcast_to(asarray(vw), w.shape)
    if w.shape != a.shape:  # weights along the given axes only, as NumPy aligns them
        order = np.argsort(given)
        shape = tuple(s if i in given else 1 for i, s in enumerate(a.shape))
        w = np.transpose(w, order).reshape(shape)
        vw = np.transpose(vw, order).reshape(shape)
    total = np.sum(np.broadcast_to(w, a.shape), axis=axes, keepdims=True)
    centered = a - _expand(ans, axes, keepdims)
    return result_like(np.sum(vw * centered, axis=axes, keepdims=True) / total, ans)


# --- norms ------------------------------------------------------------------------------------

def _vector_norm_grad(g, x, ans, ord, axes, keepdims):
    ge, norm = _expand(g, axes, keepdims), _expand(ans, axes, keepdims)
    if ord is None or ord == 2:
        return ge * x / np.where(norm == 0, 1, norm)  # 0 at x = 0
    if ord == np.inf or ord == -np.inf:
        return ge * np.sign(x) * _tie_weights(np.abs(x) == norm, axes).astype(x.dtype)
    if ord == 0:  # counts non-zeros: piecewise constant
        return np.zeros_like(x)
    if ord == 1:
        return ge * np.sign(x)
    if isinstance(ord, str):
        raise ValueError(f"invalid norm order {ord!r} for vectors")
    return ge * np.sign(x) * (np.abs(x) / np.where(norm == 0, 1, norm)) ** (ord - 1)


def _matrix_norm_grad(g, x, ans, ord, axes, keepdims):
    row, col = (int(ax) % x.ndim for ax in axes)
    both = tuple(sorted((row, col)))
    ge, norm = _expand(g, both, keepdims), _expand(ans, both, keepdims)
    if ord is None or ord in ("fro", "f"):
        return ge * x / np.where(norm == 0, 1, norm)
    if ord in ("nuc", 2, -2):  # d sigma_i = u_i^T dX v_i
        u, _, vh = np.linalg.svd(np.moveaxis(x, (row, col), (-2, -1)), full_matrices=False)
        if ord == 2:
            u, vh = u[..., :1], vh[..., :1, :]
        elif ord == -2:
            u, vh = u[..., -1:], vh[..., -1:, :]
        return ge * np.moveaxis(u @ vh, (-2, -1), (row, col))
    if ord in (1, -1, np.inf, -np.inf):
        # 1 / -1: max / min over columns of the column sums of |x|; inf / -inf: rows
        summed, over = (row, col) if ord in (1, -1) else (col, row)
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        return ge * np.sign(x) * _tie_weights(sums == norm, over).astype(x.dtype)
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def norm_grad(g, x, ans, ord=None, axis=None, keepdims=False):
    """Gradient of ``ans = np.linalg.norm(x, ord, axis, keepdims)`` (vector and matrix norms)."""
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(float)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and x.ndim == 2):
            return _vector_norm_grad(g, x, ans, None, tuple(range(x.ndim)), keepdims)
        axis = tuple(range(x.ndim))
    elif np.ndim(axis) == 0:
        axis = (axis,)
    if len(axis) == 1:
        return _vector_norm_grad(g, x, ans, ord, _axes(axis, x.ndim), keepdims)
    return _matrix_norm_grad(g, x, ans, ord, axis, keepdims)



def _vector_norm_grad_tangent(g, dx, dans, x, ans, ord, axes, keepdims):
    ge, norm = _expand(g, axes, keepdims), _expand(ans, axes, keepdims)
    dnorm = _expand(tangent_array(dans, ans), axes, keepdims)
    safe = np.where(norm == 0, 1, norm)
    if ord is None or ord == 2:  # ge x / norm
        return ge * (dx / safe - x * np.where(norm == 0, 0, dnorm) / (safe * safe))
    if ord in (np.inf, -np.inf, 0, 1):  # piecewise constant in x
        return np.zeros(x.shape, dtype=np.result_type(x, ge))
    if isinstance(ord, str):
        raise ValueError(f"invalid norm order {ord!r} for vectors")
    # ge sign(x) r^(ord - 1), r = |x| / norm: dr = (sign(x) dx - r dnorm) / norm
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(x) / safe
        inner = (np.sign(x) ** 2 * dx - x * dnorm / safe) / safe
        return ge * (ord - 1) * r ** (ord - 2) * inner


def _matrix_norm_grad_tangent(g, dx, dans, x, ans, ord, axes, keepdims):
    row, col = (int(ax) % x.ndim for ax in axes)
    both = tuple(sorted((row, col)))
    if ord is None or ord in ("fro", "f"):
        return _vector_norm_grad_tangent(g, dx, dans, x, ans, None, both, keepdims)
    ge = _expand(g, both, keepdims)
    if ord in ("nuc", 2, -2):  # ge u v^T over the singular vectors used
        xm = np.moveaxis(x, (row, col), (-2, -1))
        dxm = np.moveaxis(dx, (row, col), (-2, -1))
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        du, _, dvh = svd_tangent(dxm, (u, s, vh), xm, full_matrices=False)
        if ord == 2:
            u, vh, du, dvh = u[..., :1], vh[..., :1, :], du[..., :1], dvh[..., :1, :]
        elif ord == -2:
            u, vh, du, dvh = u[..., -1:], vh[..., -1:, :], du[..., -1:], dvh[..., -1:, :]
        return ge * np.moveaxis(du @ vh + u @ dvh, (-2, -1), (row, col))
    if ord in (1, -1, np.inf, -np.inf):  # sign(x) times a tie mask: piecewise constant
        return np.zeros(x.shape, dtype=np.result_type(x, ge))
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def _float_array(x):
    x = asarray(x)
    return x if x.dtype.kind == "f" else x.astype(float)


def norm_grad_tangent(g, dx, dans, x, ans, ord=None, axis=None, keepdims=False):
    """Terms of ``x`` and ``ans`` in the tangent of ``norm_grad(g, x, ans, ...)``."""
    x = _float_array(x)
    dx = tangent_array(dx, x)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and x.ndim == 2):
            return _vector_norm_grad_tangent(g, dx, dans, x, ans, None, tuple(range(x.ndim)),
                                             keepdims)
        axis = tuple(range(x.ndim))
    elif np.ndim(axis) == 0:
        axis = (axis,)
    if len(axis) == 1:
        return _vector_norm_grad_tangent(g, dx, dans, x, ans, ord, _axes(axis, x.ndim), keepdims)
    return _matrix_norm_grad_tangent(g, dx, dans, x, ans, ord, axis, keepdims)



def _norm_lane_sum(v, x, ans, weights_of, axes, keepdims):
    """``sum(W * v)`` over ``axes``, ``W`` the gradient of the norm for a gradient of ones
    (every norm gradient is the incoming gradient times such a ``W``)."""
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(float)
    ones = np.ones(np.shape(ans), dtype=float_dtype(ans))
    w = weights_of(ones, x)
    return _lane_sum(w, asarray(v), _axes(axes, x.ndim), keepdims, ans)


def complex_moduli(x, ord=None, axis=None):
    """``|x|`` for ``np.linalg.norm(x, ord, axis)`` of a complex ``x``: every norm but the
    spectral and nuclear ones of a matrix is the same norm of the moduli (so its gradient is
    the real one's, at ``|x|``, times ``conj(x) / |x|``); those two raise."""
    matrix = (axis is None and np.ndim(x) == 2 and ord is not None) or (
        axis is not None and np.ndim(axis) == 1 and len(axis) == 2)
    if matrix and ord in (2, -2, "nuc"):
        raise NotImplementedError(f"the gradient of np.linalg.norm(x, ord={ord!r}) of a complex "
                                  "matrix is not supported yet (it depends on more than |x|)")
    return np.abs(x)


def norm_tangent(v, x, ans, ord=None, axis=None, keepdims=False):
    """Tangent of ``ans = np.linalg.norm(x, ord, axis, keepdims)`` (vector and matrix norms)."""
    return _norm_lane_sum(v, x, ans, lambda g, x: norm_grad(g, x, ans, ord, axis, keepdims),
                          axis, keepdims)


def vector_norm_grad(g, x, ans, axis=None, keepdims=False, ord=2):
    """Gradient of ``ans = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)``."""
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(float)
    return _vector_norm_grad(g, x, ans, ord, _axes(axis, x.ndim), keepdims)


def vector_norm_grad_tangent(g, dx, dans, x, ans, axis=None, keepdims=False, ord=2):
    """Terms of ``x`` and ``ans`` in the tangent of ``reductions.vector_norm_grad``."""
    x = _float_array(x)
    return _vector_norm_grad_tangent(g, tangent_array(dx, x), dans, x, ans, ord,
                                     _axes(axis, x.ndim), keepdims)


def vector_norm_tangent(v, x, ans, axis=None, keepdims=False, ord=2):
    """Tangent of ``ans = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)``."""
    return _norm_lane_sum(v, x, ans,
                          lambda g, x: vector_norm_grad(g, x, ans, axis, keepdims, ord),
                          axis, keepdims)


def matrix_norm_tangent(v, x, ans, keepdims=False, ord="fro"):
    """Tangent of ``ans = np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)``."""
    return _norm_lane_sum(v, x, ans, lambda g, x: norm_grad(g, x, ans, ord, (-2, -1), keepdims),
                          (-2, -1), keepdims)


# --- integration, order statistics ------------------------------------------------------------

def trapezoid_grads(g, y, x=None, dx=1.0, axis=-1):
    """Gradients ``(y, x, dx)`` of ``np.trapezoid(y, x, dx, axis)``."""
    y = asarray(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    ge = np.expand_dims(asarray(g), axis)
    if x is None:
        step = dx
    else:
        xs = asarray(x)
        step = np.diff(xs, axis=axis if xs.ndim > 1 else 0)
        if xs.ndim == 1:
            step = step.reshape([-1 if i == axis else 1 for i in range(y.ndim)])
    pair = np.take(y, np.arange(1, n), axis=axis) + np.take(y, np.arange(n - 1), axis=axis)
    g_pair = np.broadcast_to(ge * step * 0.5, pair.shape)
    gy = unbroadcast(_pad(g_pair, axis, 1, 0) + _pad(g_pair, axis, 0, 1), y)
    g_step = ge * pair * 0.5
    if x is None:
        return gy, None, unbroadcast(np.sum(g_step, axis=axis), dx)
    g_step = unbroadcast(g_step, step)
    if xs.ndim == 1:
        return gy, _undiff(np.ravel(g_step), 0), 0.0
    return gy, _undiff(g_step, axis), 0.0



def trapezoid_grads_tangent(g, dg, y, dy, x, dxs, dx, ddx, axis=-1):
    """Tangent of ``(gy, gx, gdx) = reductions.trapezoid_grads(g, y, x, dx, axis)``: ``gy`` is
    bilinear in ``g`` and the spacing (``x``'s differences, or ``dx``), ``gx``/``gdx`` in ``g``
    and ``y``."""
    grads = trapezoid_grads
    linear = grads(tangent_array(dg, g), y, x, dx, axis)
    through_y = grads(g, tangent_array(dy, y), x, dx, axis)
    if x is None:
        spacing = grads(g, y, None, ddx, axis)[0]
        return GradTuple((linear[0] + spacing, None, linear[2] + through_y[2]))
    spacing = grads(g, y, tangent_array(dxs, x), dx, axis)[0]
    return GradTuple((linear[0] + spacing, linear[1] + through_y[1], 0.0))


def _split_ties(s, gs):
    """Average ``gs`` over each run of equal values of the sorted lanes ``s`` (last axis):
    tied order statistics share their gradient equally."""
    new = np.ones(s.shape, bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    if new.all():
        return gs
    runs = np.cumsum(new.ravel()) - 1  # a new lane always starts a new run
    sums = np.bincount(runs, weights=gs.ravel())
    return (sums / np.bincount(runs))[runs].reshape(gs.shape).astype(gs.dtype)


def _quantiles(a, q, axis, method, scale, what: str):
    """What the derivatives of ``np.quantile(a, q * scale, axis)`` share: ``a`` as an array, the
    axes, its lanes (and the function putting lanes back), their sorting order and sorted
    values, the quantiles, the lane length and the order statistics ``lo``/``hi`` each quantile
    interpolates between, with weight ``t`` on ``hi``."""
    if method != "linear":
        raise NotImplementedError(f"the {what} of quantiles with method={method!r} is not "
                                  "supported; only method='linear'")
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    lanes, back = _to_lanes(a, axes)
    n = lanes.shape[-1]
    order = np.argsort(lanes, axis=-1, kind="stable")
    s = np.take_along_axis(lanes, order, axis=-1)
    qs = np.ravel(asarray(q, dtype=float)) * scale
    position = qs * (n - 1)
    lo = np.clip(np.floor(position), 0, n - 1).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    t = np.clip(position - lo, 0.0, 1.0)
    return a, axes, lanes, back, order, s, qs, n, lo, hi, t


def quantile_grads(g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    """Gradients ``(a, q)`` of ``np.quantile(a, q * scale, axis, method, keepdims)`` with
    linear interpolation between order statistics (``scale=0.01`` for percentiles)."""
    a, axes, lanes, back, order, s, qs, n, lo, hi, t = _quantiles(a, q, axis, method, scale,
                                                                  "gradient")
    gq = asarray(g).reshape((qs.size,) + lanes.shape[:-1])
    gs = np.zeros_like(s, dtype=float_dtype(a))
    slope = np.empty(qs.size, dtype=gs.dtype)
    for i in range(qs.size):
        gs[..., lo[i]] += (1.0 - t[i]) * gq[i]
        gs[..., hi[i]] += t[i] * gq[i]
        slope[i] = np.sum(gq[i] * (s[..., hi[i]] - s[..., lo[i]])) * (n - 1) * scale
    gs = _split_ties(s, gs)
    ga = np.empty_like(gs)
    np.put_along_axis(ga, order, gs, axis=-1)
    return back(ga), slope.reshape(np.shape(q))


def quantile_grads_tangent(g, dg, a, da, q, dq, axis=None, method="linear", keepdims=False,
                           scale=1.0):
    """Tangent of ``(ga, gq) = reductions.quantile_grads(g, a, q, ...)``: the interpolation
    weights move with ``q``, the slope with ``g`` and the order statistics of ``a`` (whose order
    is kept)."""
    a, axes, lanes, back, order, s, qs, n, lo, hi, t = _quantiles(a, q, axis, method, scale,
                                                                  "gradient")
    dlanes = _to_lanes(tangent_array(da, a), axes)[0]
    ds = np.take_along_axis(dlanes, order, axis=-1)
    dqs = np.ravel(tangent_array(dq, asarray(q, dtype=float))) * scale
    dt = dqs * (n - 1)
    g = asarray(g)
    gq = g.reshape((qs.size,) + lanes.shape[:-1])
    dgq = tangent_array(dg, g).reshape(gq.shape)
    dgs = np.zeros_like(s, dtype=float_dtype(a))
    dslope = np.empty(qs.size, dtype=dgs.dtype)
    for i in range(qs.size):
        dgs[..., lo[i]] += (1.0 - t[i]) * dgq[i] - dt[i] * gq[i]
        dgs[..., hi[i]] += t[i] * dgq[i] + dt[i] * gq[i]
        dslope[i] = (np.sum(dgq[i] * (s[..., hi[i]] - s[..., lo[i]]))
                     + np.sum(gq[i] * (ds[..., hi[i]] - ds[..., lo[i]]))) * (n - 1) * scale
    dgs = _split_ties(s, dgs)
    dga = np.empty_like(dgs)
    np.put_along_axis(dga, order, dgs, axis=-1)
    return GradTuple((back(dga), dslope.reshape(np.shape(q))))



def _quantile_frame(a, q, axis, method, scale):
    a, axes, _, _, order, s, _, n, lo, hi, t = _quantiles(a, q, axis, method, scale,
                                                          "derivative")
    return a, axes, order, s, n, lo, hi, t


def quantile_tangent(v, a, q, ans, axis=None, method="linear", keepdims=False, scale=1.0):
    """The term of ``a`` in the tangent of ``np.quantile(a, q * scale, axis, method, keepdims)``
    (linear interpolation between order statistics; tied order statistics share their tangent
    equally, as in ``reductions.quantile_grads``)."""
    a, axes, order, s, n, lo, hi, t = _quantile_frame(a, q, axis, method, scale)
    lanes, _ = _to_lanes(np.broadcast_to(asarray(v), a.shape), axes)
    vs = _split_ties(s, np.take_along_axis(lanes, order, axis=-1).astype(float_dtype(a)))
    out = (1.0 - t) * vs[..., lo] + t * vs[..., hi]  # kept axes + (number of q,)
    return result_like(np.moveaxis(out, -1, 0), ans)


def quantile_tangent_q(vq, a, q, ans, axis=None, method="linear", keepdims=False, scale=1.0):
    """The term of ``q`` in the tangent of ``np.quantile``: the slope between the two order
    statistics each quantile interpolates."""
    a, axes, order, s, n, lo, hi, t = _quantile_frame(a, q, axis, method, scale)
    slope = (s[..., hi] - s[..., lo]) * ((n - 1) * scale)
    vq = np.ravel(np.broadcast_to(asarray(vq, dtype=float), np.shape(q)))
    return result_like(np.moveaxis(slope * vq, -1, 0), ans)


# --- np.gradient ------------------------------------------------------------------------------

def _gradient_adjoint(g, n, axis, spacing, edge_order):
    """``M^T g`` along ``axis``, where ``np.gradient`` along that axis is ``f -> M f``.

    Each row of ``M`` has its nonzeros within three consecutive columns, so applying
    ``np.gradient`` to the three combs ``[j % 3 == r]`` reads every coefficient once."""
    g = np.moveaxis(asarray(g), axis, -1)
    lanes = g.reshape(-1, n)
    out = np.zeros_like(lanes)
    rows = np.arange(n)
    start = np.clip(rows - 1, 0, max(n - 3, 0))  # first column of row i's window
    for r in range(3):
        comb = (rows % 3 == r).astype(float)
        coef = np.gradient(comb, *spacing, edge_order=edge_order).astype(lanes.dtype)
        cols = start + (r - start) % 3
        ok = cols < n
        np.add.at(out, (slice(None), cols[ok]), lanes[:, ok] * coef[ok])
    return np.moveaxis(out.reshape(g.shape), -1, axis)


def gradient_grad(g, f, spacing=(), axis=None, edge_order=1):
    """Gradient of ``np.gradient(f, *spacing, axis=axis, edge_order=edge_order)`` for a
    constant ``spacing`` (none, one scalar, or one scalar or coordinate array per axis; None
    entries are absent)."""
    spacing = [h for h in spacing if h is not None]
    f = asarray(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        int(ax) % f.ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    if len(spacing) == 0:
        spacing = [()] * len(axes)
    elif len(spacing) == 1 and np.ndim(spacing[0]) == 0:
        spacing = [(spacing[0],)] * len(axes)
    else:
        spacing = [(h,) for h in spacing]
    grads = [g] if len(axes) == 1 else list(g)
    out = np.zeros(f.shape, dtype=float_dtype(f))
    for ax, h, gi in zip(axes, spacing, grads, strict=True):
        if np.ndim(gi) == 0 and gi == 0:  # nothing flowed into this output
            continue
        out = out + _gradient_adjoint(np.broadcast_to(gi, f.shape), f.shape[ax], ax, h,
                                      edge_order)
    return out


def constant_only(name: str):
    """Raise: the gradient through argument ``name`` is not supported (it must be constant)."""
    raise NotImplementedError(f"no gradient with respect to {name}: it must not depend on the "
                              "differentiated inputs")


def _lane_sum(w, v, axes, keepdims, ans):
    """``sum(w * v)`` over the reduced ``axes``: the transpose of ``expand(g) * w``."""
    return result_like(np.sum(w * v, axis=axes, keepdims=keepdims), ans)


def constant_only_tangent(v, name: str):
    """Raise: the derivative through argument ``name`` is not supported (it must be constant)."""
    raise NotImplementedError(f"no derivative with respect to {name}: it must not depend on the "
                              "differentiated inputs")


# --- covariance -------------------------------------------------------------------------------

def _observations(m, rowvar):
    """``m`` as NumPy's cov sees it: 2-D, one variable per row."""
    x = np.array(m, ndmin=2, dtype=float_dtype(m))
    return x.T if not rowvar and np.ndim(m) != 1 else x


def _unobservations(gx, m, rowvar):
    """The inverse of ``_observations`` for a gradient."""
    return (gx.T if not rowvar and np.ndim(m) != 1 else gx).reshape(np.shape(m))


def cov_grads(g, m, y=None, rowvar=True, bias=False, ddof=None):
    """Gradients ``(m, y)`` of ``np.cov(m, y, rowvar, bias, ddof)``."""
    x = _observations(m, rowvar)
    ny = 0
    if y is not None:
        yy = np.array(y, ndmin=2, dtype=float_dtype(y))
        yy = yy.T if not rowvar and yy.shape[0] != 1 else yy
        ny = yy.shape[0]
        x = np.concatenate((x, yy), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - np.mean(x, axis=1, keepdims=True)
    k = x.shape[0]
    gc = asarray(g).reshape(k, k).astype(x.dtype, copy=False)
    gx = (gc + gc.T) @ centered * (1.0 / (x.shape[1] - ddof))
    gm = _unobservations(gx[:k - ny], m, rowvar)
    if y is None:
        return gm, None
    gy = gx[k - ny:]
    gy = (gy.T if not rowvar and np.array(y, ndmin=2).shape[0] != 1 else gy)
    return gm, gy.reshape(np.shape(y))



def cov_grads_tangent(g, dg, m, dm, y=None, dy=None, rowvar=True, bias=False, ddof=None):
    """Tangent of ``(gm, gy) = reductions.cov_grads(g, m, y, ...)``, bilinear in ``g`` and the
    observations."""
    grads = cov_grads
    linear = grads(tangent_array(dg, g), m, y, rowvar, bias, ddof)
    dm = tangent_array(dm, asarray(m, dtype=float)) if is_zero(dm) else dm
    if y is not None and is_zero(dy):
        dy = tangent_array(dy, asarray(y, dtype=float))
    data = grads(g, dm, None if y is None else dy, rowvar, bias, ddof)
    return add_pairs(linear, data)



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
        yy = np.array(y, ndmin=2, dtype=float_dtype(y))
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


def cov_tangent(vm, vy, m, y, ans, rowvar=True, bias=False, ddof=None):
    """The term of ``m`` (``vy`` None) or ``y`` (``vm`` None) in the tangent of
    ``ans = np.cov(m, y, rowvar, bias, ddof)``."""
    return result_like(_cov(vm, vy, m, y, rowvar, bias, ddof), ans)


def corrcoef_grads(g, x, ans, y=None, rowvar=True):
    """Gradients ``(x, y)`` of ``ans = np.corrcoef(x, y, rowvar)``."""
    if np.ndim(ans) == 0:  # a single variable: always 1
        return (np.zeros(np.shape(x), float_dtype(x)),
                None if y is None else np.zeros(np.shape(y), float_dtype(y)))
    c = np.cov(x, y, rowvar)
    var = np.diag(c)
    scale = np.sqrt(np.outer(var, var))
    g = asarray(g)
    gr = g * ans
    # R = C / sqrt(d d^T): the diagonal d also moves with C
    gc = g / scale - np.diag((gr.sum(axis=1) + gr.sum(axis=0)) / (2.0 * var))
    return cov_grads(gc, x, y, rowvar)


def corrcoef_grads_tangent(g, dg, x, dx, ans, dans, y=None, dy=None, rowvar=True):
    """Tangent of ``(gx, gy) = reductions.corrcoef_grads(g, x, ans, y, rowvar)``: the gradient
    ``gc`` it passes to ``cov_grads`` moves with ``g``, ``ans`` and the covariance."""
    if np.ndim(ans) == 0:  # a single variable: always 1
        return GradTuple((np.zeros(np.shape(x), float_dtype(x)),
                          None if y is None else np.zeros(np.shape(y), float_dtype(y))))
    c = np.cov(x, y, rowvar)
    dc = _cov(None if is_zero(dx) else dx, None if y is None or is_zero(dy) else dy,
              x, y, rowvar, False, None)
    var, dvar = np.diag(c), np.diag(dc)
    scale = np.sqrt(np.outer(var, var))
    dscale = (np.outer(dvar, var) + np.outer(var, dvar)) / (2.0 * scale)
    g = asarray(g)
    dg = tangent_array(dg, g)
    gr, dgr = g * ans, dg * ans + g * tangent_array(dans, ans)
    rows, drows = gr.sum(axis=1) + gr.sum(axis=0), dgr.sum(axis=1) + dgr.sum(axis=0)
    gc = g / scale - np.diag(rows / (2.0 * var))
    dgc = dg / scale - g * dscale / (scale * scale) \
        - np.diag(drows / (2.0 * var) - rows * dvar / (2.0 * var * var))
    return cov_grads_tangent(gc, dgc, x, dx, y, dy, rowvar)


def corrcoef_tangent(vx, vy, x, ans, y=None, rowvar=True):
    """The term of ``x`` (``vy`` None) or ``y`` (``vx`` None) in the tangent of
    ``ans = np.corrcoef(x, y, rowvar)``: ``R = C / sqrt(d d^T)`` with ``d = diag(C)``."""
    if np.ndim(ans) == 0:  # a single variable: always 1
        return result_like(0.0, ans)
    dc = _cov(vx, vy, x, y, rowvar, False, None)
    c = np.cov(x, y, rowvar)
    variance = np.diag(c)
    scale = np.sqrt(np.outer(variance, variance))
    half = np.diag(dc) / (2.0 * variance)
    return result_like(dc / scale - ans * (half[:, None] + half[None, :]), ans)


# --- convolution ------------------------------------------------------------------------------

def _full_window(g, n, m, mode, correlate):
    """Embed the gradient of a 'same' or 'valid' result in the 'full' result's length."""
    g = asarray(g)
    if mode == "full":
        return g
    short = min(n, m)
    if mode == "valid":
        start = short - 1
    elif mode == "same":
        start = short // 2 if correlate and m > n else (short - 1) // 2
    else:
        raise ValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    out = np.zeros(n + m - 1, dtype=g.dtype)
    out[start:start + g.size] = g
    return out


def _slide(full, x):
    """``sum(full[n + k] * x[n])`` for each ``k`` (``np.correlate(full, x, 'valid')``, which
    conjugates a complex ``x``, without the conjugate)."""
    return np.correlate(full, np.conjugate(x) if np.iscomplexobj(x) else x, "valid")


def convolve_grads(g, a, v, mode="full"):
    """Gradients ``(a, v)`` of ``np.convolve(a, v, mode)`` (bilinear, without conjugates: the
    transpose, for complex values too)."""
    shapes = np.shape(a), np.shape(v)
    a, v = np.ravel(a), np.ravel(v)
    full = _full_window(g, a.size, v.size, mode, False)
    return _slide(full, v).reshape(shapes[0]), _slide(full, a).reshape(shapes[1])



def convolve_grads_tangent(g, dg, a, da, v, dv, mode="full"):
    """Tangent of ``(ga, gv) = reductions.convolve_grads(g, a, v, mode)``: bilinear, ``ga`` in
    ``g`` and ``v``, ``gv`` in ``g`` and ``a``."""
    grads = convolve_grads
    return add_pairs(grads(tangent_array(dg, g), a, v, mode),
                     grads(g, tangent_array(da, a), tangent_array(dv, v), mode))


def correlate_grads(g, a, v, mode="valid"):
    """Gradients ``(a, v)`` of ``np.correlate(a, v, mode)``, ``sum(a[n + k] * conj(v[n]))``:
    the full correlation is the full convolution with ``conj(v)`` reversed (so ``v``'s
    gradient is the conjugate of that of ``conj(v)``)."""
    shapes = np.shape(a), np.shape(v)
    a, v = np.ravel(a), np.ravel(v)
    full = _full_window(g, a.size, v.size, mode, True)
    w = np.conjugate(v) if np.iscomplexobj(v) else v
    gw = _slide(full, a)[::-1]
    return (_slide(full, w[::-1]).reshape(shapes[0]),
            (np.conjugate(gw) if np.iscomplexobj(gw) else gw).reshape(shapes[1]))


def correlate_grads_tangent(g, dg, a, da, v, dv, mode="valid"):
    """Tangent of ``(ga, gv) = reductions.correlate_grads(g, a, v, mode)`` (bilinear)."""
    grads = correlate_grads
    return add_pairs(grads(tangent_array(dg, g), a, v, mode),
                     grads(g, tangent_array(da, a), tangent_array(dv, v), mode))


# --- interpolation, polynomials, cross products ----------------------------------------------

def interp_grads(g, x, xp, fp, left=None, right=None, period=None):
    """Gradients ``(x, fp, left, right)`` of ``np.interp(x, xp, fp, left, right)``."""
    if period is not None:
        raise NotImplementedError("the gradient of np.interp with period= is not supported")
    g, x, fp = asarray(g), asarray(x), asarray(fp)
    below, above, inside, j, k, width, t = _interp_frame(x, xp, period)
    n = size(xp)
    gin = np.where(inside, g, 0.0)
    gx = (gin * (fp[k] - fp[j]) / width).astype(float_dtype(x), copy=False)
    gfp = (np.bincount(np.ravel(j), np.ravel(gin * (1.0 - t)), n)
           + np.bincount(np.ravel(k), np.ravel(gin * t), n))
    g_below, g_above = np.sum(np.where(below, g, 0.0)), np.sum(np.where(above, g, 0.0))
    if left is None:
        gfp[0] += g_below
    if right is None:
        gfp[-1] += g_above
    return gx, gfp.astype(float_dtype(fp)), g_below, g_above


def interp_grads_tangent(g, dg, x, dx, xp, fp, dfp, left=None, right=None, period=None):
    """Tangent of ``(gx, gfp, gleft, gright) = reductions.interp_grads(g, x, xp, fp, ...)``:
    ``gx`` moves with ``fp``, ``gfp`` with ``x`` (the interpolation weights); the segments and
    the sides are piecewise constant."""
    linear = interp_grads(tangent_array(dg, g), x, xp, fp, left, right, period)
    g, x, fp = asarray(g), asarray(x), asarray(fp)
    dx, dfp = tangent_array(dx, x), tangent_array(dfp, fp)
    _, _, inside, j, k, width, _ = _interp_frame(x, xp, period)
    n = size(xp)
    dt = np.where(k > j, dx / width, 0.0)
    gin = np.where(inside, g, 0.0)
    dgx = (gin * (dfp[k] - dfp[j]) / width).astype(float_dtype(x), copy=False)
    dgfp = (np.bincount(np.ravel(j), np.ravel(-gin * dt), n)
            + np.bincount(np.ravel(k), np.ravel(gin * dt), n)).astype(float_dtype(fp))
    return GradTuple((linear[0] + dgx, linear[1] + dgfp, linear[2], linear[3]))



def _interp_frame(x, xp, period):
    """What the derivatives of ``np.interp(x, xp, fp)`` share: which ``x`` lie below, above and
    inside ``xp``, the segment ``j``..``k`` of each, its width and the position ``t`` in it."""
    if period is not None:
        raise NotImplementedError("the derivative of np.interp with period= is not supported")
    x, xp = asarray(x), asarray(xp, dtype=float)
    n = xp.size
    below, above = x < xp[0], x > xp[-1]
    inside = ~(below | above)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    k = np.minimum(j + 1, n - 1)
    width = np.where(k > j, xp[k] - xp[j], 1.0)
    t = np.where(k > j, (x - xp[j]) / width, 0.0)
    return below, above, inside, j, k, width, t


def interp_tangent_x(vx, x, xp, fp, ans, period=None):
    """The term of ``x`` in the tangent of ``np.interp``: the slope of the segment (0 outside
    the sample points)."""
    below, above, inside, j, k, width, t = _interp_frame(x, xp, period)
    fp = asarray(fp)
    return result_like(np.where(inside, (fp[k] - fp[j]) / width * vx, 0.0), ans)


def interp_tangent_fp(vfp, x, xp, ans, left=None, right=None, period=None):
    """The term of ``fp`` in the tangent of ``np.interp``: ``vfp`` interpolated (the end values
    outside the sample points, unless ``left`` / ``right`` replace them)."""
    below, above, inside, j, k, width, t = _interp_frame(x, xp, period)
    vfp = asarray(vfp)
    out = np.where(inside, (1.0 - t) * vfp[j] + t * vfp[k], 0.0)
    if left is None:
        out = out + np.where(below, vfp[0], 0.0)
    if right is None:
        out = out + np.where(above, vfp[-1], 0.0)
    return result_like(out, ans)


def interp_tangent_left(vleft, x, xp, ans, period=None):
    """The term of ``left`` in the tangent of ``np.interp``: where ``x`` is below ``xp``."""
    below = _interp_frame(x, xp, period)[0]
    return result_like(np.where(below, vleft, 0.0), ans)


def interp_tangent_right(vright, x, xp, ans, period=None):
    """The term of ``right`` in the tangent of ``np.interp``: where ``x`` is above ``xp``."""
    above = _interp_frame(x, xp, period)[1]
    return result_like(np.where(above, vright, 0.0), ans)


def polyval_grads(g, p, x):
    """Gradients ``(p, x)`` of ``np.polyval(p, x)`` = ``sum(p[k] * x ** (n - 1 - k))``."""
    p, g = asarray(p), asarray(g)
    x = asarray(x)
    n = p.shape[0]
    gp = np.zeros(p.shape, dtype=np.result_type(p.dtype, g.dtype, np.float32))
    power = np.ones_like(g)
    for k in range(n - 1, -1, -1):
        gp[k] = unbroadcast(g * power, p[k])
        power = power * x
    powers = np.arange(n - 1, 0, -1, dtype=gp.dtype).reshape((-1,) + (1,) * (p.ndim - 1))
    derivative = np.polyval(p[:-1] * powers, x) if n > 1 else np.zeros_like(g)
    return gp, unbroadcast(g * derivative, x)


def polyval_grads_tangent(g, dg, p, dp, x, dx):
    """Tangent of ``(gp, gx) = reductions.polyval_grads(g, p, x)``: ``gp[k] = g x^(n-1-k)``,
    ``gx = g p'(x)``."""
    gp, gx = polyval_grads(tangent_array(dg, g), p, x)
    p, g, xa = asarray(p), asarray(g), asarray(x)
    dp, dx = tangent_array(dp, p), tangent_array(dx, xa)
    n = p.shape[0]
    gp = np.array(gp)
    power, dpower = np.ones_like(g), np.zeros_like(g)
    for k in range(n - 1, -1, -1):
        gp[k] = gp[k] + unbroadcast(g * dpower, p[k])
        dpower = dpower * xa + power * dx
        power = power * xa
    kind = gp.dtype
    shape = (-1,) + (1,) * (p.ndim - 1)
    first = np.arange(n - 1, 0, -1, dtype=kind).reshape(shape)
    slope = np.polyval(dp[:-1] * first, xa) if n > 1 else np.zeros_like(g)
    second = (np.arange(n - 1, 1, -1, dtype=kind) * np.arange(n - 2, 0, -1, dtype=kind)
              ).reshape(shape)
    curve = np.polyval(p[:-2] * second, xa) * dx if n > 2 else np.zeros_like(g)
    return GradTuple((gp, gx + unbroadcast(g * (slope + curve), x)))


def polyval_tangent_x(vx, p, x, ans):
    """The term of ``x`` in the tangent of ``np.polyval(p, x)``: ``p'(x) vx``."""
    p = asarray(p)
    n = p.shape[0]
    if n < 2:
        return result_like(np.zeros(np.shape(ans)), ans)
    kind = np.result_type(p.dtype, np.float32)
    powers = np.arange(n - 1, 0, -1, dtype=kind).reshape((-1,) + (1,) * (p.ndim - 1))
    return result_like(np.broadcast_to(np.polyval(p[:-1] * powers, x) * vx, np.shape(ans)), ans)


def cross_grads(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Gradients ``(a, b)`` of ``np.cross(a, b, axisa, axisb, axisc, axis)`` (vectors of
    length 2 count as 3-vectors with a zero last component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b, g = asarray(a), asarray(b), asarray(g)
    a3, b3 = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    na, nb = a3.shape[-1], b3.shape[-1]
    like_a, like_b = a3, b3
    if na == 2:
        a3 = _pad(a3, -1, 0, 1)
    if nb == 2:
        b3 = _pad(b3, -1, 0, 1)
    if na == 2 and nb == 2:  # the result is the z component alone
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)
    # L = g . (a x b) = a . (b x g) = b . (g x a)
    ga = unbroadcast(np.cross(b3, g3)[..., :na], like_a)
    gb = unbroadcast(np.cross(g3, a3)[..., :nb], like_b)
    return np.moveaxis(ga, -1, axisa), np.moveaxis(gb, -1, axisb)


def cross_grads_tangent(g, dg, a, da, b, db, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Tangent of ``(ga, gb) = reductions.cross_grads(g, a, b, ...)``: ``ga = b x g`` and
    ``gb = g x a`` are bilinear."""
    grads = cross_grads
    a, b = asarray(a), asarray(b)
    return add_pairs(grads(tangent_array(dg, g), a, b, axisa, axisb, axisc, axis),
                     grads(g, tangent_array(da, a), tangent_array(db, b), axisa, axisb, axisc,
                           axis))


def unsum(g, items):
    """The gradient of the builtin ``sum(items)`` for each item (each undoes its broadcasting)."""
    if is_array(items):  # sum over the first axis
        return unreduce(g, items, 0)
    parts = [unbroadcast(g, item) for item in items]
    return GradTuple(parts) if isinstance(items, tuple) else GradList(parts)


# --- grouped sums: np.bincount's weights, np.add.reduceat, ufunc outer products ----------------

def ungrouped(g, x):
    """Gradient of ``np.bincount(x, weights)`` for its weights: each weight's bin's gradient,
    ``g[x]``."""
    if is_zero(g):
        return np.zeros(np.shape(x))
    return asarray(g)[x]


def _histogram_bins(a, edges):
    """The bin of each sample (NumPy's: the last edge closes the last bin), -1 outside."""
    flat = np.ravel(asarray(a))
    idx = np.searchsorted(edges, flat, side="right") - 1
    idx = np.where(flat == edges[-1], len(edges) - 2, idx)
    return np.where((flat < edges[0]) | (flat > edges[-1]), -1, idx)


def _moving_edges(bins, range_) -> bool:
    """Whether ``np.histogram``'s edges are computed from the samples (a number of bins or a
    rule's name without ``range``)."""
    return np.ndim(bins) == 0 and range_ is None


def histogram_grad(g, a, bins, range_, density, weights, result):
    """``(a's gradient, weights', bins')`` of ``hist, edges = np.histogram(a, bins, range,
    density, weights)``. A weight's is its bin's gradient (with ``density``, less the
    normalisation's share); the counts are constant in the samples (between edges), so ``a``'s
    is zero where the edges do not move with the samples, and refused where they do and the
    result depends on them (``density``, or ``edges`` read); explicit edges get ``edges``'
    gradient back, and with ``density`` the share of the bin widths they set."""
    g_hist, g_edges = (g if isinstance(g, tuple) else (g, 0.0))
    hist, edges = result
    moving = _moving_edges(bins, range_)
    if moving and (density or not is_zero(g_edges) and np.any(g_edges)):
        raise NotImplementedError("np.histogram with edges computed from the samples (bins a "
                                  "number, no range=) is not differentiated with respect to "
                                  "the samples where its result depends on the edges (density"
                                  "=True, or the edges read): give the edges, or range=")
    ga = np.zeros(np.shape(a)) if not np.iscomplexobj(a) else np.zeros(np.shape(a), complex)
    gbins = 0.0
    if np.ndim(bins) == 1:  # (the edges given: they come back as edges, and set the widths)
        gbins = np.zeros(np.shape(bins)) if is_zero(g_edges) else asarray(g_edges) * 1.0
        if density and not is_zero(g_hist):
            share = asarray(g_hist) * hist / np.diff(edges)  # d hist_b / d width_b = -hist_b/w_b
            gbins[1:] -= share
            gbins[:-1] += share
    if weights is None or is_zero(g_hist):
        return ga, (0.0 if weights is None else np.zeros(np.shape(weights))), gbins
    idx = _histogram_bins(a, edges)
    inside = idx >= 0
    gh = asarray(g_hist)
    if density:
        widths = np.diff(edges)
        total = np.sum(np.ravel(weights)[inside])
        gw = np.where(inside, (gh[np.maximum(idx, 0)] / widths[np.maximum(idx, 0)]
                               - np.sum(gh * hist)) / total, 0.0)
    else:
        gw = np.where(inside, gh[np.maximum(idx, 0)], 0.0)
    return ga, gw.reshape(np.shape(weights)), gbins


def histogram_grad_tangent(dg, dw, dbins, dresult, g, a, bins, range_, density, weights,
                           result):
    """The tangent of ``histogram_grad`` (forward over reverse): linear in ``g`` alone without
    ``density``; with it, the gradient depends on the weights and the edges too (refused)."""
    if density and any(not is_zero(t) and np.any(np.asarray(t, dtype=object) != 0)
                       for t in (dw, dbins)):
        raise NotImplementedError("second derivatives of np.histogram(..., density=True) "
                                  "with respect to its weights or edges are not supported yet")
    del dresult  # (the result's: the counts are constant, the edges only pass through)
    if is_zero(dg):
        return GradTuple((np.zeros(np.shape(a)), 0.0 if weights is None
                          else np.zeros(np.shape(weights)), 0.0 if np.ndim(bins) != 1
                          else np.zeros(np.shape(bins))))
    return GradTuple(histogram_grad(dg, a, bins, range_, density, weights, result))


def histogram_tangent(da, dw, dbins, a, bins, range_, density, weights, ans):
    """The tangent of ``np.histogram(a, bins, range, density, weights)``: ``(dhist, dedges)``."""
    hist, edges = ans
    if _moving_edges(bins, range_) and not is_zero(da) and np.any(da) and density:
        histogram_grad((np.ones_like(hist), 0.0), a, bins, range_, density, weights, ans)
    dhist = np.zeros(np.shape(hist))
    if weights is not None and not is_zero(dw):
        idx = _histogram_bins(a, edges)
        inside = idx >= 0
        summed = np.bincount(idx[inside], np.ravel(dw)[inside], minlength=len(hist))
        if density:
            widths = np.diff(edges)
            total = np.sum(np.ravel(weights)[inside])
            dhist = summed / (widths * total) - hist * np.sum(np.ravel(dw)[inside]) / total
        else:
            dhist = summed
    dedges = np.zeros(np.shape(edges))
    if np.ndim(bins) == 1 and not is_zero(dbins):
        dedges = asarray(dbins) * 1.0
        if density:
            dhist = dhist - hist * np.diff(dedges) / np.diff(edges)
    return GradTuple((dhist, dedges))


def reduceat_grad(g, a, indices, axis=0):
    """Gradient of ``np.add.reduceat(a, indices, axis)``: each element gets the gradient of the
    segment that summed it. Segment ``k`` is ``a[i_k:i_k+1]`` (to the end for the last one), or
    the element ``a[i_k]`` alone where ``i_k >= i_k+1``."""
    a = asarray(a)
    g = np.moveaxis(asarray(g) if not is_zero(g) else np.zeros(
        np.shape(np.add.reduceat(a, indices, axis))), axis, 0)
    idx = np.asarray(indices, dtype=np.intp)
    n = a.shape[axis]
    idx = np.where(idx < 0, idx + n, idx)
    ends = np.append(idx[1:], n)
    spans = idx < ends
    edges = np.zeros((n + 1,) + g.shape[1:], dtype=np.result_type(g, float))
    np.add.at(edges, idx[spans], g[spans])
    np.subtract.at(edges, ends[spans], g[spans])
    out = np.cumsum(edges[:n], axis=0)
    np.add.at(out, idx[~spans], g[~spans])
    return np.moveaxis(out, 0, axis)


def outer_grad(g, a, b, wrt=0, op="multiply"):
    """Gradient for ``a`` (``wrt=0``) or ``b`` of ``np.<op>.outer(a, b)`` (``a``'s axes, then
    ``b``'s): a contraction of ``g`` with the other argument (``multiply``) or a sum over its
    axes (``add``; ``subtract`` negates ``b``'s)."""
    g = asarray(g)
    na, nb = np.ndim(a), np.ndim(b)
    if op == "multiply":
        return np.tensordot(g, asarray(b), nb) if wrt == 0 else np.tensordot(asarray(a), g, na)
    out = np.sum(g, axis=tuple(range(na, na + nb))) if wrt == 0 \
        else np.sum(g, axis=tuple(range(na)))
    return -out if op == "subtract" and wrt == 1 else out


def outer_grad_tangent(g, da, db, a, b, wrt=0, op="multiply"):
    """The term of ``a``'s and ``b``'s tangents in the tangent of ``outer_grad(g, a, b, wrt,
    op)``: the other argument's, for ``multiply`` (the sums read neither)."""
    if op != "multiply":
        return np.zeros(np.shape(a if wrt == 0 else b), dtype=np.result_type(g, float))
    if wrt == 0:
        return outer_grad(g, a, tangent_array(db, b), 0, op)
    return outer_grad(g, tangent_array(da, a), b, 1, op)
