"""Quadrature of sampled values: the gradients of SciPy's ``simpson``, ``romb`` and
``cumulative_trapezoid`` (``scipy.integrate.trapezoid`` is NumPy's, ``reductions``).

Each rule is linear in the samples ``y``: a sum of weights times samples along ``axis``. The
gradient in ``y`` spreads the incoming gradient by those weights. The weights depend only on the
spacings (the differences of ``x``, or ``dx``), so the gradient in ``x`` is the samples times the
weights' derivatives, taken back through the differences.

- Simpson's weights are rational functions of two neighbouring spacings ``(h0, h1)``: a parabola
  through each pair of intervals, and for an even number of samples Cartwright's correction of
  the last interval, as SciPy 1.11 and later compute it. ``_PAIR`` and ``_LAST`` give each
  piece's coefficients with their partials in ``h0`` and ``h1``.
- Romberg's weights are a fixed combination of trapezoid rules on every ``2^i``-th sample, so
  linear in ``dx``: its Richardson table run on the rules' weights instead of their values.
- The cumulative trapezoid is the trapezoid rule's pairs summed up to each output: its adjoint
  sums the incoming gradient down from each output first.

The tangents of the gradients (forward over reverse) are bilinear in the incoming gradient and
the samples; Simpson's spacing part is the complex step of the same code (exact for its rational
weights: no difference is taken).
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import asarray, is_zero
from runtime.broadcast import tangent_array, unbroadcast
from runtime.containers import GradTuple

_STEP = 1e-20  # the complex step of the spacings' second derivatives (error ~ step**2)


# --- Simpson's pieces -------------------------------------------------------------------------

def _pair(h0, h1):
    """A parabola through three samples ``h0`` and ``h1`` apart: the coefficients of the three
    samples, and their partials in ``h0`` and in ``h1``."""
    s = h0 + h1
    coefficients = (s / 6 * (2 - h1 / h0), s ** 3 / (6 * h0 * h1), s / 6 * (2 - h0 / h1))
    in_h0 = ((2 - h1 / h0 + s * h1 / h0 ** 2) / 6, s ** 2 * (2 * h0 - h1) / (6 * h0 ** 2 * h1),
             (2 - (s + h0) / h1) / 6)
    in_h1 = ((2 - (s + h1) / h0) / 6, s ** 2 * (2 * h1 - h0) / (6 * h0 * h1 ** 2),
             (2 - h0 / h1 + s * h0 / h1 ** 2) / 6)
    return coefficients, (in_h0, in_h1)


def _last(h0, h1):
    """Cartwright's correction of the last interval (``h1``) after the pairs: the coefficients
    of the last three samples, and their partials in ``h0`` and in ``h1``."""
    s = h0 + h1
    coefficients = (-h1 ** 3 / (6 * h0 * s), (h1 ** 2 + 3 * h0 * h1) / (6 * h0),
                    (2 * h1 ** 2 + 3 * h0 * h1) / (6 * s))
    in_h0 = (h1 ** 3 * (2 * h0 + h1) / (6 * (h0 * s) ** 2), -h1 ** 2 / (6 * h0 ** 2),
             h1 ** 2 / (6 * s ** 2))
    in_h1 = (-h1 ** 2 * (3 * h0 + 2 * h1) / (6 * h0 * s ** 2), (2 * h1 + 3 * h0) / (6 * h0),
             (2 * h1 ** 2 + 4 * h0 * h1 + 3 * h0 ** 2) / (6 * s ** 2))
    return coefficients, (in_h0, in_h1)


def _half(h):
    """Two samples (SciPy's rule then is the trapezoid's)."""
    return (h / 2, h / 2), ((0.5, 0.5),)


def _pieces(n: int) -> list:
    """SciPy's Simpson rule on ``n`` samples as pieces ``(samples, spacings, rule)``: the slices
    of the samples and of the spacings (last axis) that ``rule``'s coefficients multiply."""
    if n == 2:
        return [((slice(0, 1), slice(1, 2)), (slice(0, 1),), _half)]
    odd = n if n % 2 else n - 1  # the pairs cover the first `odd` samples
    pieces = []
    if odd >= 3:
        pieces.append(((slice(0, odd - 2, 2), slice(1, odd - 1, 2), slice(2, odd, 2)),
                       (slice(0, odd - 1, 2), slice(1, odd - 1, 2)), _pair))
    if odd != n and n >= 4:
        pieces.append(((slice(n - 3, n - 2), slice(n - 2, n - 1), slice(n - 1, n)),
                       (slice(n - 3, n - 2), slice(n - 2, n - 1)), _last))
    return pieces


