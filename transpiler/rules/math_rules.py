"""Adjoints of the ``math`` module: Python floats in, Python floats out, no broadcasting."""

import math

from transpiler.rules.registry import adjoint, d

# --- trigonometric and hyperbolic ---

@adjoint(math.sin)
def adj_sin(ans, x):
    d[x] = d[ans] * math.cos(x)


@adjoint(math.cos)
def adj_cos(ans, x):
    d[x] = -d[ans] * math.sin(x)


@adjoint(math.tan)
def adj_tan(ans, x):
    d[x] = d[ans] * (1.0 + ans * ans)


@adjoint(math.atan)
def adj_atan(ans, x):
    d[x] = d[ans] / (1.0 + x * x)


@adjoint(math.atan2)
def adj_atan2(ans, y, x):
    d[y] = d[ans] * x / (x * x + y * y)
    d[x] = -d[ans] * y / (x * x + y * y)


@adjoint(math.hypot)
def adj_hypot(ans, x, y):
    d[x] = d[ans] * x / ans
    d[y] = d[ans] * y / ans


@adjoint(math.sinh)
def adj_sinh(ans, x):
    d[x] = d[ans] * math.cosh(x)


@adjoint(math.cosh)
def adj_cosh(ans, x):
    d[x] = d[ans] * math.sinh(x)


@adjoint(math.tanh)
def adj_tanh(ans, x):
    d[x] = d[ans] * (1.0 - ans * ans)


# --- exponentials and logarithms ---

@adjoint(math.exp)
def adj_exp(ans, x):
    d[x] = d[ans] * ans


@adjoint(math.expm1)
def adj_expm1(ans, x):
    d[x] = d[ans] * (ans + 1.0)


@adjoint(math.log)
def adj_log(ans, x, base=None):
    if base is None:
        d[x] = d[ans] / x
    else:
        d[x] = d[ans] / (x * math.log(base))
        d[base] = -d[ans] * ans / (base * math.log(base))


@adjoint(math.log1p)
def adj_log1p(ans, x):
    d[x] = d[ans] / (1.0 + x)


@adjoint(math.sqrt)
def adj_sqrt(ans, x):
    d[x] = d[ans] * 0.5 / ans


# --- other ---

@adjoint(math.fabs)
def adj_fabs(ans, x):
    d[x] = d[ans] * ((x > 0) - (x < 0))


@adjoint(math.erf)
def adj_erf(ans, x):
    d[x] = d[ans] * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)
