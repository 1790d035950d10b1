"""Adjoint and tangent rules of NumPy functions. Parameter names follow NumPy's own signatures."""

import gast
import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent

# --- unary ufuncs ---

@adjoint(np.sin)
def adj_sin(ans, x):
    d[x] = d[ans] * np.cos(x)


@tangent(np.sin)
def tan_sin(ans, x):
    d[ans] = d[x] * np.cos(x)


@adjoint(np.cos)
def adj_cos(ans, x):
    d[x] = -d[ans] * np.sin(x)


@tangent(np.cos)
def tan_cos(ans, x):
    d[ans] = -d[x] * np.sin(x)


@adjoint(np.tan)
def adj_tan(ans, x):
    d[x] = d[ans] * (1.0 + ans * ans)


@tangent(np.tan)
def tan_tan(ans, x):
    d[ans] = d[x] * (1.0 + ans * ans)


@adjoint(np.arctan)
def adj_arctan(ans, x):
    d[x] = d[ans] / (1.0 + x * x)


@tangent(np.arctan)
def tan_arctan(ans, x):
    d[ans] = d[x] / (1.0 + x * x)


@adjoint(np.sinh)
def adj_sinh(ans, x):
    d[x] = d[ans] * np.cosh(x)


@tangent(np.sinh)
def tan_sinh(ans, x):
    d[ans] = d[x] * np.cosh(x)


@adjoint(np.cosh)
def adj_cosh(ans, x):
    d[x] = d[ans] * np.sinh(x)


@tangent(np.cosh)
def tan_cosh(ans, x):
    d[ans] = d[x] * np.sinh(x)


@adjoint(np.tanh)
def adj_tanh(ans, x):
    d[x] = d[ans] * (1.0 - ans * ans)


@tangent(np.tanh)
def tan_tanh(ans, x):
    d[ans] = d[x] * (1.0 - ans * ans)


@adjoint(np.exp)
def adj_exp(ans, x):
    d[x] = d[ans] * ans


@tangent(np.exp)
def tan_exp(ans, x):
    d[ans] = d[x] * ans


@adjoint(np.expm1)
def adj_expm1(ans, x):
    d[x] = d[ans] * (ans + 1.0)


@tangent(np.expm1)
def tan_expm1(ans, x):
    d[ans] = d[x] * (ans + 1.0)


@adjoint(np.log)
def adj_log(ans, x):
    d[x] = d[ans] / x


@tangent(np.log)
def tan_log(ans, x):
    d[ans] = d[x] / x


@adjoint(np.log1p)
def adj_log1p(ans, x):
    d[x] = d[ans] / (1.0 + x)


@tangent(np.log1p)
def tan_log1p(ans, x):
    d[ans] = d[x] / (1.0 + x)


@adjoint(np.sqrt)
def adj_sqrt(ans, x):
    d[x] = d[ans] * 0.5 / ans


@tangent(np.sqrt)
def tan_sqrt(ans, x):
    d[ans] = d[x] * 0.5 / ans


@adjoint(np.square)
def adj_square(ans, x):
    d[x] = d[ans] * 2.0 * x


@tangent(np.square)
def tan_square(ans, x):
    d[ans] = d[x] * 2.0 * x


@adjoint(np.reciprocal)
def adj_reciprocal(ans, x):
    d[x] = -d[ans] * ans * ans


@tangent(np.reciprocal)
def tan_reciprocal(ans, x):
    d[ans] = -d[x] * ans * ans


@adjoint(np.abs, np.fabs)
def adj_abs(ans, x):
    d[x] = d[ans] * np.sign(x)


@tangent(np.abs, np.fabs)
def tan_abs(ans, x):
    d[ans] = d[x] * np.sign(x)


@adjoint(np.arcsin)
def adj_arcsin(ans, x):
    d[x] = d[ans] / np.sqrt((1.0 - x) * (1.0 + x))


@tangent(np.arcsin)
def tan_arcsin(ans, x):
    d[ans] = d[x] / np.sqrt((1.0 - x) * (1.0 + x))


@adjoint(np.arccos)
def adj_arccos(ans, x):
    d[x] = -d[ans] / np.sqrt((1.0 - x) * (1.0 + x))


@tangent(np.arccos)
def tan_arccos(ans, x):
    d[ans] = -d[x] / np.sqrt((1.0 - x) * (1.0 + x))


