"""Adjoints of Python's arithmetic operators (and the NumPy ufuncs that are the same thing)."""

import math

import gast
import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d

# --- binary operators ---

@adjoint(gast.Add, np.add)
def adj_add(ans, x, y):
    d[x] = rt.unbroadcast(d[ans], x)
    d[y] = rt.unbroadcast(d[ans], y)


@adjoint(gast.Sub, np.subtract)
def adj_sub(ans, x, y):
    d[x] = rt.unbroadcast(d[ans], x)
    d[y] = rt.unbroadcast(-d[ans], y)


@adjoint(gast.Mult, np.multiply)
def adj_mul(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] * y, x)
    d[y] = rt.unbroadcast(d[ans] * x, y)


@adjoint(gast.Div, np.divide)
def adj_div(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] / y, x)
    d[y] = rt.unbroadcast(-d[ans] * ans / y, y)


@adjoint(gast.Pow, np.power, math.pow, pow)
def adj_pow(ans, x, y):
    d[x] = rt.unbroadcast(d[ans] * y * x ** (y - 1), x)
    d[y] = rt.unbroadcast(d[ans] * ans * np.log(np.where(x == 0, 1.0, x)), y)


@adjoint(gast.MatMult, np.matmul)
def adj_matmul(ans, x, y):
    d[x] = rt.matmul_adjoint_a(d[ans], x, y)
    d[y] = rt.matmul_adjoint_b(d[ans], x, y)


# --- unary operators ---

@adjoint(gast.USub, np.negative)
def adj_neg(ans, x):
    d[x] = -d[ans]


@adjoint(gast.UAdd, np.positive)
def adj_pos(ans, x):
    d[x] = d[ans]
