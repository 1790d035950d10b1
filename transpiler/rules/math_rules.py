"""Adjoints and tangents of the ``math`` module: Python floats in, Python floats out, no
broadcasting."""

import math

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, since, tangent

# --- trigonometric and hyperbolic ---

@adjoint(math.sin)
def adj_sin(ans, x):
    d[x] = d[ans] * math.cos(x)


@tangent(math.sin)
def tan_sin(ans, x):
    d[ans] = d[x] * math.cos(x)


@adjoint(math.cos)
def adj_cos(ans, x):
    d[x] = -d[ans] * math.sin(x)


@tangent(math.cos)
def tan_cos(ans, x):
    d[ans] = -d[x] * math.sin(x)


@adjoint(math.tan)
def adj_tan(ans, x):
    d[x] = d[ans] * (1.0 + ans * ans)


@tangent(math.tan)
def tan_tan(ans, x):
    d[ans] = d[x] * (1.0 + ans * ans)


@adjoint(math.atan)
def adj_atan(ans, x):
    d[x] = d[ans] / (1.0 + x * x)


@tangent(math.atan)
def tan_atan(ans, x):
    d[ans] = d[x] / (1.0 + x * x)


@adjoint(math.asin)
def adj_asin(ans, x):
    d[x] = d[ans] / math.sqrt((1.0 - x) * (1.0 + x))


@tangent(math.asin)
def tan_asin(ans, x):
    d[ans] = d[x] / math.sqrt((1.0 - x) * (1.0 + x))


@adjoint(math.acos)
def adj_acos(ans, x):
    d[x] = -d[ans] / math.sqrt((1.0 - x) * (1.0 + x))


@tangent(math.acos)
def tan_acos(ans, x):
    d[ans] = -d[x] / math.sqrt((1.0 - x) * (1.0 + x))


@adjoint(math.atan2)
def adj_atan2(ans, y, x):
    d[y] = d[ans] * x / (x * x + y * y)
    d[x] = -d[ans] * y / (x * x + y * y)


@tangent(math.atan2)
def tan_atan2(ans, y, x):
    d[ans] = d[y] * x / (x * x + y * y)
    d[ans] = -d[x] * y / (x * x + y * y)


@adjoint(math.hypot)  # hypot(*coordinates), up to six (absent ones are None: no partial)
def adj_hypot(ans, x1, x2=None, x3=None, x4=None, x5=None, x6=None):
    d[x1] = d[ans] * x1 / ans
    d[x2] = d[ans] * x2 / ans
    d[x3] = d[ans] * x3 / ans
    d[x4] = d[ans] * x4 / ans
    d[x5] = d[ans] * x5 / ans
    d[x6] = d[ans] * x6 / ans


@tangent(math.hypot)
def tan_hypot(ans, x1, x2=None, x3=None, x4=None, x5=None, x6=None):
    d[ans] = d[x1] * x1 / ans
    d[ans] = d[x2] * x2 / ans
    d[ans] = d[x3] * x3 / ans
    d[ans] = d[x4] * x4 / ans
    d[ans] = d[x5] * x5 / ans
    d[ans] = d[x6] * x6 / ans


@adjoint(math.sinh)
def adj_sinh(ans, x):
    d[x] = d[ans] * math.cosh(x)


@tangent(math.sinh)
def tan_sinh(ans, x):
    d[ans] = d[x] * math.cosh(x)


@adjoint(math.cosh)
def adj_cosh(ans, x):
    d[x] = d[ans] * math.sinh(x)


@tangent(math.cosh)
def tan_cosh(ans, x):
    d[ans] = d[x] * math.sinh(x)


@adjoint(math.tanh)
def adj_tanh(ans, x):
    d[x] = d[ans] * (1.0 - ans * ans)


@tangent(math.tanh)
def tan_tanh(ans, x):
    d[ans] = d[x] * (1.0 - ans * ans)


@adjoint(math.asinh)
def adj_asinh(ans, x):
    d[x] = d[ans] / math.hypot(x, 1.0)  # 1 / sqrt(x^2 + 1), without overflow