@adjoint(np.arcsinh)
def adj_arcsinh(ans, x):
    d[x] = d[ans] / np.hypot(x, 1.0)  # 1 / sqrt(x^2 + 1), without overflow


@tangent(np.arcsinh)
def tan_arcsinh(ans, x):
    d[ans] = d[x] / np.hypot(x, 1.0)


@adjoint(np.arccosh)
def adj_arccosh(ans, x):
    d[x] = d[ans] / np.sqrt((x - 1.0) * (x + 1.0))


@tangent(np.arccosh)
def tan_arccosh(ans, x):
    d[ans] = d[x] / np.sqrt((x - 1.0) * (x + 1.0))


@adjoint(np.arctanh)
def adj_arctanh(ans, x):
    d[x] = d[ans] / ((1.0 - x) * (1.0 + x))


@tangent(np.arctanh)
def tan_arctanh(ans, x):
    d[ans] = d[x] / ((1.0 - x) * (1.0 + x))


@adjoint(np.exp2)
def adj_exp2(ans, x):
    d[x] = d[ans] * ans * 0.6931471805599453  # ln 2


@tangent(np.exp2)
def tan_exp2(ans, x):
    d[ans] = d[x] * ans * 0.6931471805599453  # ln 2


@adjoint(np.log2)
def adj_log2(ans, x):
    d[x] = d[ans] / (x * 0.6931471805599453)  # ln 2


@tangent(np.log2)
def tan_log2(ans, x):
    d[ans] = d[x] / (x * 0.6931471805599453)  # ln 2


@adjoint(np.log10)
def adj_log10(ans, x):
    d[x] = d[ans] / (x * 2.302585092994046)  # ln 10


@tangent(np.log10)
def tan_log10(ans, x):
    d[ans] = d[x] / (x * 2.302585092994046)  # ln 10


@adjoint(np.cbrt)
def adj_cbrt(ans, x):
    d[x] = d[ans] / (3.0 * ans * ans)


@tangent(np.cbrt)
def tan_cbrt(ans, x):
    d[ans] = d[x] / (3.0 * ans * ans)


@adjoint(np.deg2rad, np.radians)
def adj_deg2rad(ans, x):
    d[x] = d[ans] * (np.pi / 180.0)


@tangent(np.deg2rad, np.radians)
def tan_deg2rad(ans, x):
    d[ans] = d[x] * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees)
def adj_rad2deg(ans, x):
    d[x] = d[ans] * (180.0 / np.pi)


@tangent(np.rad2deg, np.degrees)
def tan_rad2deg(ans, x):
    d[ans] = d[x] * (180.0 / np.pi)


@adjoint(np.sinc)
def adj_sinc(ans, x):
    d[x] = d[ans] * rt.sinc_grad(x)


@tangent(np.sinc)
def tan_sinc(ans, x):
    d[ans] = d[x] * rt.sinc_grad(x)


@adjoint(np.conjugate)
def adj_conjugate(ans, x):
    d[x] = np.conjugate(d[ans])


@tangent(np.conjugate)
def tan_conjugate(ans, x):
    d[ans] = np.conjugate(d[x])


@adjoint(np.modf)  # (fractional part, integral part); the integral part is piecewise constant
def adj_modf(ans, x):
    d[x] = d[ans][0]


@tangent(np.modf)
def tan_modf(ans, x):
    d[ans] = (d[x], rt.zeros_like_grad(ans[1]))


@adjoint(np.frexp)  # (mantissa, exponent) with mantissa = x * 2**-exponent
def adj_frexp(ans, x):
    d[x] = np.ldexp(d[ans][0], -ans[1])


@tangent(np.frexp)
def tan_frexp(ans, x):
    d[ans] = (np.ldexp(d[x], -ans[1]), rt.zeros_like_grad(ans[1]))


# --- binary ufuncs ---

