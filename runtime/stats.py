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

Quantiles (``ppf``, ``isf``, ``median``) follow from the cdf's derivatives by the inverse
function's rule; ``entropy``, ``mean``, ``var`` and ``std``, functions of the parameters alone,
from small tables of the standard distribution's entropy and moments in its shapes.
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


# --- second derivatives (hvp): l0'' and l0's second derivatives with the shapes ---------------
# (each: ``(l0_zz, (l0_zs per shape), ((l0_ss per pair of shapes)))``)

def _norm2(z):
    return np.full(np.shape(z), -1.0), (), ()


def _flat2(z):  # (expon, laplace: l0 is linear in z where it is differentiable)
    return np.zeros(np.shape(z)), (), ()


def _cauchy2(z):
    q = 1.0 + z * z
    return -2.0 * (1.0 - z * z) / (q * q), (), ()


def _logistic2(z):
    th = np.tanh(0.5 * z)
    return -0.5 * (1.0 - th * th), (), ()


def _t2(z, df):
    trigamma = _special().polygamma
    q = df + z * z
    zz = -(df + 1.0) * (df - z * z) / (q * q)
    zdf = z * (1.0 - z * z) / (q * q)
    dfdf = 0.25 * (trigamma(1, 0.5 * (df + 1.0)) - trigamma(1, 0.5 * df)) + 0.5 / (df * df) \
        + (z ** 4 * (df - 1.0) - 2.0 * df * z * z) / (2.0 * df * df * q * q)
    return zz, (zdf,), ((dfdf,),)


def _gamma2(z, a):
    trigamma = _special().polygamma
    return -(a - 1.0) / (z * z), (1.0 / z,), ((-trigamma(1, a),),)


def _beta2(z, a, b):
    trigamma = _special().polygamma
    both = trigamma(1, a + b)
    zz = -(a - 1.0) / (z * z) - (b - 1.0) / ((1.0 - z) ** 2)
    return zz, (1.0 / z, -1.0 / (1.0 - z)), ((both - trigamma(1, a), both),
                                             (both, both - trigamma(1, b)))


def _lognorm2(z, s):
    log = np.log(z)
    return (s * s + log - 1.0) / (s * s * z * z), (2.0 * log / (s ** 3 * z),), \
        (((s * s - 3.0 * log * log) / s ** 4,),)


SECOND = {"norm": _norm2, "expon": _flat2, "laplace": _flat2, "cauchy": _cauchy2,
          "logistic": _logistic2, "t": _t2, "gamma": _gamma2, "beta": _beta2,
          "lognorm": _lognorm2}

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


# --- quantiles and entropies -------------------------------------------------------------------
# ``ppf(q) = loc + scale * y`` with ``F0(y; shapes) = q`` (``isf``: ``1 - q``; ``median``: the
# ppf at one half), so ``dy/dq = ±1 / f0(y)``, ``dy/ds = -dF0/ds / f0(y)`` where the cdf's shape
# derivative is closed, and ``d2y/dq2 = -l0'(y) / f0(y)**2``. A discrete quantile is a step
# function of its q and shapes: derivative 0, as np.floor's. ``entropy() = h0(shapes) +
# log(scale)``: the table gives ``h0``'s derivatives in the shapes, first and second (a discrete
# entropy is a series: no closed form).
QUANTILES = ("ppf", "isf", "median")


def _t_entropy(df):
    trigamma = _special().polygamma
    return ((df + 1.0) / 4.0 * (trigamma(1, 0.5 * (df + 1.0)) - trigamma(1, 0.5 * df))
            + 0.5 / df,)


def _t_entropy2(df):
    poly = _special().polygamma
    h1, h0 = 0.5 * (df + 1.0), 0.5 * df
    return ((0.25 * (poly(1, h1) - poly(1, h0)) + (df + 1.0) / 8.0 * (poly(2, h1) - poly(2, h0))
             - 0.5 / (df * df),),)