def _lanes(y, x, dx, axis):
    """The samples with ``axis`` last, the spacings along it (broadcasting against them), the
    number of samples and the axis (non-negative)."""
    y = asarray(y)
    axis = axis % y.ndim
    lanes = np.moveaxis(y, axis, -1)
    n = lanes.shape[-1]
    if x is None:
        h = dx * np.ones(max(n - 1, 0))
    else:
        xs = asarray(x)
        h = np.diff(xs) if xs.ndim == 1 else np.moveaxis(np.diff(xs, axis=axis), axis, -1)
    return lanes, h, n, axis


def _spacing_grad(gh, h, x, dx, axis):
    """The gradient ``gh`` of the spacings back to ``(x, dx)``: through ``np.diff`` to ``x``, or
    summed to the one spacing ``dx``."""
    gh = unbroadcast(gh, h)
    if x is None:
        return None, unbroadcast(np.sum(gh, axis=-1), dx)
    gx = -np.diff(np.pad(gh, [(0, 0)] * (gh.ndim - 1) + [(1, 1)]), axis=-1)
    if np.ndim(x) > 1:
        gx = np.moveaxis(gx, -1, axis)
    return gx, 0.0


def simpson_grads(g, y, x=None, dx=1.0, axis=-1):
    """Gradients ``(y, x, dx)`` of ``scipy.integrate.simpson(y, x=x, dx=dx, axis=axis)``."""
    lanes, h, n, axis = _lanes(y, x, dx, axis)
    ge = asarray(g)[..., np.newaxis]
    dtype = np.result_type(lanes, h, ge, float)
    w = np.zeros(np.broadcast_shapes(h.shape[:-1] + (n,), ge.shape), dtype)
    gh = np.zeros(np.broadcast_shapes(h.shape, lanes.shape[:-1] + (1,), ge.shape), dtype)
    for samples, spacings, rule in _pieces(n):
        coefficients, partials = rule(*(h[..., s] for s in spacings))
        for s, c in zip(samples, coefficients, strict=True):
            w[..., s] += ge * c
        for spacing, partial in zip(spacings, partials, strict=True):
            gh[..., spacing] += ge * sum(lanes[..., s] * p
                                         for s, p in zip(samples, partial, strict=True))
    gy = unbroadcast(np.moveaxis(np.broadcast_to(w, np.broadcast_shapes(w.shape, lanes.shape)),
                                 -1, axis), y)
    return GradTuple((gy, *_spacing_grad(gh, h, x, dx, axis)))


def simpson_spacing_tangent(y, x, dxs, dx, ddx, axis=-1):
    """The part of the tangent of ``simpson(y, x=x, dx=dx, axis=axis)`` through the spacings:
    ``x``'s tangent ``dxs``, or ``dx``'s tangent ``ddx`` where ``x`` is None."""
    lanes, h, n, axis = _lanes(y, x, dx, axis)
    if x is None:
        dh = ddx * np.ones(h.shape)
    else:
        dh = _lanes(y, tangent_array(dxs, x), dx, axis)[1]
    total = 0.0
    for samples, spacings, rule in _pieces(n):
        partials = rule(*(h[..., s] for s in spacings))[1]
        for spacing, partial in zip(spacings, partials, strict=True):
            total = total + np.sum(dh[..., spacing] * sum(
                lanes[..., s] * p for s, p in zip(samples, partial, strict=True)), axis=-1)
    return total


def simpson_grads_tangent(g, dg, y, dy, x, dxs, dx, ddx, axis=-1):
    """Tangent of ``(gy, gx, gdx) = simpson_grads(g, y, x, dx, axis)``: linear in ``g`` and in
    ``y`` (whose gradient ``gy`` does not read); the spacings' part by the complex step."""
    grads = simpson_grads
    linear = grads(tangent_array(dg, g), y, x, dx, axis)
    through_y = grads(g, tangent_array(dy, y), x, dx, axis)
    parts = [linear[0], linear[1] if x is not None else None, linear[2] + through_y[2]]
    if x is not None:
        parts[1] = parts[1] + through_y[1]
    moved = not (is_zero(dxs) if x is not None else is_zero(ddx))
    if moved:  # the weights' derivatives: exact for rational functions of the spacings
        if x is None:
            stepped = grads(g, y, None, dx + 1j * _STEP * ddx, axis)
        else:
            stepped = grads(g, y, asarray(x) + 1j * _STEP * tangent_array(dxs, x), dx, axis)
        parts = [part if step is None or is_zero(step) else part + np.imag(step) / _STEP
                 for part, step in zip(parts, stepped, strict=True)]
    return GradTuple(tuple(parts))


# --- Romberg ----------------------------------------------------------------------------------

