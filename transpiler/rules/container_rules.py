"""Adjoints of the builtins that repackage a sequence (``list(xs)``, ``tuple(xs)``) and of
``xs.extend(ys)``, ``mapping.get(key, default)``, ``mapping.values()``/``.items()`` and the
sequence a ``for`` loop walks."""

import runtime as rt
import runtime.linalg_tangents  # noqa: F401  (rt.linalg_tangents in tangent templates)
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(list, tuple)
def adj_list(ans, iterable=()):
    d[iterable] = rt.cotangent(d[ans], iterable)  # rows of an array are stacked back


@tangent(list, tuple)
def tan_list(ans, iterable=()):
    d[ans] = rt.linalg_tangents.listed(d[iterable], iterable, ans)  # an array's row tangents


@adjoint(rt.extended)  # xs.extend(ys) is xs = rt.extended(xs, ys)
def adj_extended(ans, items, more):
    d[items] = rt.unappend(d[ans], len(more))
    d[more] = rt.cotangent(rt.last(d[ans], len(more)), more)


@tangent(rt.extended)
def tan_extended(ans, items, more):
    d[ans] = rt.linalg_tangents.extended(d[items], d[more])  # one term: a list of both


@adjoint(dict.get)  # params.get("k", default)
def adj_dict_get(ans, mapping, key, default=None):
    d[mapping] = rt.unget(d[ans], mapping, key)
    d[default] = rt.unget_default(d[ans], mapping, key)


@tangent(dict.get)
def tan_dict_get(ans, mapping, key, default=None):
    if default is None:
        d[ans] = rt.linalg_tangents.get(d[mapping], key)
    if default is not None:  # one term: the tangent of whichever was returned
        d[ans] = rt.linalg_tangents.get(d[mapping], key, d[default])


@adjoint(rt.sequence)  # for v in xs: xs walked by index (a dict's keys as a list)
def adj_sequence(ans, items):
    d[items] = rt.unsequence(d[ans], items)


@tangent(rt.sequence)
def tan_sequence(ans, items):
    d[ans] = rt.linalg_tangents.sequence(d[items], items)


@adjoint(rt.values)  # params.values()
def adj_values(ans, mapping):
    d[mapping] = rt.unvalues(d[ans], mapping)


@tangent(rt.values)
def tan_values(ans, mapping):
    d[ans] = rt.linalg_tangents.values(d[mapping], mapping)


@adjoint(rt.items)  # params.items(): the keys carry no gradient
def adj_items(ans, mapping):
    d[mapping] = rt.unitems(d[ans], mapping)


@tangent(rt.items)
def tan_items(ans, mapping):
    d[ans] = rt.linalg_tangents.items(d[mapping], mapping)
