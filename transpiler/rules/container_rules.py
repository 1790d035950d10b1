"""Adjoints of the builtins that repackage a sequence (``list(xs)``, ``tuple(xs)``) and of
``xs.extend(ys)``, ``mapping.get(key, default)``, ``mapping.values()``/``.items()`` and the
sequence a ``for`` loop walks."""

import runtime as rt
from transpiler.rules.registry import adjoint, d


@adjoint(list, tuple)
def adj_list(ans, iterable=()):
    d[iterable] = rt.cotangent(d[ans], iterable)  # rows of an array are stacked back


@adjoint(rt.extended)  # xs.extend(ys) is xs = rt.extended(xs, ys)
def adj_extended(ans, items, more):
    d[items] = rt.unappend(d[ans], len(more))
    d[more] = rt.cotangent(rt.last(d[ans], len(more)), more)


@adjoint(dict.get)  # params.get("k", default)
def adj_dict_get(ans, mapping, key, default=None):
    d[mapping] = rt.unget(d[ans], mapping, key)
    d[default] = rt.unget_default(d[ans], mapping, key)


@adjoint(rt.sequence)  # for v in xs: xs walked by index (a dict's keys as a list)
def adj_sequence(ans, items):
    d[items] = rt.unsequence(d[ans], items)


@adjoint(rt.values)  # params.values()
def adj_values(ans, mapping):
    d[mapping] = rt.unvalues(d[ans], mapping)


@adjoint(rt.items)  # params.items(): the keys carry no gradient
def adj_items(ans, mapping):
    d[mapping] = rt.unitems(d[ans], mapping)
