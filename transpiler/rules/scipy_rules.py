"""Adjoints and tangents of ``scipy.special``, registered only when SciPy is importable.

Derivatives are written with other ``scipy.special`` functions (DLMF chapters 5, 7, 10, 25).
Parameter names follow SciPy's documentation (ufuncs take their arguments by position).
Not covered: ``zeta`` (no SciPy function gives its derivative in the exponent ``x``, so a rule
could only give a silently zero gradient there) and ``logsumexp(..., return_sign=...)`` (the
rule does not accept the argument, so such a call is refused when it is compiled).
"""

import math

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent

try:
    import scipy.special as special
except ImportError:  # no SciPy: no rules (and the spec module defines no specs)
    special = None

if special is not None:

    # --- logistic ---

    @adjoint(special.expit)
    def adj_expit(ans, x):
        d[x] = d[ans] * ans * (1.0 - ans)

    @tangent(special.expit)
    def tan_expit(ans, x):
        d[ans] = d[x] * ans * (1.0 - ans)

    @adjoint(special.logit)
    def adj_logit(ans, x):
        d[x] = d[ans] / (x * (1.0 - x))

    @tangent(special.logit)
    def tan_logit(ans, x):
        d[ans] = d[x] / (x * (1.0 - x))

    @adjoint(special.log_expit)
    def adj_log_expit(ans, x):
        d[x] = d[ans] * special.expit(-x)

    @tangent(special.log_expit)
    def tan_log_expit(ans, x):
        d[ans] = d[x] * special.expit(-x)

    # --- error functions and the normal distribution ---

    @adjoint(special.erf)
    def adj_erf(ans, x):
        d[x] = d[ans] * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)

    @tangent(special.erf)
    def tan_erf(ans, x):
        d[ans] = d[x] * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)

    @adjoint(special.erfc)
    def adj_erfc(ans, x):
        d[x] = -d[ans] * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)

    @tangent(special.erfc)
    def tan_erfc(ans, x):
        d[ans] = -d[x] * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)

    @adjoint(special.erfinv)
    def adj_erfinv(ans, x):
        d[x] = d[ans] * (math.sqrt(math.pi) / 2.0) * np.exp(ans * ans)

    @tangent(special.erfinv)
    def tan_erfinv(ans, x):
        d[ans] = d[x] * (math.sqrt(math.pi) / 2.0) * np.exp(ans * ans)

    @adjoint(special.erfcinv)
    def adj_erfcinv(ans, x):
        d[x] = -d[ans] * (math.sqrt(math.pi) / 2.0) * np.exp(ans * ans)

    @tangent(special.erfcinv)
    def tan_erfcinv(ans, x):
        d[ans] = -d[x] * (math.sqrt(math.pi) / 2.0) * np.exp(ans * ans)

    @adjoint(special.erfcx)
    def adj_erfcx(ans, x):
        # erfcx(x) = exp(x^2) erfc(x)
        d[x] = d[ans] * (2.0 * x * ans - 2.0 / math.sqrt(math.pi))

    @tangent(special.erfcx)
    def tan_erfcx(ans, x):
        d[ans] = d[x] * (2.0 * x * ans - 2.0 / math.sqrt(math.pi))

    @adjoint(special.ndtr)
    def adj_ndtr(ans, x):
        d[x] = d[ans] * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)

    @tangent(special.ndtr)
    def tan_ndtr(ans, x):
        d[ans] = d[x] * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)

    @adjoint(special.ndtri)
    def adj_ndtri(ans, x):
        d[x] = d[ans] * math.sqrt(2.0 * math.pi) * np.exp(0.5 * ans * ans)

    @tangent(special.ndtri)
    def tan_ndtri(ans, x):
        d[ans] = d[x] * math.sqrt(2.0 * math.pi) * np.exp(0.5 * ans * ans)

    @adjoint(special.log_ndtr)
    def adj_log_ndtr(ans, x):
        # pdf(x) / cdf(x), formed in the log domain so it stays finite far in the left tail
        d[x] = d[ans] * np.exp(-0.5 * x * x - ans) / math.sqrt(2.0 * math.pi)

    @tangent(special.log_ndtr)
    def tan_log_ndtr(ans, x):
        d[ans] = d[x] * np.exp(-0.5 * x * x - ans) / math.sqrt(2.0 * math.pi)

    # --- gamma and beta functions ---

    @adjoint(special.gamma)
    def adj_gamma(ans, x):
        d[x] = d[ans] * ans * special.digamma(x)

    @tangent(special.gamma)
    def tan_gamma(ans, x):
        d[ans] = d[x] * ans * special.digamma(x)

    @adjoint(special.gammaln, special.loggamma)
    def adj_gammaln(ans, x):
        # log|Gamma(x)| for real x; d/dx = digamma(x) on either side of the poles
        d[x] = d[ans] * special.digamma(x)

    @tangent(special.gammaln, special.loggamma)
    def tan_gammaln(ans, x):
        d[ans] = d[x] * special.digamma(x)

    @adjoint(special.digamma)  # special.psi is the same ufunc
    def adj_digamma(ans, x):
        # trigamma(x) = zeta(2, x) (polygamma(1, x) would turn float32 into float64)
        d[x] = d[ans] * special.zeta(2.0, x)

    @tangent(special.digamma)
    def tan_digamma(ans, x):
        d[ans] = d[x] * special.zeta(2.0, x)

    @adjoint(special.polygamma)
    def adj_polygamma(ans, n, x):
        # n is an integer order (polygamma is nan between integers): it gets no gradient
        d[x] = rt.unbroadcast(d[ans] * special.polygamma(n + 1, x), x)

    @tangent(special.polygamma)
    def tan_polygamma(ans, n, x):
        d[ans] = d[x] * special.polygamma(n + 1, x)  # n broadcasts with x

    @adjoint(special.beta)
    def adj_beta(ans, a, b):
        d[a] = rt.unbroadcast(d[ans] * ans * (special.digamma(a) - special.digamma(a + b)), a)
        d[b] = rt.unbroadcast(d[ans] * ans * (special.digamma(b) - special.digamma(a + b)), b)

    @tangent(special.beta)
    def tan_beta(ans, a, b):
        d[ans] = d[a] * ans * (special.digamma(a) - special.digamma(a + b))
        d[ans] = d[b] * ans * (special.digamma(b) - special.digamma(a + b))

    @adjoint(special.betaln)
    def adj_betaln(ans, a, b):
        d[a] = rt.unbroadcast(d[ans] * (special.digamma(a) - special.digamma(a + b)), a)
        d[b] = rt.unbroadcast(d[ans] * (special.digamma(b) - special.digamma(a + b)), b)

    @tangent(special.betaln)
    def tan_betaln(ans, a, b):
        d[ans] = d[a] * (special.digamma(a) - special.digamma(a + b))
        d[ans] = d[b] * (special.digamma(b) - special.digamma(a + b))

    # --- logarithms, entropies ---

    @adjoint(special.xlogy)
    def adj_xlogy(ans, x, y):
        d[x] = rt.unbroadcast(d[ans] * np.log(y), x)
        d[y] = rt.unbroadcast(d[ans] * x / y, y)

    @tangent(special.xlogy)
    def tan_xlogy(ans, x, y):
        d[ans] = d[x] * np.log(y)
        d[ans] = d[y] * x / y

    @adjoint(special.xlog1py)
    def adj_xlog1py(ans, x, y):
        d[x] = rt.unbroadcast(d[ans] * np.log1p(y), x)
        d[y] = rt.unbroadcast(d[ans] * x / (1.0 + y), y)

    @tangent(special.xlog1py)
    def tan_xlog1py(ans, x, y):
        d[ans] = d[x] * np.log1p(y)
        d[ans] = d[y] * x / (1.0 + y)

    @adjoint(special.entr)
    def adj_entr(ans, x):
        d[x] = -d[ans] * (np.log(x) + 1.0)

    @tangent(special.entr)
    def tan_entr(ans, x):
        d[ans] = -d[x] * (np.log(x) + 1.0)

    @adjoint(special.rel_entr)
    def adj_rel_entr(ans, x, y):
        d[x] = rt.unbroadcast(d[ans] * (np.log(x / y) + 1.0), x)
        d[y] = rt.unbroadcast(-d[ans] * x / y, y)

    @tangent(special.rel_entr)
    def tan_rel_entr(ans, x, y):
        d[ans] = d[x] * (np.log(x / y) + 1.0)
        d[ans] = -d[y] * x / y

    @adjoint(special.kl_div)
    def adj_kl_div(ans, x, y):
        d[x] = rt.unbroadcast(d[ans] * np.log(x / y), x)
        d[y] = rt.unbroadcast(d[ans] * (1.0 - x / y), y)

    @tangent(special.kl_div)
    def tan_kl_div(ans, x, y):
        d[ans] = d[x] * np.log(x / y)
        d[ans] = d[y] * (1.0 - x / y)

    @adjoint(special.logsumexp)
    def adj_logsumexp(ans, a, axis=None, b=None, keepdims=False):
        if b is None:
            d[a] = rt.unreduce(d[ans], a, axis, keepdims) * np.exp(
                a - rt.unreduce(ans, a, axis, keepdims))
        else:
            # a and b broadcast together: the weights exp(a - ans) live on their common shape
            ab = np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b)))
            w = np.exp(ab - rt.unreduce(ans, ab, axis, keepdims)) * rt.unreduce(
                d[ans], ab, axis, keepdims)
            d[a] = rt.unbroadcast(w * b, a)
            d[b] = rt.unbroadcast(w, b)

    @tangent(special.logsumexp)
    def tan_logsumexp(ans, a, axis=None, b=None, keepdims=False):
        # the weights exp(a - ans) summed over axis, on the common shape of a and b
        if b is None:
            w = np.exp(a - rt.unreduce(ans, a, axis, keepdims))
            d[ans] = rt.reduce_like(w * d[a], ans, axis, keepdims)
        else:
            ab = np.broadcast_to(a, np.broadcast_shapes(np.shape(a), np.shape(b)))
            w = np.exp(ab - rt.unreduce(ans, ab, axis, keepdims))
            d[ans] = rt.reduce_like(w * b * d[a], ans, axis, keepdims)
            d[ans] = rt.reduce_like(w * d[b], ans, axis, keepdims)

    @adjoint(special.softmax)
    def adj_softmax(ans, x, axis=None):
        d[x] = ans * (d[ans] - np.sum(d[ans] * ans, axis=axis, keepdims=True))

    @tangent(special.softmax)
    def tan_softmax(ans, x, axis=None):
        d[ans] = ans * (d[x] - np.sum(d[x] * ans, axis=axis, keepdims=True))

    @adjoint(special.log_softmax)
    def adj_log_softmax(ans, x, axis=None):
        d[x] = d[ans] - np.exp(ans) * np.sum(d[ans], axis=axis, keepdims=True)

    @tangent(special.log_softmax)
    def tan_log_softmax(ans, x, axis=None):
        d[ans] = d[x] - np.sum(np.exp(ans) * d[x], axis=axis, keepdims=True)

    # --- robust losses: huber(delta, r), pseudo_huber(delta, r) ---

    @adjoint(special.huber)
    def adj_huber(ans, delta, r):
        d[delta] = rt.unbroadcast(
            d[ans] * np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta), delta)
        d[r] = rt.unbroadcast(d[ans] * np.clip(r, -delta, delta), r)

    @tangent(special.huber)
    def tan_huber(ans, delta, r):
        d[ans] = d[delta] * np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta)
        d[ans] = d[r] * np.clip(r, -delta, delta)

    @adjoint(special.pseudo_huber)
    def adj_pseudo_huber(ans, delta, r):
        # ans = delta^2 (sqrt(1 + (r/delta)^2) - 1) = delta (h - delta), h = hypot(delta, r)
        d[delta] = rt.unbroadcast(
            d[ans] * ((2.0 * delta * delta + r * r) / np.hypot(delta, r) - 2.0 * delta), delta)
        d[r] = rt.unbroadcast(d[ans] * delta * r / np.hypot(delta, r), r)

    @tangent(special.pseudo_huber)
    def tan_pseudo_huber(ans, delta, r):
        d[ans] = d[delta] * ((2.0 * delta * delta + r * r) / np.hypot(delta, r) - 2.0 * delta)
        d[ans] = d[r] * delta * r / np.hypot(delta, r)

    # --- Bessel functions: I' = (I_{n-1} + I_{n+1}) / 2, J' = (J_{n-1} - J_{n+1}) / 2, ... ---

    @adjoint(special.i0)
    def adj_i0(ans, x):
        d[x] = d[ans] * special.i1(x)

    @tangent(special.i0)
    def tan_i0(ans, x):
        d[ans] = d[x] * special.i1(x)

    @adjoint(special.i1)
    def adj_i1(ans, x):
        d[x] = d[ans] * 0.5 * (special.i0(x) + special.iv(2.0, x))

    @tangent(special.i1)
    def tan_i1(ans, x):
        d[ans] = d[x] * 0.5 * (special.i0(x) + special.iv(2.0, x))

    @adjoint(special.i0e)
    def adj_i0e(ans, x):
        # i0e(x) = exp(-|x|) i0(x)
        d[x] = d[ans] * (special.i1e(x) - np.sign(x) * ans)

    @tangent(special.i0e)
    def tan_i0e(ans, x):
        d[ans] = d[x] * (special.i1e(x) - np.sign(x) * ans)

    @adjoint(special.i1e)
    def adj_i1e(ans, x):
        d[x] = d[ans] * (0.5 * (special.i0e(x) + special.ive(2.0, x)) - np.sign(x) * ans)

    @tangent(special.i1e)
    def tan_i1e(ans, x):
        d[ans] = d[x] * (0.5 * (special.i0e(x) + special.ive(2.0, x)) - np.sign(x) * ans)

    @adjoint(special.j0)
    def adj_j0(ans, x):
        d[x] = -d[ans] * special.j1(x)

    @tangent(special.j0)
    def tan_j0(ans, x):
        d[ans] = -d[x] * special.j1(x)

    @adjoint(special.j1)
    def adj_j1(ans, x):
        d[x] = d[ans] * 0.5 * (special.j0(x) - special.jv(2.0, x))

    @tangent(special.j1)
    def tan_j1(ans, x):
        d[ans] = d[x] * 0.5 * (special.j0(x) - special.jv(2.0, x))

    @adjoint(special.y0)
    def adj_y0(ans, x):
        d[x] = -d[ans] * special.y1(x)

    @tangent(special.y0)
    def tan_y0(ans, x):
        d[ans] = -d[x] * special.y1(x)

    @adjoint(special.y1)
    def adj_y1(ans, x):
        d[x] = d[ans] * 0.5 * (special.y0(x) - special.yv(2.0, x))

    @tangent(special.y1)
    def tan_y1(ans, x):
        d[ans] = d[x] * 0.5 * (special.y0(x) - special.yv(2.0, x))

    @adjoint(special.k0)
    def adj_k0(ans, x):
        d[x] = -d[ans] * special.k1(x)

    @tangent(special.k0)
    def tan_k0(ans, x):
        d[ans] = -d[x] * special.k1(x)

    @adjoint(special.k1)
    def adj_k1(ans, x):
        d[x] = -d[ans] * 0.5 * (special.k0(x) + special.kv(2.0, x))

    @tangent(special.k1)
    def tan_k1(ans, x):
        d[ans] = -d[x] * 0.5 * (special.k0(x) + special.kv(2.0, x))

    # --- elementary functions ---

    @adjoint(special.expm1)
    def adj_expm1(ans, x):
        d[x] = d[ans] * (ans + 1.0)

    @tangent(special.expm1)
    def tan_expm1(ans, x):
        d[ans] = d[x] * (ans + 1.0)

    @adjoint(special.log1p)
    def adj_log1p(ans, x):
        d[x] = d[ans] / (1.0 + x)

    @tangent(special.log1p)
    def tan_log1p(ans, x):
        d[ans] = d[x] / (1.0 + x)

    @adjoint(special.exp2)
    def adj_exp2(ans, x):
        d[x] = d[ans] * ans * math.log(2.0)

    @tangent(special.exp2)
    def tan_exp2(ans, x):
        d[ans] = d[x] * ans * math.log(2.0)

    @adjoint(special.exp10)
    def adj_exp10(ans, x):
        d[x] = d[ans] * ans * math.log(10.0)

    @tangent(special.exp10)
    def tan_exp10(ans, x):
        d[ans] = d[x] * ans * math.log(10.0)

    @adjoint(special.cbrt)
    def adj_cbrt(ans, x):
        d[x] = d[ans] / (3.0 * ans * ans)

    @tangent(special.cbrt)
    def tan_cbrt(ans, x):
        d[ans] = d[x] / (3.0 * ans * ans)

    @adjoint(special.sindg)
    def adj_sindg(ans, x):
        d[x] = d[ans] * (math.pi / 180.0) * special.cosdg(x)

    @tangent(special.sindg)
    def tan_sindg(ans, x):
        d[ans] = d[x] * (math.pi / 180.0) * special.cosdg(x)

    @adjoint(special.cosdg)
    def adj_cosdg(ans, x):
        d[x] = -d[ans] * (math.pi / 180.0) * special.sindg(x)

    @tangent(special.cosdg)
    def tan_cosdg(ans, x):
        d[ans] = -d[x] * (math.pi / 180.0) * special.sindg(x)

    # --- Box-Cox transforms ---

    @adjoint(special.boxcox)
    def adj_boxcox(ans, x, lmbda):
        d[x] = rt.unbroadcast(d[ans] * x ** (lmbda - 1.0), x)
        # ans = log(x) expm1(t) / t with t = lmbda log(x), so d/dlmbda = log(x)^2 h(t) with
        # h(t) = (t e^t - expm1(t)) / t^2; near t = 0 (where that cancels) its Taylor series
        log_x = np.log(x)
        t = lmbda * log_x
        small = np.abs(t) < 1e-3
        h = np.where(small, 0.5 + t * (1.0 / 3.0 + t * (1.0 / 8.0 + t / 30.0)),
                     (t * np.exp(t) - np.expm1(t)) / np.where(small, 1.0, t * t))
        d[lmbda] = rt.unbroadcast(d[ans] * log_x * log_x * h, lmbda)

    @tangent(special.boxcox)
    def tan_boxcox(ans, x, lmbda):
        d[ans] = d[x] * x ** (lmbda - 1.0)
        # d/dlmbda = log(x)^2 h(t), t = lmbda log(x), as in the adjoint
        log_x = np.log(x)
        t = lmbda * log_x
        small = np.abs(t) < 1e-3
        h = np.where(small, 0.5 + t * (1.0 / 3.0 + t * (1.0 / 8.0 + t / 30.0)),
                     (t * np.exp(t) - np.expm1(t)) / np.where(small, 1.0, t * t))
        d[ans] = d[lmbda] * log_x * log_x * h

    @adjoint(special.inv_boxcox)
    def adj_inv_boxcox(ans, y, lmbda):
        d[y] = rt.unbroadcast(d[ans] * ans / (1.0 + lmbda * y), y)
        # ans = exp(y q(v)) with v = lmbda y, q(v) = log1p(v) / v, so d/dlmbda = ans y^2 q'(v)
        # with q'(v) = (v / (1 + v) - log1p(v)) / v^2; near v = 0 its Taylor series
        v = lmbda * y
        small = np.abs(v) < 1e-3
        dq = np.where(small, -0.5 + v * (2.0 / 3.0 + v * (-0.75 + v * (0.8 - v * 5.0 / 6.0))),
                      (v / (1.0 + v) - np.log1p(v)) / np.where(small, 1.0, v * v))
        d[lmbda] = rt.unbroadcast(d[ans] * ans * y * y * dq, lmbda)

    @tangent(special.inv_boxcox)
    def tan_inv_boxcox(ans, y, lmbda):
        d[ans] = d[y] * ans / (1.0 + lmbda * y)
        # d/dlmbda = ans y^2 q'(v), v = lmbda y, as in the adjoint
        v = lmbda * y
        small = np.abs(v) < 1e-3
        dq = np.where(small, -0.5 + v * (2.0 / 3.0 + v * (-0.75 + v * (0.8 - v * 5.0 / 6.0))),
                      (v / (1.0 + v) - np.log1p(v)) / np.where(small, 1.0, v * v))
        d[ans] = d[lmbda] * ans * y * y * dq
