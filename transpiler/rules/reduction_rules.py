"""Adjoints of NumPy reductions, cumulative and statistical functions.

Parameters mirror NumPy's signatures; those after an ``out=`` parameter are keyword-only here,
so a positional ``out``, ``initial=``, ``where=`` or ``overwrite_input=`` is refused at compile
time instead of being misread. Helpers live in ``runtime/reductions.py``.
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d

# --- products, extrema ------------------------------------------------------------------------

@adjoint(np.prod)
def adj_prod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.reductions.prod_grad(d[ans], a, axis, keepdims)


@adjoint(np.nanprod)
def adj_nanprod(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.reductions.nanprod_grad(d[ans], a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin)
def adj_max(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.reductions.extremum_grad(d[ans], a, ans, axis, keepdims)


@adjoint(np.ptp)
def adj_ptp(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.reductions.ptp_grad(d[ans], a, axis, keepdims)


# --- NaN-ignoring sums, moments ---------------------------------------------------------------

@adjoint(np.nansum)
def adj_nansum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.unreduce(d[ans], a, axis, keepdims) * ~np.isnan(a)


@adjoint(np.nanmean)
def adj_nanmean(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.reductions.nanmean_grad(d[ans], a, axis, keepdims)


@adjoint(np.var)
def adj_var(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.reductions.var_grad(d[ans], a, axis, ddof, keepdims)


@adjoint(np.std)
def adj_std(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.reductions.var_grad(d[ans] * 0.5 / ans, a, axis, ddof, keepdims)  # std = sqrt(var)


@adjoint(np.nanvar)
def adj_nanvar(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.reductions.nanvar_grad(d[ans], a, axis, ddof, keepdims)


@adjoint(np.nanstd)
def adj_nanstd(ans, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    d[a] = rt.reductions.nanvar_grad(d[ans] * 0.5 / ans, a, axis, ddof, keepdims)


@adjoint(np.average)
def adj_average(ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    ga, gw = rt.reductions.average_grads(d[ans], a, ans, axis, weights, returned, keepdims)
    d[a] = ga
    d[weights] = gw


# --- cumulative, differences ------------------------------------------------------------------

@adjoint(np.cumsum)
def adj_cumsum(ans, a, axis=None, dtype=None):
    d[a] = rt.reductions.cumsum_grad(d[ans], a, axis)


@adjoint(np.nancumsum)
def adj_nancumsum(ans, a, axis=None, dtype=None):
    d[a] = rt.reductions.cumsum_grad(d[ans], a, axis) * ~np.isnan(a)


@adjoint(np.cumprod)
def adj_cumprod(ans, a, axis=None, dtype=None):
    d[a] = rt.reductions.cumprod_grad(d[ans], a, ans, axis)


@adjoint(np.nancumprod)
def adj_nancumprod(ans, a, axis=None, dtype=None):
    d[a] = rt.reductions.nancumprod_grad(d[ans], a, ans, axis)


@adjoint(np.diff)
def adj_diff(ans, a, n=1, axis=-1, prepend=None, append=None):
    ga, gp, gq = rt.reductions.diff_grads(d[ans], a, n, axis, prepend, append)
    d[a] = ga
    d[prepend] = gp
    d[append] = gq


@adjoint(np.ediff1d)
def adj_ediff1d(ans, ary, to_end=None, to_begin=None):
    ga, ge, gb = rt.reductions.ediff1d_grads(d[ans], ary, to_end, to_begin)
    d[ary] = ga
    d[to_end] = ge
    d[to_begin] = gb


@adjoint(np.gradient)
def adj_gradient(ans, f, s1=None, s2=None, s3=None, s4=None, *, axis=None, edge_order=1):
    # *varargs cannot be a template parameter: up to four positional spacings instead
    d[f] = rt.reductions.gradient_grad(d[ans], f, (s1, s2, s3, s4), axis, edge_order)
    d[s1] = rt.reductions.constant_only("the spacing of np.gradient")
    d[s2] = rt.reductions.constant_only("the spacing of np.gradient")
    d[s3] = rt.reductions.constant_only("the spacing of np.gradient")
    d[s4] = rt.reductions.constant_only("the spacing of np.gradient")


# --- norms ------------------------------------------------------------------------------------

@adjoint(np.linalg.norm)
def adj_norm(ans, x, ord=None, axis=None, keepdims=False):
    d[x] = rt.reductions.norm_grad(d[ans], x, ans, ord, axis, keepdims)


@adjoint(np.linalg.vector_norm)
def adj_vector_norm(ans, x, /, *, axis=None, keepdims=False, ord=2):
    d[x] = rt.reductions.vector_norm_grad(d[ans], x, ans, axis, keepdims, ord)


@adjoint(np.linalg.matrix_norm)
def adj_matrix_norm(ans, x, /, *, keepdims=False, ord="fro"):
    d[x] = rt.reductions.norm_grad(d[ans], x, ans, ord, (-2, -1), keepdims)


# --- integration, order statistics ------------------------------------------------------------

@adjoint(np.trapezoid)
def adj_trapezoid(ans, y, x=None, dx=1.0, axis=-1):
    gy, gx, gdx = rt.reductions.trapezoid_grads(d[ans], y, x, dx, axis)
    d[y] = gy
    d[x] = gx
    d[dx] = gdx


@adjoint(np.median)
def adj_median(ans, a, axis=None, *, keepdims=False):
    d[a] = rt.reductions.quantile_grads(d[ans], a, 0.5, axis, "linear", keepdims)[0]


@adjoint(np.quantile)
def adj_quantile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    ga, gq = rt.reductions.quantile_grads(d[ans], a, q, axis, method, keepdims)
    d[a] = ga
    d[q] = gq


@adjoint(np.percentile)
def adj_percentile(ans, a, q, axis=None, *, method="linear", keepdims=False):
    ga, gq = rt.reductions.quantile_grads(d[ans], a, q, axis, method, keepdims, 0.01)
    d[a] = ga
    d[q] = gq


# --- statistics of several variables ----------------------------------------------------------

@adjoint(np.cov)
def adj_cov(ans, m, y=None, rowvar=True, bias=False, ddof=None):
    gm, gy = rt.reductions.cov_grads(d[ans], m, y, rowvar, bias, ddof)
    d[m] = gm
    d[y] = gy


@adjoint(np.corrcoef)
def adj_corrcoef(ans, x, y=None, rowvar=True):
    gx, gy = rt.reductions.corrcoef_grads(d[ans], x, ans, y, rowvar)
    d[x] = gx
    d[y] = gy


# --- signals, interpolation, polynomials, vectors ---------------------------------------------

@adjoint(np.convolve)
def adj_convolve(ans, a, v, mode="full"):
    ga, gv = rt.reductions.convolve_grads(d[ans], a, v, mode)
    d[a] = ga
    d[v] = gv


@adjoint(np.correlate)
def adj_correlate(ans, a, v, mode="valid"):
    ga, gv = rt.reductions.correlate_grads(d[ans], a, v, mode)
    d[a] = ga
    d[v] = gv


@adjoint(np.interp)
def adj_interp(ans, x, xp, fp, left=None, right=None, period=None):
    gx, gfp, gleft, gright = rt.reductions.interp_grads(d[ans], x, xp, fp, left, right, period)
    d[x] = gx
    d[fp] = gfp
    d[left] = gleft
    d[right] = gright
    d[xp] = rt.reductions.constant_only("the sample points xp of np.interp")


@adjoint(np.polyval)
def adj_polyval(ans, p, x):
    gp, gx = rt.reductions.polyval_grads(d[ans], p, x)
    d[p] = gp
    d[x] = gx


@adjoint(np.cross)
def adj_cross(ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    ga, gb = rt.reductions.cross_grads(d[ans], a, b, axisa, axisb, axisc, axis)
    d[a] = ga
    d[b] = gb