def _gamma_entropy(a):
    return (1.0 + (1.0 - a) * _special().polygamma(1, a),)


def _gamma_entropy2(a):
    poly = _special().polygamma
    return ((-poly(1, a) + (1.0 - a) * poly(2, a),),)


def _beta_entropy(a, b):
    poly = _special().polygamma
    both = (a + b - 2.0) * poly(1, a + b)
    return (both - (a - 1.0) * poly(1, a), both - (b - 1.0) * poly(1, b))


def _beta_entropy2(a, b):
    poly = _special().polygamma
    both = poly(1, a + b) + (a + b - 2.0) * poly(2, a + b)
    return ((both - poly(1, a) - (a - 1.0) * poly(2, a), both),
            (both, both - poly(1, b) - (b - 1.0) * poly(2, b)))


def _no_shapes(*shapes):
    return ()


# ``mean() = loc + scale * m0(shapes)``, ``var() = scale**2 * v0(shapes)``, ``std() = scale *
# sqrt(v0)``: each entry gives ``(m0, its shape derivatives, their second ones, v0, ...)``
# (cauchy's moments do not exist: no entry, refused).

def _constant_moments(m0: float, v0: float):
    return lambda: (m0, (), (), v0, (), ())


def _t_moments(df):
    v = df / (df - 2.0)
    return 0.0 * df, (0.0 * df,), ((0.0 * df,),), v, (-2.0 / (df - 2.0) ** 2,), \
        ((4.0 / (df - 2.0) ** 3,),)


def _gamma_moments(a):
    one, zero = 1.0 + 0.0 * a, 0.0 * a
    return a, (one,), ((zero,),), a, (one,), ((zero,),)


def _beta_moments(a, b):
    c = a + b
    m = a / c
    m_s = (b / (c * c), -a / (c * c))
    m_ss = ((-2.0 * b / c ** 3, (a - b) / c ** 3), ((a - b) / c ** 3, 2.0 * a / c ** 3))
    v = a * b / (c * c * (c + 1.0))
    log_s = (1.0 / a - 2.0 / c - 1.0 / (c + 1.0), 1.0 / b - 2.0 / c - 1.0 / (c + 1.0))
    both = 2.0 / (c * c) + 1.0 / (c + 1.0) ** 2
    log_ss = ((both - 1.0 / (a * a), both), (both, both - 1.0 / (b * b)))
    v_ss = tuple(tuple(v * (log_s[i] * log_s[j] + log_ss[i][j]) for j in range(2))
                 for i in range(2))
    return m, m_s, m_ss, v, (v * log_s[0], v * log_s[1]), v_ss


def _lognorm_moments(s):
    e, e2 = np.exp(s * s / 2.0), np.exp(s * s)
    return e, (s * e,), (((1.0 + s * s) * e,),), e2 * e2 - e2, \
        (4.0 * s * e2 * e2 - 2.0 * s * e2,), \
        (((4.0 + 16.0 * s * s) * e2 * e2 - (2.0 + 4.0 * s * s) * e2,),)


MOMENTS = {
    "norm": _constant_moments(0.0, 1.0), "expon": _constant_moments(1.0, 1.0),
    "laplace": _constant_moments(0.0, 2.0), "logistic": _constant_moments(0.0, np.pi ** 2 / 3),
    "t": _t_moments, "gamma": _gamma_moments, "beta": _beta_moments,
    "lognorm": _lognorm_moments,
}
MOMENT_METHODS = ("mean", "var", "std")


