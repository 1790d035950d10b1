"""Adjoints of the builtins that repackage a sequence (``list(xs)``, ``tuple(xs)``) and of
``xs.extend(ys)``, ``mapping.get(key, default)``, ``mapping.values()``/``.items()`` and the
sequence a ``for`` loop walks."""

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(list, tuple)
def adj_list(ans, iterable=()):
    d[iterable] = rt.cotangent(d[ans], iterable)  # rows of an array are stacked back


@tangent(list, tuple)
def tan_list(ans, iterable=()):
    d[ans] = rt.list_tangent(d[iterable], iterable, ans)  # an array's row tangents


@adjoint(rt.popped)  # xs.pop(i) is v = xs[i]; xs = rt.popped(xs, i)
def adj_popped(ans, items, index=-1):
    d[items] = rt.unpop(d[ans], items, index)


@tangent(rt.popped)
def tan_popped(ans, items, index=-1):
    d[ans] = rt.popped_tangent(d[items], items, index)


@tangent(rt.unpop)  # (linear in the gradient)
def tan_unpop(ans, g, items, index=-1):
    d[ans] = rt.unpop(d[g], items, index)


@adjoint(rt.extended)  # xs.extend(ys) is xs = rt.extended(xs, ys)
def adj_extended(ans, items, more):
    d[items] = rt.unappend(d[ans], len(more))
    d[more] = rt.cotangent(rt.last(d[ans], len(more)), more)


@tangent(rt.extended)
def tan_extended(ans, items, more):
    d[ans] = rt.extended_tangent(d[items], d[more])  # one term: a list of both


@adjoint(dict.get)  # params.get("k", default)
def adj_dict_get(ans, mapping, key, default=None):
    d[mapping] = rt.unget(d[ans], mapping, key)
    d[default] = rt.unget_default(d[ans], mapping, key)


@tangent(dict.get)
def tan_dict_get(ans, mapping, key, default=None):
    if default is None:
        d[ans] = rt.get_tangent(d[mapping], key)
    if default is not None:  # one term: the tangent of whichever was returned
        d[ans] = rt.get_tangent(d[mapping], key, d[default])


@adjoint(rt.sequence)  # for v in xs: xs walked by index (a dict's keys as a list)
def adj_sequence(ans, items):
    d[items] = rt.unsequence(d[ans], items)


@tangent(rt.sequence)
def tan_sequence(ans, items):
    d[ans] = rt.sequence_tangent(d[items], items)


@adjoint(rt.values)  # params.values()
def adj_values(ans, mapping):
    d[mapping] = rt.unvalues(d[ans], mapping)


@tangent(rt.values)
def tan_values(ans, mapping):
    d[ans] = rt.values_tangent(d[mapping], mapping)


@adjoint(rt.items)  # params.items(): the keys carry no gradient
def adj_items(ans, mapping):
    d[mapping] = rt.unitems(d[ans], mapping)


@tangent(rt.items)
def tan_items(ans, mapping):
    d[ans] = rt.items_tangent(d[mapping], mapping)