def romb_weights(n: int):
    """Weights ``w`` with ``romb(y, dx=1.0) == w @ y`` for ``n = 2^k + 1`` samples: Romberg's
    Richardson table run on the weights of its trapezoid rules."""
    intervals = n - 1
    k = max(intervals.bit_length() - 1, 0)
    if intervals < 1 or 1 << k != intervals:
        raise ValueError("Number of samples must be one plus a non-negative power of 2.")

    def trapezoid(i):  # 2^i intervals: every (intervals / 2^i)-th sample, that far apart
        stride = intervals >> i
        w = np.zeros(n)
        w[::stride] = stride
        w[0] = w[-1] = stride / 2
        return w

    row = [trapezoid(0)]
    for i in range(1, k + 1):
        above, row = row, [trapezoid(i)]
        for j in range(1, i + 1):
            row.append(row[j - 1] + (row[j - 1] - above[j - 1]) / ((1 << (2 * j)) - 1))
    return row[k]


def romb_grads(g, y, dx=1.0, axis=-1):
    """Gradients ``(y, dx)`` of ``scipy.integrate.romb(y, dx, axis)``: linear in ``y`` and in
    ``dx``."""
    y = asarray(y)
    axis = axis % y.ndim
    w = romb_weights(y.shape[axis])
    ge = np.expand_dims(asarray(g), axis)
    shape = [1] * y.ndim
    shape[axis] = -1
    w = w.reshape(shape)
    gy = unbroadcast(np.broadcast_to(ge * w * dx, np.broadcast_shapes(ge.shape, y.shape)), y)
    return GradTuple((gy, unbroadcast(asarray(g) * np.sum(y * w, axis=axis), dx)))


def romb_grads_tangent(g, dg, y, dy, dx, ddx, axis=-1):
    """Tangent of ``(gy, gdx) = romb_grads(g, y, dx, axis)``: ``gy`` bilinear in ``g`` and
    ``dx``, ``gdx`` in ``g`` and ``y``."""
    linear = romb_grads(tangent_array(dg, g), y, dx, axis)
    gy, gdx = linear[0], linear[1] + romb_grads(g, tangent_array(dy, y), dx, axis)[1]
    if not is_zero(ddx):
        gy = gy + romb_grads(g, y, ddx, axis)[0]
    return GradTuple((gy, gdx))


# --- the cumulative trapezoid -----------------------------------------------------------------

def cumulative_trapezoid_grads(g, y, x=None, dx=1.0, axis=-1, initial=None):
    """Gradients ``(y, x, dx, initial)`` of ``scipy.integrate.cumulative_trapezoid(y, x, dx,
    axis, initial)``: each pair of neighbouring samples reaches every output from its own on."""
    lanes, h, n, axis = _lanes(y, x, dx, axis)
    ge = np.moveaxis(asarray(g), axis, -1)
    g_initial = None
    if initial is not None:
        g_initial, ge = unbroadcast(ge[..., 0], initial), ge[..., 1:]
    below = np.flip(np.cumsum(np.flip(ge, -1), axis=-1), -1)  # the outputs each pair reaches
    g_pair = np.broadcast_to(below * h / 2, np.broadcast_shapes(below.shape, h.shape,
                                                                 lanes.shape[:-1] + (1,)))
    widths = [(0, 0)] * (g_pair.ndim - 1)
    gy = np.pad(g_pair, widths + [(0, 1)]) + np.pad(g_pair, widths + [(1, 0)])
    gy = unbroadcast(np.moveaxis(gy, -1, axis), y)
    gh = below * (lanes[..., 1:] + lanes[..., :-1]) / 2
    return GradTuple((gy, *_spacing_grad(gh, h, x, dx, axis), g_initial))


def cumulative_trapezoid_grads_tangent(g, dg, y, dy, x, dxs, dx, ddx, axis=-1, initial=None):
    """Tangent of ``cumulative_trapezoid_grads(g, y, x, dx, axis, initial)``: ``gy`` bilinear in
    ``g`` and the spacings, ``gx``/``gdx`` in ``g`` and ``y``, ``g_initial`` linear in ``g``."""
    grads = cumulative_trapezoid_grads
    linear = grads(tangent_array(dg, g), y, x, dx, axis, initial)
    through_y = grads(g, tangent_array(dy, y), x, dx, axis, initial)
    if x is None:
        spacing = grads(g, y, None, ddx, axis, initial)[0]
        return GradTuple((linear[0] + spacing, None, linear[2] + through_y[2], linear[3]))
    spacing = grads(g, y, tangent_array(dxs, x), dx, axis, initial)[0]
    return GradTuple((linear[0] + spacing, linear[1] + through_y[1], 0.0, linear[3]))