def _moment(dist: str, method: str, a: int, b: int | None, shapes: tuple, scale):
    """The first (``b`` None) or second derivative of ``mean``, ``var`` or ``std`` in arguments
    ``a`` (and ``b``) of ``(*shapes, loc, scale)``, numbered from 1 as in ``derivative``."""
    if dist not in MOMENTS:
        _refuse(dist, method, "its parameters (its moments do not exist)")
    n = len(shapes)
    m, m_s, m_ss, v, v_s, v_ss = MOMENTS[dist](*shapes)
    scale = asarray(scale, float)
    if method == "std":  # r = sqrt(v0)
        r = np.sqrt(v)
        m, m_s = r, tuple(dv / (2.0 * r) for dv in v_s)
        m_ss = tuple(tuple(v_ss[i][j] / (2.0 * r) - v_s[i] * v_s[j] / (4.0 * r ** 3)
                           for j in range(n)) for i in range(n))
    if method in ("mean", "std"):  # loc (mean only) + scale * m
        if b is None:
            return [*(scale * d for d in m_s), 1.0 if method == "mean" else 0.0, m][a - 1]
        pair = sorted((a, b))
        if n + 1 in pair or pair == [n + 2, n + 2]:
            return 0.0
        if pair[1] == n + 2:
            return m_s[pair[0] - 1]
        return scale * m_ss[a - 1][b - 1]
    if b is None:  # var: scale**2 * v
        return [*(scale * scale * d for d in v_s), 0.0, 2.0 * scale * v][a - 1]
    pair = sorted((a, b))
    if n + 1 in pair:
        return 0.0
    if pair == [n + 2, n + 2]:
        return 2.0 * v
    if pair[1] == n + 2:
        return 2.0 * scale * v_s[pair[0] - 1]
    return scale * scale * v_ss[a - 1][b - 1]


ENTROPY = {  # name -> (h0's derivatives in the shapes, its second derivatives)
    "norm": (_no_shapes, _no_shapes), "expon": (_no_shapes, _no_shapes),
    "laplace": (_no_shapes, _no_shapes), "cauchy": (_no_shapes, _no_shapes),
    "logistic": (_no_shapes, _no_shapes), "t": (_t_entropy, _t_entropy2),
    "gamma": (_gamma_entropy, _gamma_entropy2), "beta": (_beta_entropy, _beta_entropy2),
    "lognorm": (lambda s: (1.0 / s,), lambda s: ((-1.0 / (s * s),),)),
}


def _refuse(dist: str, method: str, what: str):
    raise NotImplementedError(f"scipy.stats.{dist}.{method} is not differentiated with "
                              f"respect to {what}")


def derivative(dist: str, method: str, wrt: int, ans, x, shapes: tuple, loc=0.0, scale=1.0):
    """The elementwise derivative of ``<dist>.<method>(x, *shapes, loc, scale)`` with respect to
    argument ``wrt`` (0: ``x``, then the shapes, then ``loc`` and ``scale``)."""
    if dist in DISCRETE:
        return _discrete(dist, method, wrt, ans, x, shapes, loc)
    if method in QUANTILES:
        return _quantile(dist, method, wrt, ans, shapes, loc, scale)
    if method == "entropy":
        return _entropy(dist, wrt, shapes, scale)
    if method in MOMENT_METHODS:
        return _moment(dist, method, wrt, None, shapes, scale)
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


def _quantile(dist: str, method: str, wrt: int, ans, shapes: tuple, loc, scale):
    """A quantile's derivative (``ppf``, ``isf``: ``wrt`` 0 is ``q``; ``median`` has none)."""
    n = len(shapes)
    ans, loc, scale = asarray(ans, float), asarray(loc, float), asarray(scale, float)
    y = (ans - loc) / scale
    if wrt == n + 1:
        return np.ones(np.shape(y))
    if wrt == n + 2:
        return y
    f0 = getattr(_stats(), dist).pdf(y, *shapes)
    if wrt == 0:
        return (-scale if method == "isf" else scale) / f0
    closed = CONTINUOUS[dist][1]
    if closed is None:
        _refuse(dist, method, f"its shape parameter {wrt} (its cdf's has no closed form)")
    return -scale * closed(y, *shapes)[wrt - 1] / f0


