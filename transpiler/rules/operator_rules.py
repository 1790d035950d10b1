"""Adjoint and tangent rules of Python's arithmetic operators (and the NumPy ufuncs that are the
same thing)."""

import math

import gast
import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent

# --- binary operators ---

@adjoint(gast.Add, np.add)
def adj_add(ans, x, y):
    d[x] = rt.unbroadcast(d[ans], x)
    d[y] = rt.unbroadcast(d[ans], y)


@tangent(gast.Add, np.add)
def tan_add(ans, x, y):
    d[ans] = rt.broadcast_like(d[x], ans)
    d[ans] = rt.broadcast_like(d[y], ans)


@adjoint(gast.Sub, np.subtract)
def adj_sub(ans, x, y):
    d[x] = rt.unbroadcast(d[ans], x)
    d[y] = rt.unbroadcast(-d[ans], y)


@tangent(gast.Sub, np.subtract)
def tan_sub(ans, x, y):
    d[ans] = rt.broadcast_like(d[x], ans)
    d[ans] = rt.broadcast_like(-d[y], ans)


@adjoint(gast.Mult, np.multiply)
def adj_mul(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] * y, x)
    d[y] = rt.unbroadcast(d[ans] * x, y)


@tangent(gast.Mult, np.multiply)
def tan_mul(ans, x, y):
    d[ans] = d[x] * y
    d[ans] = x * d[y]


@adjoint(gast.Div, np.divide)
def adj_div(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] / y, x)
    d[y] = rt.unbroadcast(-d[ans] * ans / y, y)


@tangent(gast.Div, np.divide)
def tan_div(ans, x, y):
    d[ans] = d[x] / y
    d[ans] = -d[y] * ans / y


@adjoint(gast.Pow, np.power, math.pow, pow)
def adj_pow(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] * rt.pow_slope(x, y), x)  # y * x ** (y - 1) for a constant y
    d[y] = rt.unbroadcast(d[ans] * ans * np.log(np.where(x == 0, 1.0, x)), y)


@tangent(gast.Pow, np.power, math.pow, pow)
def tan_pow(ans, x, y):
    d[ans] = d[x] * rt.pow_slope(x, y)
    # astype: the log of a Python-float base is a NumPy float64, which would promote ans
    d[ans] = d[y] * ans * np.log(np.where(x == 0, 1.0, x)).astype(np.result_type(ans))


@adjoint(gast.MatMult, np.matmul)
def adj_matmul(ans, x, y):
    d[x] = rt.matmul_adjoint_a(d[ans], x, y)
    d[y] = rt.matmul_adjoint_b(d[ans], x, y)


@tangent(gast.MatMult, np.matmul)
def tan_matmul(ans, x, y):
    d[ans] = d[x] @ y
    d[ans] = x @ d[y]


# --- unary operators ---

@adjoint(gast.USub, np.negative)
def adj_neg(ans, x):
    d[x] = -d[ans]


@tangent(gast.USub, np.negative)
def tan_neg(ans, x):
    d[ans] = -d[x]


@adjoint(gast.UAdd, np.positive)
def adj_pos(ans, x):
    d[x] = d[ans]


@tangent(gast.UAdd, np.positive)
def tan_pos(ans, x):
    d[ans] = d[x]