@tangent(math.asinh)
def tan_asinh(ans, x):
    d[ans] = d[x] / math.hypot(x, 1.0)


@adjoint(math.acosh)
def adj_acosh(ans, x):
    d[x] = d[ans] / math.sqrt((x - 1.0) * (x + 1.0))


@tangent(math.acosh)
def tan_acosh(ans, x):
    d[ans] = d[x] / math.sqrt((x - 1.0) * (x + 1.0))


@adjoint(math.atanh)
def adj_atanh(ans, x):
    d[x] = d[ans] / ((1.0 - x) * (1.0 + x))


@tangent(math.atanh)
def tan_atanh(ans, x):
    d[ans] = d[x] / ((1.0 - x) * (1.0 + x))


@adjoint(math.degrees)
def adj_degrees(ans, x):
    d[x] = d[ans] * (180.0 / math.pi)


@tangent(math.degrees)
def tan_degrees(ans, x):
    d[ans] = d[x] * (180.0 / math.pi)


@adjoint(math.radians)
def adj_radians(ans, x):
    d[x] = d[ans] * (math.pi / 180.0)


@tangent(math.radians)
def tan_radians(ans, x):
    d[ans] = d[x] * (math.pi / 180.0)


# --- exponentials and logarithms ---

@adjoint(math.exp)
def adj_exp(ans, x):
    d[x] = d[ans] * ans


@tangent(math.exp)
def tan_exp(ans, x):
    d[ans] = d[x] * ans


@adjoint(math.expm1)
def adj_expm1(ans, x):
    d[x] = d[ans] * (ans + 1.0)


@tangent(math.expm1)
def tan_expm1(ans, x):
    d[ans] = d[x] * (ans + 1.0)


@adjoint(since(math, "exp2", "Python 3.11"))
def adj_exp2(ans, x):
    d[x] = d[ans] * ans * 0.6931471805599453  # ln 2


@tangent(since(math, "exp2", "Python 3.11"))
def tan_exp2(ans, x):
    d[ans] = d[x] * ans * 0.6931471805599453  # ln 2


@adjoint(math.log)
def adj_log(ans, x, base=None):
    if base is None:
        d[x] = d[ans] / x
    else:
        d[x] = d[ans] / (x * math.log(base))
        d[base] = -d[ans] * ans / (base * math.log(base))


@tangent(math.log)
def tan_log(ans, x, base=None):
    if base is None:
        d[ans] = d[x] / x
    else:
        d[ans] = d[x] / (x * math.log(base))
        d[ans] = -d[base] * ans / (base * math.log(base))


@adjoint(math.log1p)
def adj_log1p(ans, x):
    d[x] = d[ans] / (1.0 + x)


@tangent(math.log1p)
def tan_log1p(ans, x):
    d[ans] = d[x] / (1.0 + x)


@adjoint(math.log2)
def adj_log2(ans, x):
    d[x] = d[ans] / (x * 0.6931471805599453)  # ln 2


@tangent(math.log2)
def tan_log2(ans, x):
    d[ans] = d[x] / (x * 0.6931471805599453)  # ln 2


@adjoint(math.log10)
def adj_log10(ans, x):
    d[x] = d[ans] / (x * 2.302585092994046)  # ln 10


@tangent(math.log10)
def tan_log10(ans, x):
    d[ans] = d[x] / (x * 2.302585092994046)  # ln 10


@adjoint(math.sqrt)
def adj_sqrt(ans, x):
    d[x] = d[ans] * 0.5 / ans


@tangent(math.sqrt)
def tan_sqrt(ans, x):
    d[ans] = d[x] * 0.5 / ans


@adjoint(since(math, "cbrt", "Python 3.11"))
def adj_cbrt(ans, x):
    d[x] = d[ans] / (3.0 * ans * ans)


@tangent(since(math, "cbrt", "Python 3.11"))
def tan_cbrt(ans, x):
    d[ans] = d[x] / (3.0 * ans * ans)


# --- gamma and error functions ---

@adjoint(math.lgamma)  # log|Gamma(x)|
def adj_lgamma(ans, x):
    d[x] = d[ans] * rt.digamma(x)


