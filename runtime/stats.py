"""Derivatives of ``scipy.stats`` distributions' densities, masses and tail functions.

A continuous distribution of the loc-scale family is its standard density at
``z = (x - loc) / scale``: ``logpdf(x) = l0(z; shapes) - log(scale)``. So one table entry per
distribution, ``l0``'s derivatives in ``z`` and in each shape parameter, gives every method's:

- ``logpdf``: ``d/dx = l0'(z) / scale``, ``d/dloc = -l0'(z) / scale``,
  ``d/dscale = -(1 + z l0'(z)) / scale``, ``d/ds = dl0/ds``; ``pdf`` is that times the density;
- ``cdf``: ``d/dx = pdf(x)``, ``d/dloc = -pdf(x)``, ``d/dscale = -z pdf(x)``, and a shape's
  where the table has a closed form (most have none: refused when asked for); ``sf`` the
  negatives; ``logcdf`` and ``logsf`` divided by the cdf or sf (by differences of logs).

A discrete distribution (``poisson``, ``binom``, ``nbinom``) has its mass's derivatives in its
real parameters from the table; its count ``k``, integer ``n`` (``binom``) and ``loc`` have none
(refused). The values the derivatives need (densities, masses, tails) are SciPy's own.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import asarray, is_zero


def _special():
    import scipy.special as special

    return special


def _stats():
    import scipy.stats as stats

    return stats


# --- continuous: l0'(z) and dl0/ds per shape, and the cdf's shape derivatives where closed -------

def _norm(z):
    return -z, ()


def _expon(z):
    return np.full(np.shape(z), -1.0), ()


def _laplace(z):
    return -np.sign(z), ()


def _cauchy(z):
    return -2.0 * z / (1.0 + z * z), ()


def _logistic(z):
    return -np.tanh(0.5 * z), ()


def _t(z, df):
    psi = _special().digamma
    ratio = z * z / df
    dz = -(df + 1.0) * z / (df + z * z)
    ddf = 0.5 * (psi(0.5 * (df + 1.0)) - psi(0.5 * df)) - 0.5 / df - 0.5 * np.log1p(ratio) \
        + 0.5 * (df + 1.0) * ratio / (df + z * z)
    return dz, (ddf,)


def _gamma(z, a):
    return (a - 1.0) / z - 1.0, (np.log(z) - _special().digamma(a),)


def _beta(z, a, b):
    psi = _special().digamma
    both = psi(a + b)
    return (a - 1.0) / z - (b - 1.0) / (1.0 - z), \
        (np.log(z) - psi(a) + both, np.log1p(-z) - psi(b) + both)


def _lognorm(z, s):
    log = np.log(z)
    return -1.0 / z - log / (s * s * z), (-1.0 / s + log * log / s ** 3,)


def _lognorm_cdf_shapes(z, s):
    """``d/ds ndtr(log(z) / s)``."""
    u = np.log(z) / s
    return (-np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi) * u / s,)


CONTINUOUS = {  # name -> (l0's derivatives, the cdf's shape derivatives or None)
    "norm": (_norm, None), "expon": (_expon, None), "laplace": (_laplace, None),
    "cauchy": (_cauchy, None), "logistic": (_logistic, None), "t": (_t, None),
    "gamma": (_gamma, None), "beta": (_beta, None), "lognorm": (_lognorm, _lognorm_cdf_shapes),
}
CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")


# --- discrete: the log mass's derivatives in the real parameters, and the cdf's ---------------

def _poisson(k, mu):
    return (k / mu - 1.0,)


def _poisson_cdf(k, mu):
    return (-_stats().poisson.pmf(np.floor(k), mu),)


def _binom(k, n, p):
    return (None, k / p - (n - k) / (1.0 - p))


def _binom_cdf(k, n, p):
    return (None, -n * _stats().binom.pmf(np.floor(k), n - 1, p))


def _nbinom(k, n, p):
    psi = _special().digamma
    return (psi(k + n) - psi(n) + np.log(p), n / p - k / (1.0 - p))


def _nbinom_cdf(k, n, p):
    special = _special()
    j = np.floor(k)
    log = (n - 1.0) * np.log(p) + j * np.log1p(-p) - special.betaln(n, j + 1.0)
    return (None, np.exp(log))


DISCRETE = {  # name -> (the log mass's derivatives, the cdf's); None: no derivative
    "poisson": (_poisson, _poisson_cdf), "binom": (_binom, _binom_cdf),
    "nbinom": (_nbinom, _nbinom_cdf),
}
DISCRETE_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")


def _refuse(dist: str, method: str, what: str):
    raise NotImplementedError(f"scipy.stats.{dist}.{method} is not differentiated with "
                              f"respect to {what}")


def derivative(dist: str, method: str, wrt: int, ans, x, shapes: tuple, loc=0.0, scale=1.0):
    """The elementwise derivative of ``<dist>.<method>(x, *shapes, loc, scale)`` with respect to
    argument ``wrt`` (0: ``x``, then the shapes, then ``loc`` and ``scale``)."""
    if dist in DISCRETE:
        return _discrete(dist, method, wrt, ans, x, shapes, loc)
    frozen = getattr(_stats(), dist)
    x, loc, scale = asarray(x, float), asarray(loc, float), asarray(scale, float)
    z = (x - loc) / scale
    n = len(shapes)
    if method in ("logpdf", "pdf"):
        dz, dshapes = CONTINUOUS[dist][0](z, *shapes)
        out = [dz / scale, *dshapes, -dz / scale, -(1.0 + z * dz) / scale][wrt]
        return out * asarray(ans) if method == "pdf" else out
    pdf = frozen.pdf(x, *shapes, loc=loc, scale=scale)
    if 1 <= wrt <= n:
        closed = CONTINUOUS[dist][1]
        if closed is None:
            _refuse(dist, method, f"its shape parameter {wrt} (no closed form)")
        dcdf = closed(z, *shapes)[wrt - 1]
    else:
        dcdf = [pdf, None, -pdf, -z * pdf][0 if wrt == 0 else 2 if wrt == n + 1 else 3]
    return _tails(frozen, method, dcdf, x, shapes, dict(loc=loc, scale=scale))


def _tails(frozen, method: str, dcdf, x, shapes, where: dict):
    """A tail method's derivative from the cdf's, ``dcdf``: itself, negated (``sf``), divided
    by the cdf (``logcdf``) or by the sf, negated (``logsf``)."""
    if method == "cdf":
        return dcdf
    if method == "sf":
        return -dcdf
    if method == "logcdf":
        return dcdf * np.exp(-frozen.logcdf(x, *shapes, **where))
    return -dcdf * np.exp(-frozen.logsf(x, *shapes, **where))


def _discrete(dist: str, method: str, wrt: int, ans, k, shapes: tuple, loc):
    if wrt == 0 or wrt == len(shapes) + 1:
        _refuse(dist, method, "its count k or its loc (integers)")
    frozen = getattr(_stats(), dist)
    k = asarray(k, float) - asarray(loc, float)
    if method in ("logpmf", "pmf"):
        out = DISCRETE[dist][0](k, *shapes)[wrt - 1]
        if out is None:
            _refuse(dist, method, f"its integer parameter {wrt}")
        return out * asarray(ans) if method == "pmf" else out
    dcdf = DISCRETE[dist][1](k, *shapes)[wrt - 1]
    if dcdf is None:
        _refuse(dist, method, f"its parameter {wrt} (no closed form, or an integer)")
    return _tails(frozen, method, dcdf, k, shapes, {})


def stats_partial(g, dist: str, method: str, wrt: int, ans, x, shapes: tuple, loc=0.0,
                  scale=1.0):
    """The gradient of ``<dist>.<method>(x, *shapes, loc, scale)`` with respect to argument
    ``wrt``: ``g`` times its derivative, summed to that argument's shape."""
    from runtime.broadcast import unbroadcast

    arguments = (x, *shapes, loc, scale)
    if is_zero(g):
        return 0.0 if np.ndim(arguments[wrt]) == 0 else np.zeros(np.shape(arguments[wrt]))
    return unbroadcast(asarray(g) * derivative(dist, method, wrt, ans, x, shapes, loc, scale),
                       arguments[wrt])


