"""Tangents of the runtime helpers that generated gradients call, for forward over reverse
(``hvp``, ``hessian``) (NumPy only).

Every ``*_grad``/``*_grads``/``*_adjoint`` helper is linear in its gradient argument ``g``; the
tangent rules (transpiler/rules/runtime_rules.py) apply the helper itself to ``g``'s tangent.
The functions here give the other terms: those of the primal values a helper also reads
(``a``, its result ``ans``, weights, factors of a decomposition ...), by the product rule on
the helper's own formula, with the same masks, tie conventions and branches, so that the
tangent is the exact derivative of the helper wherever its masks do not change.

A helper returning a tuple gets one term, computed here from all the tangents at once (``dg``
included): a ``GradTuple`` whose absent entries (None in the helper's result) stay None.
Tangents arrive shaped like their values, or as a Python zero for an inactive scalar.
"""

from __future__ import annotations

import math

import numpy as np

from runtime import linalg as _la
from runtime import linalg_tangents as _lt
from runtime import reductions as _red
from runtime import special as _sp
from runtime import tangents as _tan
from runtime.broadcast import unbroadcast
from runtime.containers import GradTuple
from runtime.reductions import _axes, _expand, _float_dtype, _to_lanes


def _is_zero(t) -> bool:
    return type(t) in (int, float) and t == 0


def _full(t, like):
    """Tangent ``t`` as an array of ``like``'s shape (a Python zero becomes zeros)."""
    shape = np.shape(like)
    if _is_zero(t):
        return np.zeros(shape, dtype=_float_dtype(like))
    t = np.asarray(t)
    return t if t.shape == shape else np.broadcast_to(t, shape)


def _add(a, b):
    """``a + b`` where None stands for an absent entry (both are None, or neither)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _pairs(*tuples) -> GradTuple:
    """Item-by-item sums of tuples of equal length (None entries stay None)."""
    out = list(tuples[0])
    for t in tuples[1:]:
        out = [_add(a, b) for a, b in zip(out, t, strict=True)]
    return GradTuple(out)


# --- products ---------------------------------------------------------------------------------

def _exclusive_products_tangent(a, da, axes):
    """Tangent of ``_exclusive_products(a, axes)`` (each element: the product of the others in
    its lane) along ``da``: prefix times suffix products, each differentiated as a cumulative
    product (exact with zeros)."""
    lanes, back = _to_lanes(a, axes)
    dlanes = _to_lanes(_full(da, a), axes)[0]
    if lanes.shape[-1] == 0:
        return np.zeros(a.shape, dtype=_float_dtype(a))
    ones, zeros = np.ones_like(lanes[..., :1]), np.zeros_like(dlanes[..., :1])
    head = np.concatenate([ones, lanes[..., :-1]], axis=-1)
    dhead = np.concatenate([zeros, dlanes[..., :-1]], axis=-1)
    left = np.cumprod(head, axis=-1)
    dleft = _tan.cumprod(dhead, head, left, -1)
    tail = np.concatenate([ones, lanes[..., :0:-1]], axis=-1)
    dtail = np.concatenate([zeros, dlanes[..., :0:-1]], axis=-1)
    right = np.cumprod(tail, axis=-1)
    dright = _tan.cumprod(dtail, tail, right, -1)
    return back(dleft * right[..., ::-1] + left * dright[..., ::-1])


def prod_grad(g, da, a, axis=None, keepdims=False):
    """Term of ``a`` in the tangent of ``reductions.prod_grad(g, a, axis, keepdims)``."""
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    return _expand(g, axes, keepdims) * _exclusive_products_tangent(a, da, axes)


def nanprod_grad(g, da, a, axis=None, keepdims=False):
    """Term of ``a`` in the tangent of ``reductions.nanprod_grad`` (NaNs: ones, no tangent)."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, prod_grad(g, np.where(nan, 0.0, _full(da, a)),
                                        np.where(nan, 1.0, a), axis, keepdims))


# --- moments ----------------------------------------------------------------------------------

