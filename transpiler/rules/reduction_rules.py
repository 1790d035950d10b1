"""Adjoints of NumPy reductions, cumulative and statistical functions.

Parameters mirror NumPy's signatures; those after an ``out=`` parameter are keyword-only here,
so a positional ``out``, ``initial=``, ``where=`` or ``overwrite_input=`` is refused at compile
time instead of being misread. Helpers live in ``runtime/reductions.py``, each adjoint next to
its tangents.
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, since, tangent

# --- products, extrema ------------------------------------------------------------------------

@adjoint(np.prod)
def adj_prod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.prod_grad(d[ans], a, axis, keepdims)


@tangent(np.prod)
def tan_prod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = rt.prod_tangent(d[a], a, ans, axis, keepdims)


@adjoint(np.nanprod)
def adj_nanprod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.nanprod_grad(d[ans], a, axis, keepdims)


@tangent(np.nanprod)
def tan_nanprod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = rt.nanprod_tangent(d[a], a, ans, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin)
def adj_max(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.extremum_grad(d[ans], a, ans, axis, keepdims)


@tangent(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin)
def tan_max(ans, a, axis=None, *, keepdims=False):
    d[ans] = rt.extremum_tangent(d[a], a, ans, axis, keepdims)


@adjoint(np.ptp)
def adj_ptp(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.ptp_grad(d[ans], a, axis, keepdims)


@tangent(np.ptp)
def tan_ptp(ans, a, axis=None, *, keepdims=False):
    d[ans] = rt.ptp_tangent(d[a], a, ans, axis, keepdims)


# --- NaN-ignoring sums, moments ---------------------------------------------------------------

@adjoint(np.nansum)
def adj_nansum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.unreduce(d[ans], a, axis, keepdims) * ~np.isnan(a)


@tangent(np.nansum)
def tan_nansum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = np.sum(d[a] * ~np.isnan(a), axis, dtype, keepdims=keepdims)


@adjoint(np.nanmean)
def adj_nanmean(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.nanmean_grad(d[ans], a, axis, keepdims)


@tangent(np.nanmean)
def tan_nanmean(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = rt.nanmean_tangent(d[a], a, ans, axis, keepdims)


@adjoint(np.var)
def adj_var(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.var_grad(d[ans], a, axis, ddof, keepdims)


@tangent(np.var)
def tan_var(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[ans] = rt.var_tangent(d[a], a, ans, axis, ddof, keepdims)


@adjoint(np.std)
def adj_std(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.var_grad(rt.over_twice(d[ans], ans), a, axis, ddof, keepdims)  # sqrt(var)


@tangent(np.std)
def tan_std(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[ans] = rt.over_twice(rt.var_tangent(d[a], a, ans, axis, ddof, keepdims), ans)


@adjoint(np.nanvar)
def adj_nanvar(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.nanvar_grad(d[ans], a, axis, ddof, keepdims)


@tangent(np.nanvar)
def tan_nanvar(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[ans] = rt.nanvar_tangent(d[a], a, ans, axis, ddof, keepdims)


@adjoint(np.nanstd)
def adj_nanstd(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.nanvar_grad(rt.over_twice(d[ans], ans), a, axis, ddof, keepdims)


@tangent(np.nanstd)
def tan_nanstd(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[ans] = rt.over_twice(rt.nanvar_tangent(d[a], a, ans, axis, ddof, keepdims), ans)


@adjoint(np.average)
def adj_average(ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    ga, gw = rt.average_grads(d[ans], a, ans, axis, weights, returned, keepdims)
    d[a] = ga
    d[weights] = gw


@tangent(np.average)
def tan_average(ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[ans] = rt.average_tangent(d[a], a, ans, axis, weights, returned, keepdims)
    if weights is not None:
        d[ans] = rt.average_tangent_weights(d[weights], a, ans, axis, weights, returned,
                                            keepdims)


# --- cumulative, differences ------------------------------------------------------------------

@adjoint(np.cumsum)
def adj_cumsum(ans, a, axis=None, dtype=None):
    d[a] = rt.cumsum_grad(d[ans], a, axis)


@tangent(np.cumsum)
def tan_cumsum(ans, a, axis=None, dtype=None):
    d[ans] = np.cumsum(d[a], axis, dtype)


@adjoint(np.nancumsum)
def adj_nancumsum(ans, a, axis=None, dtype=None):
    d[a] = rt.cumsum_grad(d[ans], a, axis) * ~np.isnan(a)


@tangent(np.nancumsum)
def tan_nancumsum(ans, a, axis=None, dtype=None):
    d[ans] = np.cumsum(d[a] * ~np.isnan(a), axis, dtype)


@adjoint(np.cumprod)
def adj_cumprod(ans, a, axis=None, dtype=None):
    d[a] = rt.cumprod_grad(d[ans], a, ans, axis)


@tangent(np.cumprod)
def tan_cumprod(ans, a, axis=None, dtype=None):
    d[ans] = rt.cumprod_tangent(d[a], a, ans, axis)


@adjoint(np.nancumprod)
def adj_nancumprod(ans, a, axis=None, dtype=None):
    d[a] = rt.nancumprod_grad(d[ans], a, ans, axis)


@tangent(np.nancumprod)
def tan_nancumprod(ans, a, axis=None, dtype=None):
    d[ans] = rt.nancumprod_tangent(d[a], a, ans, axis)


@adjoint(np.diff)
def adj_diff(ans, a, n=1, axis=-1, prepend=None, append=None):
    ga, gp, gq = rt.diff_grads(d[ans], a, n, axis, prepend, append)
    d[a] = ga
    d[prepend] = gp
    d[append] = gq


@tangent(np.diff)
def tan_diff(ans, a, n=1, axis=-1, prepend=None, append=None):
    # linear in (a, prepend, append): one term, zero tangents for the inactive ones
    if prepend is None:
        if append is None:
            d[ans] = np.diff(d[a], n, axis)
        else:
            d[ans] = np.diff(d[a], n, axis, append=d[append])
    elif append is None:
        d[ans] = np.diff(d[a], n, axis, prepend=d[prepend])
    else:
        d[ans] = np.diff(d[a], n, axis, prepend=d[prepend], append=d[append])


@adjoint(np.ediff1d)
def adj_ediff1d(ans, ary, to_end=None, to_begin=None):
    ga, ge, gb = rt.ediff1d_grads(d[ans], ary, to_end, to_begin)
    d[ary] = ga
    d[to_end] = ge
    d[to_begin] = gb


@tangent(np.ediff1d)
def tan_ediff1d(ans, ary, to_end=None, to_begin=None):
    if to_end is None:
        if to_begin is None:
            d[ans] = np.ediff1d(d[ary])
        else:
            d[ans] = np.ediff1d(d[ary], to_begin=d[to_begin])
    elif to_begin is None:
        d[ans] = np.ediff1d(d[ary], d[to_end])
    else:
        d[ans] = np.ediff1d(d[ary], d[to_end], d[to_begin])


@adjoint(np.gradient)
def adj_gradient(ans, f, s1=None, s2=None, s3=None, s4=None, *, axis=None, edge_order=1):
    # *varargs cannot be a template parameter: up to four positional spacings instead
    d[f] = rt.gradient_grad(d[ans], f, (s1, s2, s3, s4), axis, edge_order)
    d[s1] = rt.constant_only("the spacing of np.gradient")
    d[s2] = rt.constant_only("the spacing of np.gradient")
    d[s3] = rt.constant_only("the spacing of np.gradient")
    d[s4] = rt.constant_only("the spacing of np.gradient")


@tangent(np.gradient)
def tan_gradient(ans, f, s1=None, s2=None, s3=None, s4=None, *, axis=None, edge_order=1):
    if s1 is None:
        d[ans] = np.gradient(d[f], axis=axis, edge_order=edge_order)
    elif s2 is None:
        d[ans] = np.gradient(d[f], s1, axis=axis, edge_order=edge_order)
    elif s3 is None:
        d[ans] = np.gradient(d[f], s1, s2, axis=axis, edge_order=edge_order)
    elif s4 is None:
        d[ans] = np.gradient(d[f], s1, s2, s3, axis=axis, edge_order=edge_order)
    else:
        d[ans] = np.gradient(d[f], s1, s2, s3, s4, axis=axis, edge_order=edge_order)
    if s1 is not None:
        d[ans] = rt.constant_only_tangent(d[s1], "the spacing of np.gradient")
    if s2 is not None:
        d[ans] = rt.constant_only_tangent(d[s2], "the spacing of np.gradient")
    if s3 is not None:
        d[ans] = rt.constant_only_tangent(d[s3], "the spacing of np.gradient")
    if s4 is not None:
        d[ans] = rt.constant_only_tangent(d[s4], "the spacing of np.gradient")


# --- norms ------------------------------------------------------------------------------------

@adjoint(np.linalg.norm)
def adj_norm(ans, x, ord=None, axis=None, keepdims=False):
    d[x] = rt.norm_grad(d[ans], x, ans, ord, axis, keepdims)


@tangent(np.linalg.norm)
def tan_norm(ans, x, ord=None, axis=None, keepdims=False):
    d[ans] = rt.norm_tangent(d[x], x, ans, ord, axis, keepdims)


@adjoint(since(np.linalg, "vector_norm", "NumPy 2.0"))
def adj_vector_norm(ans, x, /, *, axis=None, keepdims=False, ord=2):
    d[x] = rt.vector_norm_grad(d[ans], x, ans, axis, keepdims, ord)


@tangent(since(np.linalg, "vector_norm", "NumPy 2.0"))
def tan_vector_norm(ans, x, /, *, axis=None, keepdims=False, ord=2):
    d[ans] = rt.vector_norm_tangent(d[x], x, ans, axis, keepdims, ord)


@adjoint(since(np.linalg, "matrix_norm", "NumPy 2.0"))
def adj_matrix_norm(ans, x, /, *, keepdims=False, ord="fro"):
    d[x] = rt.norm_grad(d[ans], x, ans, ord, (-2, -1), keepdims)


@tangent(since(np.linalg, "matrix_norm", "NumPy 2.0"))
def tan_matrix_norm(ans, x, /, *, keepdims=False, ord="fro"):
    d[ans] = rt.matrix_norm_tangent(d[x], x, ans, keepdims, ord)


# --- integration, order statistics ------------------------------------------------------------

@adjoint(since(np, "trapezoid", "NumPy 2.0"))
def adj_trapezoid(ans, y, x=None, dx=1.0, axis=-1):
    gy, gx, gdx = rt.trapezoid_grads(d[ans], y, x, dx, axis)
    d[y] = gy
    d[x] = gx
    d[dx] = gdx


@tangent(since(np, "trapezoid", "NumPy 2.0"))
def tan_trapezoid(ans, y, x=None, dx=1.0, axis=-1):
    # bilinear in y and the spacing (x or dx; dx is ignored when x is given)
    d[ans] = np.trapezoid(d[y], x, dx, axis)
    if x is None:
        d[ans] = np.trapezoid(y, None, d[dx], axis)
    else:
        d[ans] = np.trapezoid(y, d[x], dx, axis)


@adjoint(np.median)
def adj_median(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.quantile_grads(d[ans], a, 0.5, axis, "linear", keepdims)[0]


@tangent(np.median)
def tan_median(ans, a, axis=None, *, keepdims=False):
    d[ans] = rt.quantile_tangent(d[a], a, 0.5, ans, axis, "linear", keepdims)


@adjoint(np.quantile)
def adj_quantile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    ga, gq = rt.quantile_grads(d[ans], a, q, axis, method, keepdims)
    d[a] = ga
    d[q] = gq


@tangent(np.quantile)
def tan_quantile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    d[ans] = rt.quantile_tangent(d[a], a, q, ans, axis, method, keepdims)
    d[ans] = rt.quantile_tangent_q(d[q], a, q, ans, axis, method, keepdims)


@adjoint(np.percentile)
def adj_percentile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    ga, gq = rt.quantile_grads(d[ans], a, q, axis, method, keepdims, 0.01)
    d[a] = ga
    d[q] = gq


@tangent(np.percentile)
def tan_percentile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    d[ans] = rt.quantile_tangent(d[a], a, q, ans, axis, method, keepdims, 0.01)
    d[ans] = rt.quantile_tangent_q(d[q], a, q, ans, axis, method, keepdims, 0.01)


# --- statistics of several variables ----------------------------------------------------------

@adjoint(np.cov)
def adj_cov(ans, m, y=None, rowvar=True, bias=False, ddof=None):
    gm, gy = rt.cov_grads(d[ans], m, y, rowvar, bias, ddof)
    d[m] = gm
    d[y] = gy


@tangent(np.cov)
def tan_cov(ans, m, y=None, rowvar=True, bias=False, ddof=None):
    d[ans] = rt.cov_tangent(d[m], None, m, y, ans, rowvar, bias, ddof)
    if y is not None:
        d[ans] = rt.cov_tangent(None, d[y], m, y, ans, rowvar, bias, ddof)


@adjoint(np.corrcoef)
def adj_corrcoef(ans, x, y=None, rowvar=True):
    gx, gy = rt.corrcoef_grads(d[ans], x, ans, y, rowvar)
    d[x] = gx
    d[y] = gy


@tangent(np.corrcoef)
def tan_corrcoef(ans, x, y=None, rowvar=True):
    d[ans] = rt.corrcoef_tangent(d[x], None, x, ans, y, rowvar)
    if y is not None:
        d[ans] = rt.corrcoef_tangent(None, d[y], x, ans, y, rowvar)


# --- signals, interpolation, polynomials, vectors ---------------------------------------------

@adjoint(np.convolve)
def adj_convolve(ans, a, v, mode="full"):
    ga, gv = rt.convolve_grads(d[ans], a, v, mode)
    d[a] = ga
    d[v] = gv


@tangent(np.convolve)
def tan_convolve(ans, a, v, mode="full"):
    d[ans] = np.convolve(d[a], v, mode)
    d[ans] = np.convolve(a, d[v], mode)


@adjoint(np.correlate)
def adj_correlate(ans, a, v, mode="valid"):
    ga, gv = rt.correlate_grads(d[ans], a, v, mode)
    d[a] = ga
    d[v] = gv


@tangent(np.correlate)
def tan_correlate(ans, a, v, mode="valid"):
    d[ans] = np.correlate(d[a], v, mode)
    d[ans] = np.correlate(a, d[v], mode)


@adjoint(np.interp)
def adj_interp(ans, x, xp, fp, left=None, right=None, period=None):
    gx, gfp, gleft, gright = rt.interp_grads(d[ans], x, xp, fp, left, right, period)
    d[x] = gx
    d[fp] = gfp
    d[left] = gleft
    d[right] = gright
    d[xp] = rt.constant_only("the sample points xp of np.interp")


@tangent(np.interp)
def tan_interp(ans, x, xp, fp, left=None, right=None, period=None):
    d[ans] = rt.interp_tangent_x(d[x], x, xp, fp, ans, period)
    d[ans] = rt.interp_tangent_fp(d[fp], x, xp, ans, left, right, period)
    if left is not None:
        d[ans] = rt.interp_tangent_left(d[left], x, xp, ans, period)
    if right is not None:
        d[ans] = rt.interp_tangent_right(d[right], x, xp, ans, period)
    d[ans] = rt.constant_only_tangent(d[xp], "the sample points xp of np.interp")


@adjoint(np.polyval)
def adj_polyval(ans, p, x):
    gp, gx = rt.polyval_grads(d[ans], p, x)
    d[p] = gp
    d[x] = gx


@tangent(np.polyval)
def tan_polyval(ans, p, x):
    d[ans] = np.polyval(d[p], x)
    d[ans] = rt.polyval_tangent_x(d[x], p, x, ans)


@adjoint(np.cross)
def adj_cross(ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    ga, gb = rt.cross_grads(d[ans], a, b, axisa, axisb, axisc, axis)
    d[a] = ga
    d[b] = gb


@tangent(np.cross)
def tan_cross(ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[ans] = np.cross(d[a], b, axisa, axisb, axisc, axis)
    d[ans] = np.cross(a, d[b], axisa, axisb, axisc, axis)


# --- grouped sums and the ufunc methods that sum: np.bincount's weights (assembly by bins),
# np.add.reduce/accumulate/reduceat, and outer products of add, subtract and multiply ----------

@adjoint(np.histogram)
def adj_histogram(ans, a, bins=10, range=None, density=None, weights=None):
    ga, gw, gbins = rt.histogram_grad(d[ans], a, bins, range, density, weights, ans)
    d[a] = ga
    d[weights] = gw
    d[bins] = gbins


@tangent(np.histogram)
def tan_histogram(ans, a, bins=10, range=None, density=None, weights=None):
    d[ans] = rt.histogram_tangent(d[a], d[weights], d[bins], a, bins, range, density, weights,
                                  ans)


@adjoint(np.bincount)
def adj_bincount(ans, x, weights=None, minlength=0):
    d[weights] = rt.ungrouped(d[ans], x)


@tangent(np.bincount)
def tan_bincount(ans, x, weights=None, minlength=0):
    d[ans] = np.bincount(x, d[weights], minlength)


@adjoint(np.add.reduce)
def adj_add_reduce(ans, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=None):
    if out is not None:
        d[array] = rt.unsupported("np.add.reduce(..., out=...)")
    elif where is not None:
        d[array] = rt.unsupported("np.add.reduce(..., where=...)")
    else:
        d[array] = rt.unreduce(d[ans], array, axis, keepdims)
        d[initial] = rt.unbroadcast(d[ans], initial)


@tangent(np.add.reduce)
def tan_add_reduce(ans, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=None):
    if out is not None:
        d[ans] = rt.unsupported_tangent(d[array], "np.add.reduce(..., out=...)")
    elif where is not None:
        d[ans] = rt.unsupported_tangent(d[array], "np.add.reduce(..., where=...)")
    else:
        d[ans] = np.add.reduce(d[array], axis, keepdims=keepdims)
        d[ans] = rt.broadcast_like(d[initial], ans)


@adjoint(np.add.accumulate)
def adj_add_accumulate(ans, array, axis=0, dtype=None, out=None):
    if out is not None:
        d[array] = rt.unsupported("np.add.accumulate(..., out=...)")
    else:
        d[array] = rt.cumsum_grad(d[ans], array, axis)


@tangent(np.add.accumulate)
def tan_add_accumulate(ans, array, axis=0, dtype=None, out=None):
    if out is not None:
        d[ans] = rt.unsupported_tangent(d[array], "np.add.accumulate(..., out=...)")
    else:
        d[ans] = np.add.accumulate(d[array], axis)


@adjoint(np.add.reduceat)
def adj_add_reduceat(ans, array, indices, axis=0, dtype=None, out=None):
    if out is not None:
        d[array] = rt.unsupported("np.add.reduceat(..., out=...)")
    else:
        d[array] = rt.reduceat_grad(d[ans], array, indices, axis)


@tangent(np.add.reduceat)
def tan_add_reduceat(ans, array, indices, axis=0, dtype=None, out=None):
    if out is not None:
        d[ans] = rt.unsupported_tangent(d[array], "np.add.reduceat(..., out=...)")
    else:
        d[ans] = np.add.reduceat(d[array], indices, axis)


@adjoint(np.multiply.outer)
def adj_multiply_outer(ans, A, B):
    d[A] = rt.outer_grad(d[ans], A, B, 0, "multiply")
    d[B] = rt.outer_grad(d[ans], A, B, 1, "multiply")


@tangent(np.multiply.outer)
def tan_multiply_outer(ans, A, B):
    d[ans] = np.multiply.outer(d[A], B)
    d[ans] = np.multiply.outer(A, d[B])


@adjoint(np.add.outer)
def adj_add_outer(ans, A, B):
    d[A] = rt.outer_grad(d[ans], A, B, 0, "add")
    d[B] = rt.outer_grad(d[ans], A, B, 1, "add")


@tangent(np.add.outer)
def tan_add_outer(ans, A, B):
    d[ans] = rt.broadcast_like(np.add.outer(d[A], np.zeros(np.shape(B))), ans)
    d[ans] = rt.broadcast_like(np.add.outer(np.zeros(np.shape(A)), d[B]), ans)


@adjoint(np.subtract.outer)
def adj_subtract_outer(ans, A, B):
    d[A] = rt.outer_grad(d[ans], A, B, 0, "subtract")
    d[B] = rt.outer_grad(d[ans], A, B, 1, "subtract")


@tangent(np.subtract.outer)
def tan_subtract_outer(ans, A, B):
    d[ans] = rt.broadcast_like(np.add.outer(d[A], np.zeros(np.shape(B))), ans)
    d[ans] = rt.broadcast_like(np.add.outer(np.zeros(np.shape(A)), -d[B]), ans)
