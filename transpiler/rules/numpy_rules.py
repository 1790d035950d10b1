"""Adjoints of NumPy functions. Parameter names follow NumPy's own signatures."""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d

# --- unary ufuncs ---

@adjoint(np.sin)
def adj_sin(ans, x):
    d[x] = d[ans] * np.cos(x)


@adjoint(np.cos)
def adj_cos(ans, x):
    d[x] = -d[ans] * np.sin(x)


@adjoint(np.tan)
def adj_tan(ans, x):
    d[x] = d[ans] * (1.0 + ans * ans)


@adjoint(np.arctan)
def adj_arctan(ans, x):
    d[x] = d[ans] / (1.0 + x * x)


@adjoint(np.sinh)
def adj_sinh(ans, x):
    d[x] = d[ans] * np.cosh(x)


@adjoint(np.cosh)
def adj_cosh(ans, x):
    d[x] = d[ans] * np.sinh(x)


@adjoint(np.tanh)
def adj_tanh(ans, x):
    d[x] = d[ans] * (1.0 - ans * ans)


@adjoint(np.exp)
def adj_exp(ans, x):
    d[x] = d[ans] * ans


@adjoint(np.expm1)
def adj_expm1(ans, x):
    d[x] = d[ans] * (ans + 1.0)


@adjoint(np.log)
def adj_log(ans, x):
    d[x] = d[ans] / x


@adjoint(np.log1p)
def adj_log1p(ans, x):
    d[x] = d[ans] / (1.0 + x)


@adjoint(np.sqrt)
def adj_sqrt(ans, x):
    d[x] = d[ans] * 0.5 / ans


@adjoint(np.square)
def adj_square(ans, x):
    d[x] = d[ans] * 2.0 * x


@adjoint(np.reciprocal)
def adj_reciprocal(ans, x):
    d[x] = -d[ans] * ans * ans


@adjoint(np.abs, np.fabs)
def adj_abs(ans, x):
    d[x] = d[ans] * np.sign(x)


# --- binary ufuncs ---

@adjoint(np.arctan2)
def adj_arctan2(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = rt.unbroadcast(-d[ans] * x1 / (x1 * x1 + x2 * x2), x2)


@adjoint(np.hypot)
def adj_hypot(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * x1 / ans, x1)
    d[x2] = rt.unbroadcast(d[ans] * x2 / ans, x2)


@adjoint(np.maximum)
def adj_maximum(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * rt.balanced_eq(x1, ans, x2), x1)
    d[x2] = rt.unbroadcast(d[ans] * rt.balanced_eq(x2, ans, x1), x2)


@adjoint(np.minimum)
def adj_minimum(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * rt.balanced_eq(x1, ans, x2), x1)
    d[x2] = rt.unbroadcast(d[ans] * rt.balanced_eq(x2, ans, x1), x2)


@adjoint(np.where)
def adj_where(ans, condition, x, y):
    d[x] = rt.unbroadcast(np.where(condition, d[ans], 0.0), x)
    d[y] = rt.unbroadcast(np.where(condition, 0.0, d[ans]), y)


# --- reductions ---

@adjoint(np.sum)
def adj_sum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.unreduce(d[ans], a, axis, keepdims)


@adjoint(np.mean)
def adj_mean(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.unreduce(d[ans], a, axis, keepdims) * (np.size(ans) / np.size(a))


# --- linear algebra ---

@adjoint(np.dot)
def adj_dot(ans, a, b):
    d[a] = rt.dot_adjoint_a(d[ans], a, b)
    d[b] = rt.dot_adjoint_b(d[ans], a, b)


# --- shape and assembly ---

@adjoint(np.concatenate)
def adj_concatenate(ans, arrays, axis=0, *, dtype=None):
    d[arrays] = rt.unconcatenate(d[ans], arrays, axis)


@adjoint(np.stack)
def adj_stack(ans, arrays, axis=0, *, dtype=None):
    d[arrays] = rt.unstack(d[ans], arrays, axis)


@adjoint(np.transpose)
def adj_transpose(ans, a, axes=None):
    if axes is None:
        d[a] = np.transpose(d[ans])
    else:
        d[a] = np.transpose(d[ans], np.argsort(np.mod(axes, np.ndim(a))))


@adjoint(np.copy)
def adj_copy(ans, a, order="K", subok=False):
    d[a] = d[ans]


@adjoint(np.ravel)
def adj_ravel(ans, a, order="C"):
    d[a] = np.reshape(d[ans], np.shape(a), order=order)


@adjoint(np.squeeze)
def adj_squeeze(ans, a, axis=None):
    d[a] = np.reshape(d[ans], np.shape(a))


@adjoint(np.ndarray.T)
def adj_T(ans, x):
    d[x] = np.transpose(d[ans])


@adjoint(np.reshape)
def adj_reshape(ans, a, shape=None, order="C", *, newshape=None, copy=None):
    d[a] = np.reshape(d[ans], np.shape(a), order=order)
