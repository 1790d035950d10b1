"""The matrix exponential's action, ``scipy.sparse.linalg.expm_multiply``: its adjoint and
tangent, on one time or a grid of times, for a sparse, dense or operator ``A``.

``Y = e^A B``: ``B``'s gradient is ``e^{A^T} G``; ``A``'s is the adjoint of the exponential's
Fréchet derivative, ``integral_0^1 e^{sA^T} G (e^{(1-s)A} B)^T ds``, exact for a dense ``A``
(a block of ``expm`` of a block matrix) and for a sparse one read at its data (a
``SparseGrad``) by Gauss-Legendre quadrature in ``s``, never dense. Tangents are the block
matrix ``[[A, dA], [0, A]]``'s action. SciPy is imported on first use.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import is_zero
from runtime.containers import GradTuple
from runtime.sparse import SparseGrad, is_operator, is_sparse, scipy_sparse


def _expm_multiply():
    from scipy.sparse.linalg import expm_multiply

    return expm_multiply


class _Integrated:
    """``integral_0^1 u(s) v(s)^T ds`` at coordinates, by a quadrature rule in ``s``:
    ``sum_l w_l u_l[rows] v_l[cols]`` (summed over the columns of 2-D ``u_l`` and ``v_l``)."""

    __slots__ = ("us", "vs", "weights")

    def __init__(self, us, vs, weights):
        self.us, self.vs, self.weights = us, vs, weights

    def __call__(self, rows, cols):
        out = np.zeros(np.shape(rows))
        for w, u, v in zip(self.weights, self.us, self.vs, strict=True):
            out = out + w * (u[rows] * v[cols] if u.ndim == 1
                             else np.einsum("kj,kj->k", u[rows], v[cols]))
        return out


def _marched(a, b, times, trace) -> list:
    """``e^{t A} B`` at increasing ``times``, each from the one before (``e^{(t' - t) A}``: in
    all, the cost of one action over the longest time, not one per time)."""
    expm_multiply, out, at, value = _expm_multiply(), [], 0.0, b
    for t in times:
        if t > at:
            value = np.asarray(expm_multiply((t - at) * a, value,
                                             traceA=None if trace is None else (t - at) * trace))
            at = t
        out.append(value)
    return out


def _converged_quadrature(integrated, a) -> _Integrated:
    """``integrated(s, w)`` (an ``_Integrated`` on Gauss-Legendre nodes ``s`` in [0, 1], weights
    ``w``; its integrand an entire function of ``s``) with the nodes doubled from 8 until its
    values at ``A``'s entries agree to 1e-12 of the largest; RuntimeError if 512 nodes do not."""
    coo = a.tocoo()
    previous = None
    for m in (8, 16, 32, 64, 128, 256, 512):
        s, w = np.polynomial.legendre.leggauss(m)
        term = integrated(0.5 * (s + 1.0), 0.5 * w)
        values = term(coo.row, coo.col)
        if previous is not None and np.max(np.abs(values - previous), initial=0.0) <= 1e-12 \
                * max(np.max(np.abs(values), initial=0.0), np.finfo(float).tiny):
            return term
        previous = values
    raise RuntimeError("the gradient of expm_multiply(A, B) in a sparse A did not converge "
                       "with 512 quadrature nodes (A's norm is too large): scale A down and "
                       "square the result, or pass A.toarray()")


def _exponential_frechet(a, g, b, trace) -> _Integrated:
    """``L(A^T, G B^T) = integral_0^1 e^{s A^T} G (e^{(1-s) A} B)^T ds``, the gradient of
    ``e^A B`` in a sparse ``A``, by Gauss-Legendre quadrature in ``s``."""
    at = a.T.tocsr()

    def integrated(s, w):
        us = _marched(at, g, s, trace)  # e^{s A^T} G, node to node
        vs = _marched(a, b, (1.0 - s)[::-1], trace)[::-1]  # e^{(1-s) A} B
        return _Integrated(us, vs, w)

    return _converged_quadrature(integrated, a)


def _marched_with_tangent(a, da, b, db, times, trace):
    """``(e^{t A} B, its tangent)`` at increasing ``times``: the halves of ``e^{t K} [dB; B]``
    for the block matrix ``K = [[A, dA], [0, A]]`` (its upper right block is the Fréchet
    derivative ``L(tA, t dA)``)."""
    block = scipy_sparse().bmat([[a, da], [None, a]], format="csr")
    start = np.concatenate([np.broadcast_to(np.asarray(db, dtype=float), np.shape(b)), b])
    both = _marched(block, start, times, None if trace is None else 2.0 * trace)
    n = a.shape[0]
    return [x[n:] for x in both], [x[:n] for x in both]


def _exponential_frechet_tangent(a, da, g, dg, b, db, trace) -> _Integrated:
    """The tangent of ``_exponential_frechet(a, g, b)``: ``integral_0^1 (du v^T + u dv^T) ds``,
    each factor's tangent marched with it (``_marched_with_tangent``)."""
    at, dat = a.T.tocsr(), scipy_sparse().csr_matrix(da.T) if is_sparse(da) else da

    def integrated(s, w):
        us, dus = _marched_with_tangent(at, dat, g, dg, s, trace)
        back = (1.0 - s)[::-1]
        vs, dvs = _marched_with_tangent(a, scipy_sparse().csr_matrix(da), b, db, back, trace)
        vs, dvs = vs[::-1], dvs[::-1]
        return _Integrated(dus + us, vs + dvs, np.concatenate([w, w]))

    return _converged_quadrature(integrated, a)


def expm_multiply_adjoint(g, a, b, ans, trace=None, start=None, stop=None, num=None,
                          endpoint=None):
    """``(A's gradient, B's, start's, stop's)`` of ``Y = expm_multiply(A, B) = e^A B``: ``B``'s
    is ``e^{A^T} G`` (one ``expm_multiply`` of ``A.T``), ``A``'s the adjoint of the Fréchet
    derivative, ``L(A^T, G B^T)``: exact for a dense ``A`` (a block of the exponential of a block
    matrix), read at the data of a sparse one (``_exponential_frechet``), none for a
    ``LinearOperator`` (not differentiated). On a grid of times (``start``, ``stop``, ``num``,
    ``endpoint``): ``_grid_adjoint``."""
    if not _single_time(start, stop, num, endpoint):
        return _grid_adjoint(g, a, b, ans, trace, start, stop, num, endpoint)
    if is_zero(g):
        return GradTuple((0.0, 0.0, 0.0, 0.0))
    g = np.asarray(g, dtype=float).reshape(np.shape(ans))
    b = np.asarray(b, dtype=float)
    gb = np.asarray(_expm_multiply()(a.T, g, traceA=trace)).reshape(np.shape(b))
    if is_sparse(a):
        return GradTuple((SparseGrad(a.shape, _exponential_frechet(a, g, b, trace)), gb, 0.0,
                          0.0))
    if is_operator(a):
        return GradTuple((0.0, gb, 0.0, 0.0))  # (its products are not differentiated)
    from runtime.linalg import matrix_function_adjoint

    outer = np.outer(g, b) if b.ndim == 1 else g @ b.T
    return GradTuple((matrix_function_adjoint(outer, None, np.asarray(a, dtype=float), "expm"),
                      gb, 0.0, 0.0))


# --- expm_multiply on a grid of times: Y[k] = e^{t_k A} B, t = linspace(start, stop, num) -------

def _single_time(start, stop, num, endpoint) -> bool:
    return start is None and stop is None and num is None and endpoint is None


def _grid(start, stop, num, endpoint):
    """The times of ``expm_multiply``'s grid (SciPy's ``np.linspace`` defaults) and each one's
    share of ``stop`` (``t_k = start + share_k (stop - start)``), increasing from 0 or more."""
    count = 50 if num is None else int(num)
    closed = True if endpoint is None else bool(endpoint)
    times = np.linspace(start, stop, count, endpoint=closed)
    share = np.arange(count) / (count - 1 if closed else count)
    if np.any(times < 0.0) or stop < start:
        raise NotImplementedError("expm_multiply on a grid of times that decrease or reach "
                                  "below 0 is not differentiated (SciPy's own grid assumes "
                                  "0 <= start <= stop)")
    return times, share


def _rows_times(a, ys):
    """``A @ Y[k]`` for each ``k`` (``Y`` a stack of vectors or matrices)."""
    return np.stack([np.asarray(a @ y) for y in ys]) if len(ys) else np.zeros(np.shape(ys))


def _grid_adjoint(g, a, b, ans, trace, start, stop, num, endpoint):
    """The gradients of ``Y[k] = e^{t_k A} B``: ``B``'s ``sum_k e^{t_k A^T} G[k]`` (marched back
    from the last time, each ``G[k]`` added as it is passed); the times' ``<G[k], A Y[k]>``,
    shared to ``start`` and ``stop``; ``A``'s ``sum_k t_k L(t_k A^T, G[k] B^T)``: exact for a
    dense ``A``, and for a sparse one ``integral_0^T lam(s) y(s)^T ds`` (``lam`` the adjoint,
    jumping by ``G[k]`` at ``t_k``; ``y(s) = e^{sA} B``) by Gauss-Legendre quadrature on each
    interval between the times."""
    times, share = _grid(start, stop, num, endpoint)
    if is_zero(g):
        return GradTuple((0.0, 0.0, 0.0, 0.0))
    g = np.asarray(g, dtype=float).reshape(np.shape(ans))
    b = np.asarray(b, dtype=float)
    ys = np.asarray(ans, dtype=float)
    rates = np.array([np.sum(gk * ay) for gk, ay in zip(g, _rows_times(a, ys), strict=True)])
    gstart, gstop = float(np.sum(rates * (1.0 - share))), float(np.sum(rates * share))
    at = a.T
    knots, jumps = _knots(times, g)  # (distinct times, ascending, and the G's summed at each)
    lams = _adjoint_at_knots(at, knots, jumps, trace)
    gb = np.asarray(_expm_multiply()(knots[0] * at, lams[0], traceA=None if trace is None
                                     else knots[0] * trace)) if knots[0] > 0 else lams[0]
    gb = gb.reshape(np.shape(b))
    if is_operator(a):
        return GradTuple((0.0, gb, gstart, gstop))
    if is_sparse(a):
        at = at.tocsr()

        def integrated(s, w):  # (the nodes of [0, 1] placed on each interval)
            lo = np.concatenate([[0.0], knots[:-1]])
            us, vs, weights = [], [], []
            for i, (t0, t1) in enumerate(zip(lo, knots, strict=True)):
                if t1 <= t0:
                    continue
                nodes = t0 + (t1 - t0) * s
                us += _marched(at, lams[i], (t1 - nodes)[::-1], trace)[::-1]
                vs += _marched(a, b, nodes, trace) if t0 == 0.0 else \
                    _marched(a, _expm_multiply()(t0 * a, b, traceA=None if trace is None
                                                 else t0 * trace), nodes - t0, trace)
                weights.append((t1 - t0) * w)
            return _Integrated(us, vs, np.concatenate(weights))

        return GradTuple((SparseGrad(a.shape, _converged_quadrature(integrated, a)), gb, gstart,
                          gstop))
    from runtime.linalg import matrix_function_adjoint

    dense = np.asarray(a, dtype=float)
    ga = np.zeros(dense.shape)
    for t, gk in zip(times, g, strict=True):
        if t > 0.0:
            outer = np.outer(gk, b) if b.ndim == 1 else gk @ b.T
            ga = ga + t * matrix_function_adjoint(outer, None, t * dense, "expm")
    return GradTuple((ga, gb, gstart, gstop))


def _knots(times, g):
    """The distinct times, ascending, and the sum of the ``G[k]`` at each."""
    knots, where = np.unique(times, return_inverse=True)
    jumps = np.zeros((knots.size,) + g.shape[1:])
    np.add.at(jumps, where, g)
    return knots, jumps


def _adjoint_at_knots(at, knots, jumps, trace) -> list:
    """``lam(t_i) = sum_{t_k >= t_i} e^{(t_k - t_i) A^T} G[k]`` at each knot, from the last."""
    expm_multiply, lams = _expm_multiply(), [None] * len(knots)
    lam = jumps[-1]
    lams[-1] = lam
    for i in range(len(knots) - 2, -1, -1):
        h = knots[i + 1] - knots[i]
        lam = np.asarray(expm_multiply(h * at, lam, traceA=None if trace is None else h * trace))
        lam = lam + jumps[i]
        lams[i] = lam
    return lams


def expm_multiply_times_tangent(t_start, t_stop, a, ans, start, stop, num=None,
                                endpoint=None):
    """The term of ``expm_multiply``'s tangent on a grid from its times': ``A Y[k] dt_k``."""
    _, share = _grid(start, stop, num, endpoint)
    dt = (0.0 if is_zero(t_start) else t_start) * (1.0 - share) \
        + (0.0 if is_zero(t_stop) else t_stop) * share
    ays = _rows_times(a, np.asarray(ans, dtype=float))
    return ays * np.reshape(dt, (-1,) + (1,) * (ays.ndim - 1))


def expm_multiply_adjoint_tangent(t_g, t_a, t_b, g, a, b, ans, trace=None, start=None,
                                  stop=None, num=None, endpoint=None, t_start=0.0, t_stop=0.0,
                                  t_ans=0.0):
    """Tangent of ``expm_multiply_adjoint(g, A, B, Y)`` (forward over reverse): ``B``'s
    ``e^{A^T} G`` moves as ``expm_multiply``'s tangent at ``A^T``; ``A``'s Fréchet adjoint as
    ``L(A^T, dG B^T + G dB^T)`` plus the second Fréchet derivative along ``dA^T``: for a sparse
    ``A`` the same quadrature of each factor and its tangent, marched as block matrices; for a
    dense one the exact block form (``matrix_function_adjoint_tangent``); ``Y``'s tangent does
    not move it. (Not on a grid of times, whose adjoint reads the times and ``Y``:
    NotImplementedError.)"""
    if not _single_time(start, stop, num, endpoint):
        raise NotImplementedError("second derivatives through expm_multiply on a grid of times "
                                  "(start=, stop=, num=) are not supported yet; call it once per "
                                  "time")
    if is_zero(g):
        return GradTuple((0.0, 0.0, 0.0, 0.0))
    g = np.asarray(g, dtype=float).reshape(np.shape(ans))
    b = np.asarray(b, dtype=float)
    dg = np.zeros(g.shape) if is_zero(t_g) else np.asarray(t_g, dtype=float).reshape(g.shape)
    db = np.zeros(b.shape) if is_zero(t_b) else np.broadcast_to(np.asarray(t_b, dtype=float),
                                                                  b.shape)
    operator = is_operator(a)
    da = 0.0 if operator or is_zero(t_a) else t_a
    gb = np.asarray(_expm_multiply()(a.T, g, traceA=trace))
    dgb = expm_multiply_tangent(0.0 if is_zero(da) else da.T, dg, a.T, g, gb, trace)
    dgb = dgb.reshape(np.shape(b))
    if operator:
        return GradTuple((0.0, dgb, 0.0, 0.0))
    if is_sparse(a):
        if is_zero(da):
            da = scipy_sparse().csr_matrix(a.shape)
        return GradTuple((SparseGrad(a.shape, _exponential_frechet_tangent(a, da, g, dg, b, db,
                                                                           trace)), dgb, 0.0,
                          0.0))
    from runtime.linalg import matrix_function_adjoint_tangent

    def outer(u, v):
        return np.outer(u, v) if u.ndim == 1 else u @ v.T

    return GradTuple((matrix_function_adjoint_tangent(outer(dg, b) + outer(g, db), da,
                                                      outer(g, b), None,
                                                      np.asarray(a, dtype=float), "expm"), dgb,
                      0.0, 0.0))


def expm_multiply_tangent(t_a, t_b, a, b, ans, trace=None, start=None, stop=None, num=None,
                          endpoint=None):
    """The tangent of ``e^A B`` (on a grid of times too): ``e^A dB`` plus ``L(A, dA) B``, the
    top half of ``expm_multiply([[A, dA], [0, A]], [0; B])`` (sparse where ``A`` is), on the
    same grid."""
    expm_multiply = _expm_multiply()
    grid = {} if _single_time(start, stop, num, endpoint) else \
        {"start": start, "stop": stop, "num": num, "endpoint": endpoint}
    if grid:
        _grid(start, stop, num, endpoint)  # (refused: a grid SciPy does not compute)
    out = np.zeros(np.shape(ans))
    if not is_zero(t_b):
        out = out + np.asarray(expm_multiply(a, np.asarray(t_b, dtype=float), traceA=trace,
                                             **grid))
    if not is_zero(t_a) and not is_operator(a):
        b = np.asarray(b, dtype=float)
        if is_sparse(a):
            block = scipy_sparse().bmat([[a, t_a], [None, a]], format="csr")
        else:
            a = np.asarray(a, dtype=float)
            block = np.block([[a, np.asarray(t_a, dtype=float)], [np.zeros_like(a), a]])
        both = np.asarray(expm_multiply(block, np.concatenate([np.zeros_like(b), b]),
                                        traceA=None if trace is None else 2.0 * trace, **grid))
        out = out + (both[:, :a.shape[0]] if grid else both[:a.shape[0]])
    return out
