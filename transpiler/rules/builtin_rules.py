"""Adjoints of Python builtins and of indexing (``x[i]`` is ``operator.getitem(x, i)``)."""

import operator

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d


@adjoint(abs)
def adj_abs(ans, x):
    d[x] = d[ans] * np.sign(x)


@adjoint(sum)
def adj_builtin_sum(ans, iterable, start=0):
    d[iterable] = rt.unsum(d[ans], iterable)
    d[start] = rt.unbroadcast(d[ans], start)


# max(iterable, *, default, key) or max(arg1, arg2, *args, key): up to six separate arguments.
# The gradient goes to the items equal to the result, split evenly on ties.
@adjoint(max, min)
def adj_builtin_max(ans, arg1, arg2=None, arg3=None, arg4=None, arg5=None, arg6=None, *,
                    key=None, default=None):
    if arg2 is None:
        d[arg1] = rt.special.tie_split(d[ans], ans, arg1, key)
        if default is not None:
            d[default] = rt.special.default_partial(d[ans], arg1, default)
    else:
        parts = rt.special.tie_split(d[ans], ans, (arg1, arg2, arg3, arg4, arg5, arg6), key)
        d[arg1] = parts[0]
        d[arg2] = parts[1]
        d[arg3] = parts[2]
        d[arg4] = parts[3]
        d[arg5] = parts[4]
        d[arg6] = parts[5]


@adjoint(divmod)  # (x // y, x % y): the quotient is piecewise constant
def adj_divmod(ans, x, y):
    d[x] = rt.unbroadcast(d[ans][1], x)
    d[y] = rt.unbroadcast(-d[ans][1] * ans[0], y)


@adjoint(rt.appended)  # xs.append(v) and comprehensions build lists with it
def adj_appended(ans, items, item):
    d[items] = rt.unappend(d[ans])
    d[item] = d[ans][-1]


@adjoint(float)
def adj_float(ans, x):
    d[x] = d[ans]


@adjoint(operator.getitem)
def adj_getitem(ans, a, index):
    d[a] = rt.unindex(d[ans], a, index)


@adjoint(operator.setitem)  # y = <setitem>(a, index, value): a copy of a with a[index] = value
def adj_setitem(ans, a, index, value):
    d[a] = rt.zero_index(d[ans], index)
    d[value] = rt.unbroadcast(d[ans][index], value)
