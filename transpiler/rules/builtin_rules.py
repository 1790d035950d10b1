"""Adjoints and tangents of Python builtins and of indexing (``x[i]`` is
``operator.getitem(x, i)``)."""

import operator

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(abs)
def adj_abs(ans, x):
    d[x] = d[ans] * np.sign(x)


@tangent(abs)
def tan_abs(ans, x):
    d[ans] = d[x] * np.sign(x)


@adjoint(sum)
def adj_builtin_sum(ans, iterable, start=0):
    d[iterable] = rt.unsum(d[ans], iterable)
    d[start] = rt.unbroadcast(d[ans], start)


@tangent(sum)
def tan_builtin_sum(ans, iterable, start=0):
    d[ans] = rt.broadcast_like(sum(d[iterable]), ans)
    d[ans] = rt.broadcast_like(d[start], ans)


# max(iterable, *, default, key) or max(arg1, arg2, *args, key): up to six separate arguments.
# The gradient goes to the items equal to the result, split evenly on ties.
@adjoint(max, min)
def adj_builtin_max(ans, arg1, arg2=None, arg3=None, arg4=None, arg5=None, arg6=None, *,
                    key=None, default=None):
    if arg2 is None:
        d[arg1] = rt.tie_split(d[ans], ans, arg1, key)
        if default is not None:
            d[default] = rt.default_partial(d[ans], arg1, default)
    else:
        parts = rt.tie_split(d[ans], ans, (arg1, arg2, arg3, arg4, arg5, arg6), key)
        d[arg1] = parts[0]
        d[arg2] = parts[1]
        d[arg3] = parts[2]
        d[arg4] = parts[3]
        d[arg5] = parts[4]
        d[arg6] = parts[5]


# Each item's tangent weighs 1/k if it is one of the k items equal to the result, else 0: the
# transpose of the adjoint's even split.
@tangent(max, min)
def tan_builtin_max(ans, arg1, arg2=None, arg3=None, arg4=None, arg5=None, arg6=None, *,
                    key=None, default=None):
    if arg2 is None:
        d[ans] = np.dot(rt.tie_split(1.0, ans, arg1, key), d[arg1])
        if default is not None:
            d[ans] = rt.default_partial(d[default], arg1, ans)
    else:
        weights = rt.tie_split(1.0, ans, (arg1, arg2, arg3, arg4, arg5, arg6), key)
        d[ans] = d[arg1] * weights[0]
        d[ans] = d[arg2] * weights[1]
        d[ans] = d[arg3] * weights[2]
        d[ans] = d[arg4] * weights[3]
        d[ans] = d[arg5] * weights[4]
        d[ans] = d[arg6] * weights[5]


# sorted(iterable, key=, reverse=): a permutation of the items (the key only orders them)
@adjoint(sorted)
def adj_sorted(ans, iterable, *, key=None, reverse=False):
    d[iterable] = rt.unsorted(d[ans], iterable, key, reverse)


@tangent(sorted)
def tan_sorted(ans, iterable, *, key=None, reverse=False):
    d[ans] = rt.sorted_tangent(d[iterable], iterable, key, reverse)


@adjoint(divmod)  # (x // y, x % y): the quotient is piecewise constant
def adj_divmod(ans, x, y):
    d[x] = rt.unbroadcast(d[ans][1], x)
    d[y] = rt.unbroadcast(-d[ans][1] * ans[0], y)


@tangent(divmod)
def tan_divmod(ans, x, y):
    # one term for both arguments: a tuple is not summed item by item
    d[ans] = (rt.zeros_like_grad(ans[0]), rt.broadcast_like(d[x], ans[1]) - d[y] * ans[0])


@adjoint(rt.appended)  # xs.append(v) and comprehensions build lists with it
def adj_appended(ans, items, item):
    d[items] = rt.unappend(d[ans])
    d[item] = d[ans][-1]


@tangent(rt.appended)
def tan_appended(ans, items, item):
    # one term for both arguments: lists are not summed item by item
    d[ans] = rt.appended(d[items], d[item])


@adjoint(float)
def adj_float(ans, x):
    d[x] = d[ans]


@tangent(float)
def tan_float(ans, x):
    d[ans] = float(d[x])


@adjoint(operator.getitem)
def adj_getitem(ans, a, index):
    d[a] = rt.unindex(d[ans], a, index)


@tangent(operator.getitem)
def tan_getitem(ans, a, index):
    d[ans] = d[a][index]


@adjoint(operator.setitem)  # y = <setitem>(a, index, value): a copy of a with a[index] = value
def adj_setitem(ans, a, index, value):
    d[value] = rt.unbroadcast(rt.written(d[ans], index), value)  # (read before it is zeroed)
    d[a] = rt.zero_index(d[ans], index)


@adjoint(rt.added_at)  # a = <np.add.at>(a, index, b): a copy of a with b added at index
def adj_added_at(ans, a, index, b):
    d[a] = d[ans]
    d[b] = rt.unbroadcast(d[ans][index], b)  # (an index repeated gathers each time)


@tangent(rt.added_at)
def tan_added_at(ans, a, index, b):
    d[ans] = d[a]
    d[ans] = rt.unindex(rt.broadcast_like(d[b], ans[index]), ans, index)


@adjoint(rt.subtracted_at)
def adj_subtracted_at(ans, a, index, b):
    d[a] = d[ans]
    d[b] = -rt.unbroadcast(d[ans][index], b)


@tangent(rt.subtracted_at)
def tan_subtracted_at(ans, a, index, b):
    d[ans] = d[a]
    d[ans] = -rt.unindex(rt.broadcast_like(d[b], ans[index]), ans, index)


@adjoint(rt.multiplied_at)
def adj_multiplied_at(ans, a, index, b):
    ga, gb = rt.multiplied_at_grad(d[ans], a, index, b)
    d[a] = ga
    d[b] = gb


@tangent(rt.multiplied_at)
def tan_multiplied_at(ans, a, index, b):
    d[ans] = rt.multiplied_at_tangent(d[a], d[b], a, index, b)


@tangent(rt.multiplied_at_grad)  # (forward over reverse; a tuple (ga, gb): one term)
def tan_multiplied_at_grad(ans, g, a, index, b):
    d[ans] = rt.multiplied_at_grad_tangent(d[g], d[a], d[b], g, a, index, b)


@adjoint(rt.put)  # a = <np.put>(a, ind, v, mode): flat writes, v repeated in turn, last kept
def adj_put(ans, a, ind, v, mode="raise"):
    ga, gv = rt.put_grad(d[ans], a, ind, v, mode)
    d[a] = ga
    d[v] = gv


@tangent(rt.put)
def tan_put(ans, a, ind, v, mode="raise"):
    d[ans] = rt.put_tangent(d[a], d[v], a, ind, v, mode)


@adjoint(rt.put_along)  # a = <np.put_along_axis>(a, indices, values, axis): a write at an index
def adj_put_along(ans, a, indices, values, axis):
    d[values] = rt.unbroadcast(rt.written(d[ans], rt.along_axis_index(a, indices, axis)),
                               values)
    d[a] = rt.zero_index(d[ans], rt.along_axis_index(a, indices, axis))


@tangent(rt.put_along)
def tan_put_along(ans, a, indices, values, axis):
    d[ans] = rt.put_along_tangent(d[a], d[values], a, indices, values, axis)


@tangent(operator.setitem)
def tan_setitem(ans, a, index, value):
    d[ans] = rt.zero_index(d[a], index)
    # scattered like the adjoint gathers (an index repeated in an integer array adds up)
    d[ans] = rt.unindex(rt.broadcast_like(d[value], ans[index]), ans, index)