def _entropy(dist: str, wrt: int, shapes: tuple, scale):
    """The entropy's derivative in a shape (the table) or ``scale``; ``loc``'s is 0."""
    n = len(shapes)
    if dist not in ENTROPY:
        _refuse(dist, "entropy", "its parameters (no closed form)")
    if wrt == n + 1:
        return 0.0
    if wrt == n + 2:
        return 1.0 / asarray(scale, float)
    return ENTROPY[dist][0](*shapes)[wrt - 1]


def _discrete(dist: str, method: str, wrt: int, ans, k, shapes: tuple, loc):
    if method == "entropy":
        _refuse(dist, method, "its parameters (a series: no closed form)")
    if method in QUANTILES and wrt != len(shapes) + 1:
        return np.zeros(np.shape(ans))  # a step function of q and of the shapes
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


def _z_partials(z, scale, n: int):
    """``z = (x - loc) / scale``'s first partials in ``(x, *shapes, loc, scale)``, and its
    second ones as a function of the pair."""
    zero = np.zeros(np.shape(z))
    first = [1.0 / scale + zero, *([zero] * n), -1.0 / scale + zero, -z / scale]

    def second(a: int, b: int):
        pair = {a, b}
        if pair == {0, n + 2}:
            return -1.0 / (scale * scale) + zero
        if pair == {n + 1, n + 2}:
            return 1.0 / (scale * scale) + zero
        if pair == {n + 2}:
            return 2.0 * z / (scale * scale)
        return zero

    return first, second


def _log_density_second(dist: str, a: int, b: int, x, shapes: tuple, loc, scale):
    """``d2/da db`` of ``logpdf(x, *shapes, loc, scale) = l0(z; shapes) - log(scale)``, and
    the first partials in ``a`` and ``b``."""
    n = len(shapes)
    z = (x - loc) / scale
    dz, dshapes = CONTINUOUS[dist][0](z, *shapes)
    zz, zs, ss = SECOND[dist](z, *shapes)
    first_z, second_z = _z_partials(z, scale, n)

    def first(i: int):
        if 1 <= i <= n:
            return dshapes[i - 1] + 0.0 * z
        return dz * first_z[i] - (1.0 / scale if i == n + 2 else 0.0)

    out = zz * first_z[a] * first_z[b] + dz * second_z(a, b)
    if 1 <= a <= n:
        out = out + zs[a - 1] * first_z[b]
    if 1 <= b <= n:
        out = out + zs[b - 1] * first_z[a]
    if 1 <= a <= n and 1 <= b <= n:
        out = out + ss[a - 1][b - 1]
    if a == b == n + 2:
        out = out + 1.0 / (scale * scale)
    return out, first(a), first(b)


def _cdf_second(dist: str, a: int, b: int, x, shapes: tuple, loc, scale):
    """``d2/da db`` of ``cdf(x, ...) = F0(z)`` and its first partials in ``a`` and ``b``: with
    ``f0 = scale * pdf``, ``F_a = f0 z_a`` and ``F_ab = f0 (l0'(z) z_a z_b + z_ab)``."""
    n = len(shapes)
    if dist == "lognorm":
        return _lognorm_cdf_second(a, b, x, shapes[0], loc, scale)
    if 1 <= a <= n or 1 <= b <= n:
        _refuse(dist, "cdf", "its shape parameters, twice (no closed form)")
    z = (x - loc) / scale
    f0 = scale * getattr(_stats(), dist).pdf(x, *shapes, loc=loc, scale=scale)
    dz, _ = CONTINUOUS[dist][0](z, *shapes)
    first_z, second_z = _z_partials(z, scale, n)
    return f0 * (dz * first_z[a] * first_z[b] + second_z(a, b)), f0 * first_z[a], \
        f0 * first_z[b]


