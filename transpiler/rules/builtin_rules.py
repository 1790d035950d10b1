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