@adjoint(np.arctan2)
def adj_arctan2(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = rt.unbroadcast(-d[ans] * x1 / (x1 * x1 + x2 * x2), x2)


@tangent(np.arctan2)
def tan_arctan2(ans, x1, x2):
    d[ans] = d[x1] * x2 / (x1 * x1 + x2 * x2)
    d[ans] = -d[x2] * x1 / (x1 * x1 + x2 * x2)


@adjoint(np.hypot)
def adj_hypot(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * x1 / ans, x1)
    d[x2] = rt.unbroadcast(d[ans] * x2 / ans, x2)


@tangent(np.hypot)
def tan_hypot(ans, x1, x2):
    d[ans] = d[x1] * x1 / ans
    d[ans] = d[x2] * x2 / ans


@adjoint(np.maximum, np.fmax)  # fmax(x, nan) = x: x == ans, so x gets the gradient
def adj_maximum(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * rt.balanced_eq(x1, ans, x2), x1)
    d[x2] = rt.unbroadcast(d[ans] * rt.balanced_eq(x2, ans, x1), x2)


@tangent(np.maximum, np.fmax)  # rt.balanced_eq is float64: cast to keep float32
def tan_maximum(ans, x1, x2):
    d[ans] = d[x1] * rt.balanced_eq(x1, ans, x2).astype(ans.dtype, copy=False)
    d[ans] = d[x2] * rt.balanced_eq(x2, ans, x1).astype(ans.dtype, copy=False)


@adjoint(np.minimum, np.fmin)
def adj_minimum(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * rt.balanced_eq(x1, ans, x2), x1)
    d[x2] = rt.unbroadcast(d[ans] * rt.balanced_eq(x2, ans, x1), x2)


@tangent(np.minimum, np.fmin)
def tan_minimum(ans, x1, x2):
    d[ans] = d[x1] * rt.balanced_eq(x1, ans, x2).astype(ans.dtype, copy=False)
    d[ans] = d[x2] * rt.balanced_eq(x2, ans, x1).astype(ans.dtype, copy=False)


@adjoint(np.where)
def adj_where(ans, condition, x=None, y=None):
    if x is not None:  # np.where(condition) alone gives indices: no gradient
        d[x] = rt.unbroadcast(np.where(condition, d[ans], 0.0), x)
    if y is not None:
        d[y] = rt.unbroadcast(np.where(condition, 0.0, d[ans]), y)


@tangent(np.where)
def tan_where(ans, condition, x=None, y=None):
    if x is not None:
        d[ans] = rt.broadcast_like(np.where(condition, d[x], 0.0), ans)
    if y is not None:
        d[ans] = rt.broadcast_like(np.where(condition, 0.0, d[y]), ans)


@adjoint(np.logaddexp)
def adj_logaddexp(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * np.exp(x1 - ans), x1)
    d[x2] = rt.unbroadcast(d[ans] * np.exp(x2 - ans), x2)


@tangent(np.logaddexp)
def tan_logaddexp(ans, x1, x2):
    d[ans] = d[x1] * np.exp(x1 - ans)
    d[ans] = d[x2] * np.exp(x2 - ans)


@adjoint(np.logaddexp2)
def adj_logaddexp2(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * np.exp2(x1 - ans), x1)
    d[x2] = rt.unbroadcast(d[ans] * np.exp2(x2 - ans), x2)


@tangent(np.logaddexp2)
def tan_logaddexp2(ans, x1, x2):
    d[ans] = d[x1] * np.exp2(x1 - ans)
    d[ans] = d[x2] * np.exp2(x2 - ans)


@adjoint(np.copysign)  # |x1| with x2's sign: no gradient in x2
def adj_copysign(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * (np.sign(x1) * np.sign(ans)), x1)
    d[x2] = rt.zeros_like_grad(x2)


@tangent(np.copysign)
def tan_copysign(ans, x1, x2):
    d[ans] = d[x1] * (np.sign(x1) * np.sign(ans))
    d[ans] = d[x2] * rt.zeros_like_grad(ans)  # zero, shaped like ans


@adjoint(gast.Mod, np.remainder, np.fmod)  # x1 - n * x2, n an integer constant between jumps
def adj_remainder(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans], x1)
    d[x2] = rt.unbroadcast(-d[ans] * np.round((x1 - ans) / x2), x2)


@tangent(gast.Mod, np.remainder, np.fmod)
def tan_remainder(ans, x1, x2):
    d[ans] = rt.broadcast_like(d[x1], ans)
    d[ans] = -d[x2] * np.round((x1 - ans) / x2)


@adjoint(np.divmod)  # (floor_divide, remainder): the quotient is piecewise constant
def adj_divmod(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans][1], x1)
    d[x2] = rt.unbroadcast(-d[ans][1] * ans[0], x2)