def _lognorm_cdf_second(a: int, b: int, x, s, loc, scale):
    """lognorm's ``cdf = ndtr(u)``, ``u = log(z) / s``: ``F_ab = phi(u) (u_ab - u u_a u_b)``
    in ``(x, s, loc, scale)``."""
    z = (x - loc) / scale
    first_z, second_z = _z_partials(z, scale, 1)
    u = np.log(z) / s
    uz, uzz, uzs = 1.0 / (s * z), -1.0 / (s * z * z), -1.0 / (s * s * z)
    ua = [uz * first_z[i] if i != 1 else -u / s for i in (a, b)]
    uab = uzz * first_z[a] * first_z[b] + uz * second_z(a, b)
    if a == 1 and b == 1:
        uab = 2.0 * u / (s * s) + 0.0 * z
    elif a == 1 or b == 1:
        uab = uzs * first_z[b if a == 1 else a]
    phi = np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi)
    return phi * (uab - u * ua[0] * ua[1]), phi * ua[0], phi * ua[1]


def _discrete_second(dist: str, method: str, a: int, b: int, k, shapes: tuple):
    """The log mass's (or the cdf's) second derivative in real parameters ``a``, ``b`` (1-based
    among the shapes), and the first ones."""
    special, stats = _special(), _stats()
    trigamma = special.polygamma
    firsts = DISCRETE[dist][0 if method in ("logpmf", "pmf") else 1](k, *shapes)
    fa, fb = firsts[a - 1], firsts[b - 1]
    if fa is None or fb is None:
        _refuse(dist, method, "an integer parameter")
    j = np.floor(k)
    if method in ("logpmf", "pmf"):
        if dist == "poisson":
            second = -k / (shapes[0] ** 2)
        elif dist == "binom":
            n, p = shapes
            second = -k / (p * p) - (n - k) / ((1.0 - p) ** 2)
        else:  # nbinom
            n, p = shapes
            second = [[trigamma(1, k + n) - trigamma(1, n), 1.0 / p + 0.0 * k],
                      [1.0 / p + 0.0 * k, -n / (p * p) - k / ((1.0 - p) ** 2)]][a - 1][b - 1]
        return second, fa, fb
    if dist == "poisson":
        mu = shapes[0]
        second = -stats.poisson.pmf(j, mu) * (j / mu - 1.0)
    elif dist == "binom":
        n, p = shapes
        second = -n * stats.binom.pmf(j, n - 1, p) * (j / p - (n - 1.0 - j) / (1.0 - p))
    else:
        n, p = shapes
        second = fa * ((n - 1.0) / p - j / (1.0 - p))
    return second, fa, fb


def _quantile_or_entropy_second(dist: str, method: str, a: int, b: int, ans, shapes: tuple,
                                loc, scale):
    """``d2/da db`` of a quantile, ``x = loc + scale * y(q; shapes)`` (``x_qq = scale y_qq``,
    ``x_q,scale = y_q``; none in a shape: refused, as the tail's), or of the entropy
    (``h0_ss`` from the table, ``-1 / scale**2``)."""
    n = len(shapes)
    if dist in DISCRETE:
        if method == "entropy":
            _refuse(dist, method, "its parameters (a series: no closed form)")
        if n + 1 in (a, b):
            _refuse(dist, method, "its loc (an integer)")
        return np.zeros(np.shape(ans))
    if method == "entropy":
        if dist not in ENTROPY:
            _refuse(dist, method, "its parameters (no closed form)")
        if a == b == n + 2:
            return -1.0 / asarray(scale, float) ** 2
        if 1 <= a <= n and 1 <= b <= n:
            return ENTROPY[dist][1](*shapes)[a - 1][b - 1]
        return 0.0
    if dist == "lognorm" and 1 in (a, b):
        return _lognorm_quantile_second(method, a, b, ans, shapes[0], loc, scale)
    if 1 <= a <= n or 1 <= b <= n:
        _refuse(dist, method, "its shape parameters, twice (no closed form)")
    pair = sorted((a, b))
    if n + 1 in pair or pair == [n + 2, n + 2]:
        return np.zeros(np.shape(ans))
    y = (asarray(ans, float) - asarray(loc, float)) / asarray(scale, float)
    f0 = getattr(_stats(), dist).pdf(y, *shapes)
    if pair == [0, n + 2]:
        return (-1.0 if method == "isf" else 1.0) / f0
    dz, _ = CONTINUOUS[dist][0](y, *shapes)
    return -asarray(scale, float) * dz / (f0 * f0)