def stats_tangent(tangents: tuple, dist: str, method: str, ans, x, shapes: tuple, loc=0.0,
                  scale=1.0):
    """The tangent of ``<dist>.<method>(x, *shapes, loc, scale)``: each argument's tangent
    times its derivative, summed (arguments without one left out)."""
    out = np.zeros(np.shape(ans))
    for wrt, t in enumerate(tangents):
        if is_zero(t) or not np.any(t):
            continue
        out = out + asarray(t) * derivative(dist, method, wrt, ans, x, shapes, loc, scale)
    return out if np.ndim(ans) else float(out)


# --- the multivariate normal ------------------------------------------------------------------

def _mvn_parts(x, mean, cov):
    """``(r, P r, P)`` for the residuals ``r = x - mean`` (one per row) and the precision ``P``
    of the covariance as SciPy reads it: a number or a diagonal as such, a matrix by its lower
    triangle."""
    x = asarray(x, float)
    d = x.shape[-1] if x.ndim else 1
    mean = np.zeros(d) if mean is None else asarray(mean, float)
    cov = asarray(cov, float)
    if cov.ndim == 0:
        full = cov * np.eye(d)
    elif cov.ndim == 1:
        full = np.diag(cov)
    else:
        full = np.tril(cov) + np.tril(cov, -1).T
    precision = np.linalg.inv(full)
    r = np.atleast_1d(x) - mean
    return r, r @ precision, precision