@tangent(np.divmod)  # one term: a tuple's terms cannot be summed with +
def tan_divmod(ans, x1, x2):
    d[ans] = (rt.zeros_like_grad(ans[0]), rt.broadcast_like(d[x1], ans[1]) - d[x2] * ans[0])


@adjoint(np.float_power)
def adj_float_power(ans, x1, x2):
    d[x1] = rt.unbroadcast(d[ans] * rt.pow_slope(np.float_power(x1, 1.0), x2), x1)
    d[x2] = rt.unbroadcast(d[ans] * ans * np.log(np.where(x1 == 0, 1.0, x1)), x2)


@tangent(np.float_power)
def tan_float_power(ans, x1, x2):
    d[ans] = d[x1] * rt.pow_slope(np.float_power(x1, 1.0), x2)
    d[ans] = d[x2] * ans * np.log(np.where(x1 == 0, 1.0, x1))


@adjoint(np.heaviside)  # a step in x1 (zero gradient); x2 is the value where x1 == 0
def adj_heaviside(ans, x1, x2):
    d[x1] = rt.zeros_like_grad(x1)
    d[x2] = rt.unbroadcast(d[ans] * (x1 == 0), x2)


@tangent(np.heaviside)
def tan_heaviside(ans, x1, x2):
    d[ans] = d[x1] * rt.zeros_like_grad(ans)  # zero, shaped like ans
    d[ans] = d[x2] * (x1 == 0)


@adjoint(np.ldexp)  # x1 * 2**x2 with integer x2
def adj_ldexp(ans, x1, x2):
    d[x1] = rt.unbroadcast(np.ldexp(d[ans], x2), x1)


@tangent(np.ldexp)
def tan_ldexp(ans, x1, x2):
    d[ans] = np.ldexp(d[x1], x2)


@adjoint(np.clip)  # a_min/a_max or NumPy 2's min/max; None for a missing bound
def adj_clip(ans, a, a_min=None, a_max=None, *, min=None, max=None):
    parts = rt.clip_partials(d[ans], a, a_min, a_max, min, max)
    d[a] = parts[0]
    d[a_min] = parts[1]
    d[min] = parts[1]
    d[a_max] = parts[2]
    d[max] = parts[2]


@tangent(np.clip)  # minimum(maximum(a, lo), hi), ties split evenly as in clip_partials
def tan_clip(ans, a, a_min=None, a_max=None, *, min=None, max=None):
    m = a  # maximum(a, lo)
    lower = 1.0  # the share of a in m
    if a_min is not None:
        m = np.maximum(a, a_min)
        lower = rt.balanced_eq(a, m, a_min)
    if min is not None:
        m = np.maximum(a, min)
        lower = rt.balanced_eq(a, m, min)
    upper = 1.0  # the share of m in ans
    if a_max is not None:
        upper = rt.balanced_eq(m, ans, a_max)
    if max is not None:
        upper = rt.balanced_eq(m, ans, max)
    # balanced_eq is float64: the weights are cast to ans's dtype (float32 stays float32)
    d[ans] = d[a] * np.asarray(lower * upper, ans.dtype)
    if a_min is not None:
        d[ans] = d[a_min] * np.asarray(rt.balanced_eq(a_min, m, a) * upper, ans.dtype)
    if min is not None:
        d[ans] = d[min] * np.asarray(rt.balanced_eq(min, m, a) * upper, ans.dtype)
    if a_max is not None:
        d[ans] = d[a_max] * np.asarray(rt.balanced_eq(a_max, ans, m), ans.dtype)
    if max is not None:
        d[ans] = d[max] * np.asarray(rt.balanced_eq(max, ans, m), ans.dtype)