def _lognorm_quantile_second(method: str, a: int, b: int, ans, s, loc, scale):
    """lognorm's quantile ``x = loc + scale * exp(s w)``, ``w = ±ndtri(q)`` (``isf``: minus),
    in ``(q, s, loc, scale)`` with ``s`` in the pair: ``y_ss = w**2 y``, ``y_qs = w_q y (1 +
    s w)`` with ``w_q = ±1 / phi(w)``, and ``x_{s,scale} = y_s = w y``."""
    scale = asarray(scale, float)
    y = (asarray(ans, float) - asarray(loc, float)) / scale
    w = np.log(y) / s
    other = b if a == 1 else a
    if other == 1:
        return scale * w * w * y
    if other == 3:
        return w * y
    if other == 2:
        return np.zeros(np.shape(y))
    w_q = np.sqrt(2.0 * np.pi) * np.exp(0.5 * w * w) * (-1.0 if method == "isf" else 1.0)
    return scale * w_q * y * (1.0 + s * w)


def second_derivative(dist: str, method: str, a: int, b: int, ans, x, shapes: tuple, loc=0.0,
                      scale=1.0):
    """The elementwise ``d2/da db`` of ``<dist>.<method>(x, *shapes, loc, scale)`` (arguments
    numbered as in ``derivative``): from ``l0``'s second derivatives (the table above) for the
    log density; the density ``p (l_a l_b + l_ab)``; the cdf ``f0 (l0' z_a z_b + z_ab)``, the
    sf its negative, their logs ``F_ab / F - F_a F_b / F^2``."""
    if method in MOMENT_METHODS:
        return _moment(dist, method, a, b, shapes, scale)
    if method in QUANTILES or method == "entropy":
        return _quantile_or_entropy_second(dist, method, a, b, ans, shapes, loc, scale)
    frozen = getattr(_stats(), dist)
    if dist in DISCRETE:
        n = len(shapes)
        if a in (0, n + 1) or b in (0, n + 1):
            _refuse(dist, method, "its count k or its loc (integers)")
        k = asarray(x, float) - asarray(loc, float)
        second, fa, fb = _discrete_second(dist, method, a, b, k, shapes)
        where = {}
        x = k
    else:
        x, loc, scale = asarray(x, float), asarray(loc, float), asarray(scale, float)
        where = dict(loc=loc, scale=scale)
        if method in ("logpdf", "pdf"):
            second, fa, fb = _log_density_second(dist, a, b, x, shapes, loc, scale)
        else:
            second, fa, fb = _cdf_second(dist, a, b, x, shapes, loc, scale)
    if method in ("logpdf", "logpmf", "cdf"):
        return second
    if method in ("pdf", "pmf"):
        return asarray(ans) * (second + fa * fb)
    if method == "sf":
        return -second
    if method == "logcdf":
        inverse = np.exp(-frozen.logcdf(x, *shapes, **where))
        return second * inverse - fa * fb * inverse * inverse
    inverse = np.exp(-frozen.logsf(x, *shapes, **where))  # logsf: S = 1 - F
    return -second * inverse - fa * fb * inverse * inverse


