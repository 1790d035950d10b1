"""Gradients of tuples, lists and dicts: containers whose ``+`` adds element by element.

The adjoint accumulates gradients with ``+``. For a value that is a tuple, list or dict, its
gradient is a ``GradTuple``/``GradList``/``GradDict`` of the same structure (zeros where nothing
flowed), whose ``+`` adds elementwise (a plain tuple's ``+`` would concatenate).
"""

from __future__ import annotations

import numpy as np


class _ElementwiseSum:
    """``+`` of two sequence gradients adds them item by item (0 is the empty gradient)."""

    def __add__(self, other):
        if _is_zero(other):
            return self
        return type(self)(a + b for a, b in zip(self, other, strict=True))

    __radd__ = __add__


class GradTuple(_ElementwiseSum, tuple):
    pass


class GradList(_ElementwiseSum, list):
    pass


class GradDict(dict):
    def __add__(self, other):
        if _is_zero(other):
            return self
        return GradDict({k: v + other[k] for k, v in self.items()})

    __radd__ = __add__


def _is_zero(x) -> bool:
    return type(x) in (int, float) and x == 0


CONTAINERS = (tuple, list, dict)


def zeros_of(x):
    """The zero gradient of a container ``x`` (containers nest; leaves are 0.0 or arrays)."""
    if isinstance(x, dict):
        return GradDict({k: zeros_of(v) for k, v in x.items()})
    if isinstance(x, list):
        return GradList(zeros_of(v) for v in x)
    if isinstance(x, tuple):
        return GradTuple(zeros_of(v) for v in x)
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else float)
    return 0.0


def unindex_container(g, like, index):
    """The gradient of ``like[index]`` for a container ``like``: zeros with ``g`` at ``index``."""
    out = zeros_of(like)
    if isinstance(out, GradTuple):
        out = list(out)
        out[index] = g
        return GradTuple(out)
    out[index] = g
    return out


def sequence(items):
    """What ``for v in items`` walks through, indexable: a dict's keys as a list, else itself."""
    return list(items) if isinstance(items, dict) else items


def unsequence(g, items):
    """The gradient of ``sequence(items)`` for ``items`` (a dict's keys carry none)."""
    return zeros_of(items) if isinstance(items, dict) else g


def values(mapping):
    """``list(mapping.values())``: ``for v in params.values()``."""
    return list(mapping.values())


def items(mapping):
    """``list(mapping.items())``: ``for k, v in params.items()``."""
    return list(mapping.items())


def keys(mapping):
    """``list(mapping.keys())``."""
    return list(mapping.keys())


def unvalues(g, mapping):
    """The gradient of ``values(mapping)``: a dict gradient with each value's gradient."""
    return GradDict({k: zeros_of(v) if _is_zero(gv) else gv
                     for (k, v), gv in zip(mapping.items(), g, strict=True)})


def unitems(g, mapping):
    """The gradient of ``items(mapping)``: the second entry of each pair's gradient."""
    return GradDict({k: zeros_of(v) if _is_zero(gp) or _is_zero(gp[1]) else gp[1]
                     for (k, v), gp in zip(mapping.items(), g, strict=True)})


def unget(g, mapping, key):
    """The gradient of ``mapping.get(key, default)`` for ``mapping``."""
    return unindex_container(g, mapping, key) if key in mapping else zeros_of(mapping)


def unget_default(g, mapping, key):
    """The gradient of ``mapping.get(key, default)`` for ``default``: ``g`` when it was used."""
    return 0.0 if key in mapping else g


def plain(g, like):
    """A container gradient as the plain structure of its argument ``like``."""
    from runtime.accumulate import grad_like

    if isinstance(like, dict):
        return {k: grad_like(g[k], v) for k, v in like.items()}
    items = [grad_like(a, b) for a, b in zip(g, like, strict=True)]
    return tuple(items) if isinstance(like, tuple) else items


def unsum(g, items):
    """The gradient of the builtin ``sum(items)`` for each item (each undoes its broadcasting)."""
    from runtime.broadcast import unbroadcast, unreduce

    if isinstance(items, np.ndarray):  # sum over the first axis
        return unreduce(g, items, 0)
    parts = [unbroadcast(g, item) for item in items]
    return GradTuple(parts) if isinstance(items, tuple) else GradList(parts)


def cotangent(ct, value):
    """The gradient of a function's result from a caller that unpacked it (``a, b = f(x)``
    sends ``(ba, bb)``): stacked back into an array when the result was an array."""
    if isinstance(value, np.ndarray) and isinstance(ct, (tuple, list)):
        rows = [np.zeros(value.shape[1:]) if _is_zero(c) else c for c in ct]
        return np.stack(rows)
    return ct


def appended(items, item):
    """``items + [item]`` as a new list: ``xs.append(v)`` and comprehensions, without mutation."""
    return [*items, item]


def extended(items, more):
    """``items + list(more)`` as a new list: ``xs.extend(ys)``, without mutation."""
    return [*items, *more]


def unappend(g, n=1):
    """The gradient of the list ``appended`` (``extended``) received: all but the last ``n``
    items' gradients."""
    return g[:len(g) - n] if isinstance(g, np.ndarray) else GradList(g[:len(g) - n])


def last(g, n):
    """The gradients of the last ``n`` items of a list (the ones ``extended`` added)."""
    return g[len(g) - n:] if isinstance(g, np.ndarray) else GradList(g[len(g) - n:])