@adjoint(np.nan_to_num)
def adj_nan_to_num(ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[x] = d[ans] * rt.nan_to_num_mask(x, copy, "finite")
    d[nan] = rt.unbroadcast(np.where(rt.nan_to_num_mask(x, copy, "nan"), d[ans], 0.0),
                            nan)
    if posinf is not None:
        d[posinf] = rt.unbroadcast(
            np.where(rt.nan_to_num_mask(x, copy, "posinf"), d[ans], 0.0), posinf)
    if neginf is not None:
        d[neginf] = rt.unbroadcast(
            np.where(rt.nan_to_num_mask(x, copy, "neginf"), d[ans], 0.0), neginf)


@tangent(np.nan_to_num)
def tan_nan_to_num(ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[ans] = d[x] * rt.nan_to_num_mask(x, copy, "finite")
    d[ans] = d[nan] * rt.nan_to_num_mask(x, copy, "nan").astype(ans.dtype)
    if posinf is not None:
        d[ans] = d[posinf] * rt.nan_to_num_mask(x, copy, "posinf").astype(ans.dtype)
    if neginf is not None:
        d[ans] = d[neginf] * rt.nan_to_num_mask(x, copy, "neginf").astype(ans.dtype)


# --- reductions ---

@adjoint(np.sum)
def adj_sum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = rt.unreduce(d[ans], a, axis, keepdims)


@tangent(np.sum)
def tan_sum(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = np.sum(d[a], axis=axis, dtype=dtype, keepdims=keepdims)


@adjoint(np.mean)
def adj_mean(ans, a, axis=None, dtype=None, *, keepdims=False):
    # scaled before it is spread: one multiplication per result, not per element
    d[a] = rt.unreduce(d[ans] * (rt.size(ans) / max(rt.size(a), 1)), a, axis, keepdims)


@tangent(np.mean)
def tan_mean(ans, a, axis=None, dtype=None, *, keepdims=False):
    d[ans] = np.sum(d[a], axis=axis, dtype=dtype, keepdims=keepdims) * (
        rt.size(ans) / max(rt.size(a), 1))


# --- linear algebra ---

@adjoint(np.dot)
def adj_dot(ans, a, b):
    d[a] = rt.dot_adjoint_a(d[ans], a, b)
    d[b] = rt.dot_adjoint_b(d[ans], a, b)


@tangent(np.dot)
def tan_dot(ans, a, b):
    d[ans] = np.dot(d[a], b)
    d[ans] = np.dot(a, d[b])


# --- shape and assembly ---

@adjoint(np.concatenate)
def adj_concatenate(ans, arrays, axis=0, *, dtype=None):
    d[arrays] = rt.unconcatenate(d[ans], arrays, axis)


@tangent(np.concatenate)
def tan_concatenate(ans, arrays, axis=0, *, dtype=None):
    d[ans] = np.concatenate(d[arrays], axis, dtype=dtype)


@adjoint(np.stack)
def adj_stack(ans, arrays, axis=0, *, dtype=None):
    d[arrays] = rt.unstack(d[ans], arrays, axis)


@tangent(np.stack)
def tan_stack(ans, arrays, axis=0, *, dtype=None):
    d[ans] = np.stack(d[arrays], axis, dtype=dtype)


@adjoint(np.transpose)
def adj_transpose(ans, a, axes=None):
    if axes is None:
        d[a] = np.transpose(d[ans])
    else:
        d[a] = np.transpose(d[ans], np.argsort(np.mod(axes, np.ndim(a))))


@tangent(np.transpose)
def tan_transpose(ans, a, axes=None):
    d[ans] = np.transpose(d[a], axes)


@adjoint(np.copy)
def adj_copy(ans, a, order="K", subok=False):
    d[a] = d[ans]


@tangent(np.copy)
def tan_copy(ans, a, order="K", subok=False):
    d[ans] = rt.copy_tangent(d[a], ans)  # (a.copy() of a dict or list too)


@adjoint(np.ravel)
def adj_ravel(ans, a, order="C"):
    d[a] = np.reshape(d[ans], np.shape(a), order=order)


@tangent(np.ravel)
def tan_ravel(ans, a, order="C"):
    d[ans] = np.ravel(d[a], order=order)


@adjoint(np.squeeze)
def adj_squeeze(ans, a, axis=None):
    d[a] = np.reshape(d[ans], np.shape(a))


@tangent(np.squeeze)
def tan_squeeze(ans, a, axis=None):
    d[ans] = np.reshape(d[a], np.shape(ans))


@adjoint(np.ndarray.T)
def adj_T(ans, x):
    d[x] = np.transpose(d[ans])


@tangent(np.ndarray.T)
def tan_T(ans, x):
    d[ans] = np.transpose(d[x])


@adjoint(np.reshape)
def adj_reshape(ans, a, shape=None, order="C", *, newshape=None, copy=None):
    d[a] = np.reshape(d[ans], np.shape(a), order=order)


@tangent(np.reshape)
def tan_reshape(ans, a, shape=None, order="C", *, newshape=None, copy=None):
    d[ans] = np.reshape(d[a], np.shape(ans), order=order)