def stats_partial_tangent(dg, tangents: tuple, g, dist: str, method: str, wrt: int, ans, x,
                          shapes: tuple, loc=0.0, scale=1.0):
    """The tangent of ``stats_partial(g, dist, method, wrt, ans, x, shapes, loc, scale)``
    (forward over reverse): ``dg`` times the first derivative, plus ``g`` times the second
    derivatives with each argument's tangent (``tangents``: of ``x``, of the shapes as a tuple,
    of ``loc`` and ``scale``), summed to argument ``wrt``'s shape."""
    from runtime.broadcast import unbroadcast

    arguments = (x, *shapes, loc, scale)
    dx, dshapes, dloc, dscale = (tuple(tangents) + (0.0, 0.0, 0.0, 0.0))[:4]
    dshapes = tuple(dshapes) if isinstance(dshapes, (tuple, list)) else (0.0,) * len(shapes)
    each = (dx, *dshapes, dloc, dscale)
    out = stats_partial(dg, dist, method, wrt, ans, x, shapes, loc, scale)
    if is_zero(g):
        return out
    for b, t in enumerate(each):
        if is_zero(t) or not np.any(t):
            continue
        term = asarray(g) * asarray(t) * second_derivative(dist, method, wrt, b, ans, x, shapes,
                                                           loc, scale)
        out = out + unbroadcast(term, arguments[wrt])
    return out


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
    if wrt == 0:  # (x may be a list: its gradient an array of its shape)
        return unbroadcast(-rows * pr, np.zeros(np.shape(x))).reshape(np.shape(x))
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


def _full_cov(dcov, d: int):
    """A covariance's tangent as the symmetric matrix SciPy reads."""
    dcov = asarray(dcov, float)
    if dcov.ndim == 0:
        return dcov * np.eye(d)
    if dcov.ndim == 1:
        return np.diag(dcov)
    return np.tril(dcov) + np.tril(dcov, -1).T


def mvn_partial_tangent(dg, tangents: tuple, g, method: str, wrt: int, ans, x, mean=None,
                        cov=1.0):
    """The tangent of ``mvn_partial(g, method, wrt, ans, x, mean, cov)`` (forward over
    reverse): with ``dr = dx - dmean`` and ``dP = -P dC P``, ``d(P r) = dP r + P dr``, so the
    partials ``-P r``, ``P r`` and ``(P r r^T P - P) / 2`` change by ``-d(P r)``, ``d(P r)``
    and ``(d(P r) (P r)^T + P r d(P r)^T - dP) / 2``; the weight ``g`` (times the density for
    ``pdf``) by ``dg`` (and the density's own tangent)."""
    from runtime.broadcast import unbroadcast

    out = mvn_partial(dg, method, wrt, ans, x, mean, cov)
    if is_zero(g):
        return out
    dx, dmean, dcov = (tuple(tangents) + (0.0, 0.0, 0.0))[:3]
    r, pr, precision = _mvn_parts(x, mean, cov)
    d = precision.shape[0]
    dr = np.zeros(np.shape(r))
    if not is_zero(dx):
        dr = dr + np.atleast_1d(asarray(dx, float))
    if not is_zero(dmean):
        dr = dr - asarray(dmean, float)
    dp = np.zeros((d, d)) if is_zero(dcov) else -precision @ _full_cov(dcov, d) @ precision
    dpr = r @ dp + dr @ precision  # (P symmetric: rows of d(P r))
    weight = asarray(g, float) * (asarray(ans) if method == "pdf" else 1.0)
    rows = np.reshape(weight, np.shape(pr)[:-1] + (1,))
    if method == "pdf":  # (the density's own tangent: ans times the log density's)
        dlog = mvn_tangent((dx, dmean, dcov), "logpdf", ans, x, mean, cov)
        out = out + mvn_partial(asarray(g, float) * asarray(ans) * dlog, "logpdf", wrt, ans, x,
                                mean, cov)
    if wrt == 0:
        return out + unbroadcast(-rows * dpr, np.zeros(np.shape(x))).reshape(np.shape(x))
    if wrt == 1:
        return out + unbroadcast(rows * dpr, np.zeros(np.shape(pr)[-1:])).reshape(np.shape(mean))
    w = np.reshape(weight, -1)
    p2, dp2 = np.reshape(pr, (-1, d)), np.reshape(dpr, (-1, d))
    gram = 0.5 * ((dp2 * w[:, None]).T @ p2 + (p2 * w[:, None]).T @ dp2 - np.sum(w) * dp)
    return out + _fold_cov(gram, cov)