def nanvar_grad(g, da, a, axis=None, ddof=0, keepdims=False):
    """Term of ``a`` in the tangent of ``reductions.nanvar_grad(g, a, ...)``: the same helper on
    ``da`` with ``a``'s NaNs (the centring is linear, the counts constant)."""
    a = np.asarray(a)
    return _red.nanvar_grad(g, np.where(np.isnan(a), np.nan, _full(da, a)), axis, ddof,
                            keepdims)


def average_grads(g, dg, a, da, ans, dans, axis=None, weights=None, dweights=None,
                  returned=False, keepdims=False):
    """Tangent of ``(ga, gw) = reductions.average_grads(g, a, ans, axis, weights, ...)``:
    ``ga = g w / W`` and ``gw = g (a - ans) / W`` with ``W`` the sum of the weights."""
    if returned:
        raise NotImplementedError("the gradient of np.average(..., returned=True) is not "
                                  "supported; compute the sum of the weights separately")
    a = np.asarray(a)
    given = None if axis is None else tuple(
        int(ax) % a.ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    axes = _axes(given, a.ndim)
    ge = _expand(g, axes, keepdims)
    dge = _expand(_full(dg, g), axes, keepdims)
    if weights is None:
        n = math.prod(a.shape[i] for i in axes)
        return GradTuple((np.broadcast_to(dge * (1.0 / n), a.shape), None))
    w = np.asarray(weights)
    dw = _full(dweights, w)
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
    dcentered = _full(da, a) - _expand(_full(dans, ans), axes, keepdims)
    dgw = unbroadcast((dge * centered + ge * dcentered) / total
                      - ge * centered * dtotal / total ** 2, w)
    if order is not None:
        dgw = np.transpose(dgw.reshape(np.transpose(weights, order).shape), np.argsort(order))
    return GradTuple((dga, dgw))


# --- cumulative -------------------------------------------------------------------------------

def cumprod_grad(g, da, dans, a, ans, axis=None):
    """Terms of ``a`` and ``ans`` in the tangent of ``reductions.cumprod_grad(g, a, ans, axis)``
    (the same split at the first zero ``z`` of each lane). Before ``z`` and at ``z`` the
    helper's formulas are differentiated. After ``z`` its gradient is 0 only because every
    product there holds ``a[z]``: its tangent is ``da[z]`` times the gradient of the cumulative
    product with ``a[z]`` replaced by 1."""
    a, g, ans = np.asarray(a), np.asarray(g), np.asarray(ans)
    da, dans = _full(da, a), _full(dans, ans)
    if axis is None:
        return cumprod_grad(g, np.ravel(da), np.ravel(dans), np.ravel(a), ans, 0).reshape(a.shape)
    rev = _red._reverse_cumsum
    zero = a == 0
    if not zero.any():
        return rev(g * dans, axis) / a - rev(g * ans, axis) * da / (a * a)
    seen = np.cumsum(zero, axis=axis)
    before, first = seen == 0, zero & (seen == 1)
    ab, dab = np.where(before, a, 1), np.where(before, da, 0)
    dhead = rev(g * dans, axis) / ab - rev(g * ans, axis) * dab / (ab * ab)
    base, dbase = np.where(first, 1, a), np.where(first, 0, da)
    y = np.cumprod(base, axis=axis)
    dat_zero = rev(g * _tan.cumprod(dbase, base, y, axis), axis)
    dz = np.sum(np.where(first, da, 0), axis=axis, keepdims=True)
    dafter = dz * _red.cumprod_grad(g, base, y, axis)
    return np.where(before, dhead, np.where(first, dat_zero, dafter))


def nancumprod_grad(g, da, dans, a, ans, axis=None):
    """Terms of ``a`` and ``ans`` in the tangent of ``reductions.nancumprod_grad``."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return np.where(nan, 0.0, cumprod_grad(g, np.where(nan, 0.0, _full(da, a)), dans,
                                           np.where(nan, 1.0, a), ans, axis))


# --- norms ------------------------------------------------------------------------------------

def _vector_norm_tangent(g, dx, dans, x, ans, ord, axes, keepdims):
    ge, norm = _expand(g, axes, keepdims), _expand(ans, axes, keepdims)
    dnorm = _expand(_full(dans, ans), axes, keepdims)
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


def _matrix_norm_tangent(g, dx, dans, x, ans, ord, axes, keepdims):
    row, col = (int(ax) % x.ndim for ax in axes)
    both = tuple(sorted((row, col)))
    if ord is None or ord in ("fro", "f"):
        return _vector_norm_tangent(g, dx, dans, x, ans, None, both, keepdims)
    ge = _expand(g, both, keepdims)
    if ord in ("nuc", 2, -2):  # ge u v^T over the singular vectors used
        xm = np.moveaxis(x, (row, col), (-2, -1))
        dxm = np.moveaxis(dx, (row, col), (-2, -1))
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        du, _, dvh = _lt.svd(dxm, (u, s, vh), xm, full_matrices=False)
        if ord == 2:
            u, vh, du, dvh = u[..., :1], vh[..., :1, :], du[..., :1], dvh[..., :1, :]
        elif ord == -2:
            u, vh, du, dvh = u[..., -1:], vh[..., -1:, :], du[..., -1:], dvh[..., -1:, :]
        return ge * np.moveaxis(du @ vh + u @ dvh, (-2, -1), (row, col))
    if ord in (1, -1, np.inf, -np.inf):  # sign(x) times a tie mask: piecewise constant
        return np.zeros(x.shape, dtype=np.result_type(x, ge))
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def _float_array(x):
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(float)


def norm_grad(g, dx, dans, x, ans, ord=None, axis=None, keepdims=False):
    """Terms of ``x`` and ``ans`` in the tangent of ``reductions.norm_grad(g, x, ans, ...)``."""
    x = _float_array(x)
    dx = _full(dx, x)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and x.ndim == 2):
            return _vector_norm_tangent(g, dx, dans, x, ans, None, tuple(range(x.ndim)),
                                        keepdims)
        axis = tuple(range(x.ndim))
    elif np.ndim(axis) == 0:
        axis = (axis,)
    if len(axis) == 1:
        return _vector_norm_tangent(g, dx, dans, x, ans, ord, _axes(axis, x.ndim), keepdims)
    return _matrix_norm_tangent(g, dx, dans, x, ans, ord, axis, keepdims)


def vector_norm_grad(g, dx, dans, x, ans, axis=None, keepdims=False, ord=2):
    """Terms of ``x`` and ``ans`` in the tangent of ``reductions.vector_norm_grad``."""
    x = _float_array(x)
    return _vector_norm_tangent(g, _full(dx, x), dans, x, ans, ord, _axes(axis, x.ndim),
                                keepdims)


# --- integration, order statistics ------------------------------------------------------------

def trapezoid_grads(g, dg, y, dy, x, dxs, dx, ddx, axis=-1):
    """Tangent of ``(gy, gx, gdx) = reductions.trapezoid_grads(g, y, x, dx, axis)``: ``gy`` is
    bilinear in ``g`` and the spacing (``x``'s differences, or ``dx``), ``gx``/``gdx`` in ``g``
    and ``y``."""
    grads = _red.trapezoid_grads
    linear = grads(_full(dg, g), y, x, dx, axis)
    through_y = grads(g, _full(dy, y), x, dx, axis)
    if x is None:
        spacing = grads(g, y, None, ddx, axis)[0]
        return GradTuple((linear[0] + spacing, None, linear[2] + through_y[2]))
    spacing = grads(g, y, _full(dxs, x), dx, axis)[0]
    return GradTuple((linear[0] + spacing, linear[1] + through_y[1], 0.0))


def quantile_grads(g, dg, a, da, q, dq, axis=None, method="linear", keepdims=False, scale=1.0):
    """Tangent of ``(ga, gq) = reductions.quantile_grads(g, a, q, ...)``: the interpolation
    weights move with ``q``, the slope with ``g`` and the order statistics of ``a`` (whose order
    is kept)."""
    if method != "linear":
        raise NotImplementedError(f"the gradient of quantiles with method={method!r} is not "
                                  "supported; only method='linear'")
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    lanes, back = _to_lanes(a, axes)
    dlanes = _to_lanes(_full(da, a), axes)[0]
    n = lanes.shape[-1]
    order = np.argsort(lanes, axis=-1, kind="stable")
    s = np.take_along_axis(lanes, order, axis=-1)
    ds = np.take_along_axis(dlanes, order, axis=-1)
    qs = np.ravel(np.asarray(q, dtype=float)) * scale
    dqs = np.ravel(_full(dq, np.asarray(q, dtype=float))) * scale
    position = qs * (n - 1)
    lo = np.clip(np.floor(position), 0, n - 1).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    t = np.clip(position - lo, 0.0, 1.0)
    dt = dqs * (n - 1)
    g = np.asarray(g)
    gq = g.reshape((qs.size,) + lanes.shape[:-1])
    dgq = _full(dg, g).reshape(gq.shape)
    dgs = np.zeros_like(s, dtype=_float_dtype(a))
    dslope = np.empty(qs.size, dtype=dgs.dtype)
    for i in range(qs.size):
        dgs[..., lo[i]] += (1.0 - t[i]) * dgq[i] - dt[i] * gq[i]
        dgs[..., hi[i]] += t[i] * dgq[i] + dt[i] * gq[i]
        dslope[i] = (np.sum(dgq[i] * (s[..., hi[i]] - s[..., lo[i]]))
                     + np.sum(gq[i] * (ds[..., hi[i]] - ds[..., lo[i]]))) * (n - 1) * scale
    dgs = _red._split_ties(s, dgs)
    dga = np.empty_like(dgs)
    np.put_along_axis(dga, order, dgs, axis=-1)
    return GradTuple((back(dga), dslope.reshape(np.shape(q))))


# --- covariance, correlation ------------------------------------------------------------------

def cov_grads(g, dg, m, dm, y=None, dy=None, rowvar=True, bias=False, ddof=None):
    """Tangent of ``(gm, gy) = reductions.cov_grads(g, m, y, ...)``, bilinear in ``g`` and the
    observations."""
    grads = _red.cov_grads
    linear = grads(_full(dg, g), m, y, rowvar, bias, ddof)
    dm = _full(dm, np.asarray(m, dtype=float)) if _is_zero(dm) else dm
    if y is not None and _is_zero(dy):
        dy = _full(dy, np.asarray(y, dtype=float))
    data = grads(g, dm, None if y is None else dy, rowvar, bias, ddof)
    return _pairs(linear, data)


def corrcoef_grads(g, dg, x, dx, ans, dans, y=None, dy=None, rowvar=True):
    """Tangent of ``(gx, gy) = reductions.corrcoef_grads(g, x, ans, y, rowvar)``: the gradient
    ``gc`` it passes to ``cov_grads`` moves with ``g``, ``ans`` and the covariance."""
    if np.ndim(ans) == 0:  # a single variable: always 1
        return GradTuple((np.zeros(np.shape(x), _float_dtype(x)),
                          None if y is None else np.zeros(np.shape(y), _float_dtype(y))))
    c = np.cov(x, y, rowvar)
    dc = _tan._cov(None if _is_zero(dx) else dx, None if y is None or _is_zero(dy) else dy,
                   x, y, rowvar, False, None)
    var, dvar = np.diag(c), np.diag(dc)
    scale = np.sqrt(np.outer(var, var))
    dscale = (np.outer(dvar, var) + np.outer(var, dvar)) / (2.0 * scale)
    g = np.asarray(g)
    dg = _full(dg, g)
    gr, dgr = g * ans, dg * ans + g * _full(dans, ans)
    rows, drows = gr.sum(axis=1) + gr.sum(axis=0), dgr.sum(axis=1) + dgr.sum(axis=0)
    gc = g / scale - np.diag(rows / (2.0 * var))
    dgc = dg / scale - g * dscale / (scale * scale) \
        - np.diag(drows / (2.0 * var) - rows * dvar / (2.0 * var * var))
    return cov_grads(gc, dgc, x, dx, y, dy, rowvar)


# --- convolution, interpolation, polynomials, cross products ----------------------------------

def convolve_grads(g, dg, a, da, v, dv, mode="full"):
    """Tangent of ``(ga, gv) = reductions.convolve_grads(g, a, v, mode)``: bilinear, ``ga`` in
    ``g`` and ``v``, ``gv`` in ``g`` and ``a``."""
    grads = _red.convolve_grads
    return _pairs(grads(_full(dg, g), a, v, mode), grads(g, _full(da, a), _full(dv, v), mode))


def correlate_grads(g, dg, a, da, v, dv, mode="valid"):
    """Tangent of ``(ga, gv) = reductions.correlate_grads(g, a, v, mode)`` (bilinear)."""
    grads = _red.correlate_grads
    return _pairs(grads(_full(dg, g), a, v, mode), grads(g, _full(da, a), _full(dv, v), mode))


def interp_grads(g, dg, x, dx, xp, fp, dfp, left=None, right=None, period=None):
    """Tangent of ``(gx, gfp, gleft, gright) = reductions.interp_grads(g, x, xp, fp, ...)``:
    ``gx`` moves with ``fp``, ``gfp`` with ``x`` (the interpolation weights); the segments and
    the sides are piecewise constant."""
    linear = _red.interp_grads(_full(dg, g), x, xp, fp, left, right, period)
    g = np.asarray(g)
    x, xp, fp = np.asarray(x), np.asarray(xp, dtype=float), np.asarray(fp)
    dx, dfp = _full(dx, x), _full(dfp, fp)
    n = xp.size
    inside = ~((x < xp[0]) | (x > xp[-1]))
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    k = np.minimum(j + 1, n - 1)
    width = np.where(k > j, xp[k] - xp[j], 1.0)
    dt = np.where(k > j, dx / width, 0.0)
    gin = np.where(inside, g, 0.0)
    dgx = (gin * (dfp[k] - dfp[j]) / width).astype(_float_dtype(x), copy=False)
    dgfp = (np.bincount(np.ravel(j), np.ravel(-gin * dt), n)
            + np.bincount(np.ravel(k), np.ravel(gin * dt), n)).astype(_float_dtype(fp))
    return GradTuple((linear[0] + dgx, linear[1] + dgfp, linear[2], linear[3]))


def polyval_grads(g, dg, p, dp, x, dx):
    """Tangent of ``(gp, gx) = reductions.polyval_grads(g, p, x)``: ``gp[k] = g x^(n-1-k)``,
    ``gx = g p'(x)``."""
    gp, gx = _red.polyval_grads(_full(dg, g), p, x)
    p, g, xa = np.asarray(p), np.asarray(g), np.asarray(x)
    dp, dx = _full(dp, p), _full(dx, xa)
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


def cross_grads(g, dg, a, da, b, db, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Tangent of ``(ga, gb) = reductions.cross_grads(g, a, b, ...)``: ``ga = b x g`` and
    ``gb = g x a`` are bilinear."""
    grads = _red.cross_grads
    a, b = np.asarray(a), np.asarray(b)
    return _pairs(grads(_full(dg, g), a, b, axisa, axisb, axisc, axis),
                  grads(g, _full(da, a), _full(db, b), axisa, axisb, axisc, axis))


# --- special ----------------------------------------------------------------------------------

# psi'(x) ~ 1/x + 1/(2x^2) + sum_k B_2k / x^(2k+1) (Bernoulli numbers B_2 ... B_14)
_TRIGAMMA_SERIES = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6)


def trigamma(x):
    """psi'(x), the derivative of ``special.digamma`` (the tangent of ``rt.special.digamma``):
    reflection for x < 1/2, the recurrence psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then
    the asymptotic series. A float gives a float."""
    t = np.asarray(x, dtype=float)
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
    return psi1.astype(_sp._float_dtype(x), copy=False)


def sinc_second(x):
    """The derivative of ``special.sinc_grad``: ``sinc''(x) = pi^2 f''(pi x)``, ``f(u) =
    sin(u) / u``, ``f''(u) = (2 sin u - 2 u cos u - u^2 sin u) / u^3``; near 0 the derivative of
    the series ``sinc_grad`` uses there."""
    x = np.asarray(x) if not isinstance(x, float | int) else x
    u = np.pi * x
    u2 = u * u
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(u == 0, 1.0, u)
        direct = (2.0 * np.sin(u) - 2.0 * u * np.cos(u) - u2 * np.sin(u)) / (safe * safe * safe)
    series = -1.0 / 3 + u2 * (1.0 / 10 + u2 * (-1.0 / 168 + u2 / 6480))
    return (np.pi * np.pi * np.where(np.abs(u) < 0.1, series, direct))[()]


def math_prod_grad(g, items, ditems, start=1, dstart=0.0):
    """Terms of ``items`` and ``start`` in the tangent of ``special.prod_grad(g, items, start)``:
    ``g`` times the tangent of each item's product of the other factors."""
    n = len(items)
    ditems = [0.0] * n if _is_zero(ditems) else list(ditems)
    before, dbefore = [start] * (n + 1), [dstart] * (n + 1)
    after, dafter = [1.0] * (n + 1), [0.0] * (n + 1)
    for i in range(n):
        before[i + 1] = before[i] * items[i]
        dbefore[i + 1] = dbefore[i] * items[i] + before[i] * ditems[i]
        j = n - 1 - i
        after[j] = after[j + 1] * items[j]
        dafter[j] = dafter[j + 1] * items[j] + after[j + 1] * ditems[j]
    return _sp._like([g * (dbefore[i] * after[i + 1] + before[i] * dafter[i + 1])
                      for i in range(n)], items)


def dist_grad(g, dp, dq, dans, p, q, ans):
    """Terms of ``p``, ``q`` and ``ans`` in the tangent of ``special.dist_grad(g, p, q, ans)``
    (``g (p - q) / ans``)."""
    n = len(p)
    dp = [0.0] * n if _is_zero(dp) else list(dp)
    dq = [0.0] * n if _is_zero(dq) else list(dq)
    scale = 0.0 if ans == 0 else g / ans
    dscale = 0.0 if ans == 0 else -g * dans / (ans * ans)
    parts = [scale * (float(da) - float(db)) + dscale * (float(a) - float(b))
             for a, b, da, db in zip(p, q, dp, dq, strict=True)]
    return _sp._like(parts, p)


# --- linear algebra ---------------------------------------------------------------------------

def svdvals_adjoint(g, da, a, hermitian=False):
    """Term of ``a`` in the tangent of ``linalg.svdvals_adjoint(g, a) = u diag(g) v^T`` (the
    singular vectors move with ``a``)."""
    t = _la._t
    if hermitian:
        w, v = np.linalg.eigh(a)
        order = np.argsort(np.abs(w))[..., ::-1]
        gw = np.zeros_like(w, dtype=_la._dtype(g, w))
        np.put_along_axis(gw, order, np.asarray(g), axis=-1)
        scaled = v * (gw * np.sign(w))[..., np.newaxis, :]
        _, dv = _lt.eigh(_full(da, a), (w, v))
        return _la._fold(dv @ t(scaled) + scaled @ t(dv))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    du, _, dvh = _lt.svd(_full(da, a), (u, s, vh), a, full_matrices=False)
    gg = np.asarray(g)[..., np.newaxis, :]
    return (du * gg) @ vh + (u * gg) @ dvh


def svd_adjoint(g, dg, res, dres, a, da, full_matrices=True, compute_uv=True,
                hermitian=False):
    """Tangent of ``linalg.svd_adjoint(g, res, a, ...)`` (Townsend's formula) along the
    tangents of ``g`` and of the decomposition ``res = (u, s, vh)`` (or of ``a`` for the
    singular values alone)."""
    flows = _la._flows
    if hermitian and compute_uv:
        raise NotImplementedError("the gradient of svd is not implemented for hermitian=True "
                                  "with compute_uv=True")
    if not compute_uv:
        return _la.svdvals_adjoint(_full(dg, res), a, hermitian) \
            + svdvals_adjoint(g, da, a, hermitian)
    t, full = _la._t, _la._full
    u, s, vh = res
    du, ds, dvh = (_full(d, x) for d, x in zip(dres, res, strict=True))
    rows, cols = np.shape(a)[-2:]
    gs, dgs = full(g[1], s), _full(dg[1], s)
    if not (flows(g[0]) or flows(g[2]) or flows(dg[0]) or flows(dg[2])):
        k = min(rows, cols)
        uk, duk, vk, dvk = u[..., :k], du[..., :k], vh[..., :k, :], dvh[..., :k, :]
        return (duk * gs[..., np.newaxis, :] + uk * dgs[..., np.newaxis, :]) @ vk \
            + (uk * gs[..., np.newaxis, :]) @ dvk
    if full_matrices and rows != cols:
        raise NotImplementedError("the gradient of svd with full_matrices=True needs a square "
                                  "matrix; use full_matrices=False")
    gu, gvh = full(g[0], u), full(g[2], vh)
    dgu, dgvh = _full(dg[0], u), _full(dg[2], vh)
    v, gv, dv, dgv = t(vh), t(gvh), t(dvh), t(dgvh)
    f = _la._gap_inverse(s, square=True)
    ds2 = 2.0 * s * ds
    df = -f * f * (ds2[..., np.newaxis, :] - ds2[..., :, np.newaxis])
    su, dsu = t(u) @ gu - t(gu) @ u, t(du) @ gu + t(u) @ dgu - t(dgu) @ u - t(gu) @ du
    sv, dsv = vh @ gv - t(gv) @ v, dvh @ gv + vh @ dgv - t(dgv) @ v - t(gv) @ dv
    j, dj = f * su, df * su + f * dsu
    k, dk = f * sv, df * sv + f * dsv
    eye = _la._eye(j)
    row, col = s[..., np.newaxis, :], s[..., :, np.newaxis]
    drow, dcol = ds[..., np.newaxis, :], ds[..., :, np.newaxis]
    core = j * row + gs[..., np.newaxis, :] * eye + col * k
    dcore = dj * row + j * drow + dgs[..., np.newaxis, :] * eye + dcol * k + col * dk
    out = du @ core @ vh + u @ dcore @ vh + u @ core @ dvh
    if rows > cols:  # + (gu - u u^T gu) s^-1 v^T
        m = gu - u @ (t(u) @ gu)
        dm = dgu - du @ (t(u) @ gu) - u @ (t(du) @ gu) - u @ (t(u) @ dgu)
        out = out + (dm / row - m * drow / (row * row)) @ vh + (m / row) @ dvh
    if cols > rows:  # + u s^-1 (gv^T - gv^T v v^T)
        m = t(gv) - (t(gv) @ v) @ vh
        dm = t(dgv) - (t(dgv) @ v) @ vh - (t(gv) @ dv) @ vh - (t(gv) @ v) @ dvh
        out = out + (du / row - u * drow / (row * row)) @ m + (u / row) @ dm
    return out


def _qr_square(gq, dgq, gr, dgr, q, dq, r, dr):
    """Tangent of ``linalg._qr_square(gq, gr, q, r) = B r^-T``, ``B = gq + q copyltu(M)``,
    ``M = r gr^T - gq^T q``: ``(dB - out dr^T) r^-T``."""
    t, copyltu = _la._t, _la._copyltu
    m = r @ t(gr) - t(gq) @ q
    dm = dr @ t(gr) + r @ t(dgr) - t(dgq) @ q - t(gq) @ dq
    b = gq + q @ copyltu(m)
    db = dgq + dq @ copyltu(m) + q @ copyltu(dm)
    out = t(np.linalg.solve(r, t(b)))
    return t(np.linalg.solve(r, t(db - out @ t(dr))))


def qr_adjoint(g, dg, res, dres, a, da, mode="reduced"):
    """Tangent of ``linalg.qr_adjoint(g, res, a, mode)`` along the tangents of ``g``, of the
    factors ``res = (q, r)`` and of ``a`` (mode 'r' factors ``a`` again; a wide ``a`` reads its
    last columns)."""
    rows, cols = np.shape(a)[-2:]
    full = _la._full
    if mode == "r":
        q, r = np.linalg.qr(a)
        dq, dr = _lt.qr(_full(da, a), (q, r), a, "reduced")
        gq, dgq = np.zeros_like(q), np.zeros_like(q)
        gr, dgr = full(g, r), _full(dg, r)
    elif mode == "reduced" or (mode == "complete" and rows <= cols):
        q, r = res
        dq, dr = _full(dres[0], q), _full(dres[1], r)
        gq, gr = full(g[0], q), full(g[1], r)
        dgq, dgr = _full(dg[0], q), _full(dg[1], r)
    elif mode == "complete":
        raise NotImplementedError("the gradient of qr with mode='complete' needs no more rows "
                                  "than columns (the extra columns of q are not unique)")
    else:
        raise NotImplementedError(f"the gradient of qr is not implemented for mode={mode!r}")
    if rows >= cols:
        return _qr_square(gq, dgq, gr, dgr, q, dq, r, dr)
    t = _la._t
    y, dy = a[..., rows:], _full(da, a)[..., rows:]
    gr2, dgr2 = gr[..., rows:], dgr[..., rows:]
    dgy = dq @ gr2 + q @ dgr2
    gq1 = gq + y @ t(gr2)
    dgq1 = dgq + dy @ t(gr2) + y @ t(dgr2)
    dgx = _qr_square(gq1, dgq1, gr[..., :rows], dgr[..., :rows], q, dq, r[..., :rows],
                     dr[..., :rows])
    return np.concatenate([dgx, dgy], axis=-1)


def lstsq_adjoint(g, dg, a, da, b, db, res, dres, wrt=0):
    """Tangent of ``linalg.lstsq_adjoint(g, a, b, res, wrt)`` along the tangents of ``g``,
    ``a``, ``b`` and the solution ``res[0]``."""
    flows, full = _la._flows, _la._full
    x, residuals, rank, _ = res
    gx, gres, _, gs = g
    dgx, dgres, _, dgs = dg
    m, n = np.shape(a)
    if rank < min(m, n):
        raise NotImplementedError("the gradient of lstsq needs a full-rank matrix")
    vector = np.ndim(b) == 1
    bm, xm = (b[:, np.newaxis], x[:, np.newaxis]) if vector else (b, x)
    da = _full(da, a)
    dbm = _full(db, b).reshape(bm.shape)
    dxm = _full(dres[0], x).reshape(xm.shape)
    gxm = full(gx, x).reshape(xm.shape)
    dgxm = _full(dgx, x).reshape(xm.shape)
    p = np.linalg.pinv(a)
    dp = _lt.pinv(da, a, p)
    dgb = dp.T @ gxm + p.T @ dgxm
    dga = None
    if wrt == 0:
        dga = _lt.pinv_adjoint(dgxm @ bm.T + gxm @ dbm.T, da, dp, gxm @ bm.T, a, p)
    if flows(gres) or flows(dgres):
        r = bm - a @ xm
        dr = dbm - da @ xm - a @ dxm
        gr, dgr = full(gres, residuals), _full(dgres, residuals)
        scaled, dscaled = 2.0 * r * gr, 2.0 * (dr * gr + r * dgr)
        dgb = dgb + dscaled
        if wrt == 0:
            dga = dga - dscaled @ xm.T - scaled @ dxm.T
    if wrt == 0:
        if flows(gs) or flows(dgs):
            s = np.linalg.svd(a, compute_uv=False)
            dga = dga + _la.svdvals_adjoint(_full(dgs, s), a) \
                + svdvals_adjoint(full(gs, s), da, a)
        return dga
    return dgb[:, 0] if vector else dgb