@tangent(math.lgamma)
def tan_lgamma(ans, x):
    d[ans] = d[x] * rt.digamma(x)


@adjoint(math.gamma)
def adj_gamma(ans, x):
    d[x] = d[ans] * ans * rt.digamma(x)


@tangent(math.gamma)
def tan_gamma(ans, x):
    d[ans] = d[x] * ans * rt.digamma(x)


@adjoint(math.erf)
def adj_erf(ans, x):
    d[x] = d[ans] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@tangent(math.erf)
def tan_erf(ans, x):
    d[ans] = d[x] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc)
def adj_erfc(ans, x):
    d[x] = -d[ans] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@tangent(math.erfc)
def tan_erfc(ans, x):
    d[ans] = -d[x] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


# --- other ---

@adjoint(math.fabs)
def adj_fabs(ans, x):
    d[x] = d[ans] * (math.copysign(1.0, x) * (x != 0))


@tangent(math.fabs)
def tan_fabs(ans, x):
    d[ans] = d[x] * (math.copysign(1.0, x) * (x != 0))


@adjoint(math.copysign)  # |x| with y's sign: no gradient in y
def adj_copysign(ans, x, y):
    d[x] = d[ans] * ((math.copysign(1.0, x) * (x != 0)) * math.copysign(1.0, ans))
    d[y] = 0.0


@tangent(math.copysign)
def tan_copysign(ans, x, y):
    d[ans] = d[x] * ((math.copysign(1.0, x) * (x != 0)) * math.copysign(1.0, ans))
    # y only sets the sign: no term


@adjoint(math.fmod, math.remainder)  # x - n * y with an integer n, constant between jumps
def adj_fmod(ans, x, y):
    d[x] = d[ans]
    d[y] = -d[ans] * round((x - ans) / y)


@tangent(math.fmod, math.remainder)
def tan_fmod(ans, x, y):
    d[ans] = d[x]
    d[ans] = -d[y] * round((x - ans) / y)


@adjoint(math.ldexp)  # x * 2**i with integer i
def adj_ldexp(ans, x, i):
    d[x] = math.ldexp(d[ans], i)


@tangent(math.ldexp)
def tan_ldexp(ans, x, i):
    d[ans] = math.ldexp(d[x], i)


@adjoint(math.frexp)  # (mantissa, exponent) with mantissa = x * 2**-exponent
def adj_frexp(ans, x):
    d[x] = math.ldexp(d[ans][0], -ans[1])


@tangent(math.frexp)
def tan_frexp(ans, x):
    d[ans] = (math.ldexp(d[x], -ans[1]), 0.0)  # the exponent is piecewise constant


@adjoint(math.modf)  # (fractional part, integral part); the integral part is piecewise constant
def adj_modf(ans, x):
    d[x] = d[ans][0]


@tangent(math.modf)
def tan_modf(ans, x):
    d[ans] = (d[x], 0.0)


# --- sequences ---

@adjoint(math.fsum)
def adj_fsum(ans, seq):
    d[seq] = rt.unsum(d[ans], seq)


@tangent(math.fsum)
def tan_fsum(ans, seq):
    d[ans] = math.fsum(d[seq])


@adjoint(math.prod)
def adj_prod(ans, iterable, *, start=1):
    d[iterable] = rt.math_prod_grad(d[ans], iterable, start)
    d[start] = d[ans] * math.prod(iterable)


@tangent(math.prod)
def tan_prod(ans, iterable, *, start=1):
    # the weight of each item's tangent: the product of every other factor
    d[ans] = np.dot(rt.math_prod_grad(1.0, iterable, start), d[iterable])
    d[ans] = d[start] * math.prod(iterable)


@adjoint(math.dist)
def adj_dist(ans, p, q):
    d[p] = rt.dist_grad(d[ans], p, q, ans)
    d[q] = rt.dist_grad(d[ans], q, p, ans)


@tangent(math.dist)
def tan_dist(ans, p, q):
    d[ans] = float(np.dot(rt.dist_grad(1.0, p, q, ans), d[p]))  # a float, like ans
    d[ans] = float(np.dot(rt.dist_grad(1.0, q, p, ans), d[q]))