def _fold_cov(g, cov):
    """A symmetric matrix gradient ``g`` as the gradient of ``cov`` as SciPy reads it: its
    trace for a number, its diagonal for a vector, onto the lower triangle for a matrix."""
    if np.ndim(cov) == 0:
        return float(np.trace(g))
    if np.ndim(cov) == 1:
        return np.diagonal(g).copy()
    return np.tril(g + g.T) - np.diag(np.diagonal(g))


def mvn_partial(g, method: str, wrt: int, ans, x, mean=None, cov=1.0):
    """The gradient of ``multivariate_normal.<method>(x, mean, cov)`` (``logpdf`` or ``pdf``)
    with respect to ``x`` (0), ``mean`` (1) or ``cov`` (2): ``-P r``, ``P r`` and
    ``(P r r^T P - P) / 2`` per sample, times ``g`` (times the density for ``pdf``)."""
    from runtime.broadcast import unbroadcast

    like = (x, mean, cov)[wrt]
    if is_zero(g):
        return 0.0 if np.ndim(like) == 0 else np.zeros(np.shape(like))
    r, pr, precision = _mvn_parts(x, mean, cov)
    weight = asarray(g, float) * (asarray(ans) if method == "pdf" else 1.0)
    rows = np.reshape(weight, np.shape(pr)[:-1] + (1,))
    if wrt == 0:
        return unbroadcast(-rows * pr, x).reshape(np.shape(x))
    if wrt == 1:
        return unbroadcast(rows * pr, np.zeros(np.shape(pr)[-1:])).reshape(np.shape(like))
    w = np.reshape(weight, -1)
    p2 = np.reshape(pr, (-1, pr.shape[-1]))
    gram = 0.5 * ((p2 * w[:, None]).T @ p2 - np.sum(w) * precision)
    return _fold_cov(gram, cov)


def mvn_tangent(tangents: tuple, method: str, ans, x, mean=None, cov=1.0):
    """The tangent of ``multivariate_normal.<method>(x, mean, cov)``."""
    r, pr, precision = _mvn_parts(x, mean, cov)
    out = np.zeros(np.shape(pr)[:-1])
    dx, dmean, dcov = tangents
    if not is_zero(dx):
        out = out - np.sum(pr * np.broadcast_to(dx, np.shape(pr)), axis=-1)
    if not is_zero(dmean):
        out = out + np.sum(pr * np.broadcast_to(dmean, np.shape(pr)), axis=-1)
    if not is_zero(dcov):
        dcov = asarray(dcov, float)
        dfull = dcov * np.eye(precision.shape[0]) if dcov.ndim == 0 else np.diag(dcov) \
            if dcov.ndim == 1 else np.tril(dcov) + np.tril(dcov, -1).T
        out = out + 0.5 * (np.einsum("...i,ij,...j->...", pr, dfull, pr)
                           - np.trace(precision @ dfull))
    out = out * (asarray(ans) if method == "pdf" else 1.0)
    return out if np.ndim(ans) else float(out)
