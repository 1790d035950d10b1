"""Gradients of tuples, lists and dicts: containers whose ``+`` adds element by element.

The adjoint accumulates gradients with ``+``. For a value that is a tuple, list or dict, its
gradient is a ``GradTuple``/``GradList``/``GradDict`` of the same structure (zeros where nothing
flowed), whose ``+`` adds elementwise (a plain tuple's ``+`` would concatenate). The helpers that
walk containers (``sequence``, ``values``, ``appended``...) are here with their adjoints
(``unsequence``, ``unvalues``, ``unappend``...) and their tangents (``sequence_tangent``...).

This module depends on ``runtime.arrays`` only; the broadcasting helpers build on it.
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import is_array, is_zero, zeros


class _ElementwiseSum:
    """``+`` of two sequence gradients adds them item by item (0 is the empty gradient)."""

    def __add__(self, other):
        if is_zero(other):
            return self
        return type(self)(a + b for a, b in zip(self, other, strict=True))

    __radd__ = __iadd__ = __add__  # never list.__iadd__ (extend), never in place


class GradTuple(_ElementwiseSum, tuple):
    pass


class GradList(_ElementwiseSum, list):
    pass


class GradDict(dict):
    def __add__(self, other):
        """Key by key; a key only one side has (a slot ``d[k] = v`` added) counts as zero there."""
        if is_zero(other):
            return self
        return GradDict({k: self[k] + other[k] if k in self and k in other
                         else self.get(k, other.get(k)) for k in {**self, **other}})

    __radd__ = __add__


CONTAINERS = (tuple, list, dict)


def zeros_of(x):
    """The zero gradient of a container ``x`` (containers nest; leaves are 0.0 or arrays)."""
    if isinstance(x, dict):
        return GradDict({k: zeros_of(v) for k, v in x.items()})
    if isinstance(x, list):
        return GradList(zeros_of(v) for v in x)
    if isinstance(x, tuple):
        return GradTuple(zeros_of(v) for v in x)
    if is_array(x):
        return zeros(x.shape, x.dtype if x.dtype.kind == "f" else float, like=x)
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


def zero_entry(g, index):
    """A copy of container gradient ``g`` with the entry at ``index`` zero: the gradient of a
    container before ``c[index] = v`` replaced that entry. Its arrays are copies, since the
    adjoint may add into an entry in place (``bc[i] += p``)."""
    out = {k: _copied(v) for k, v in g.items()} if isinstance(g, dict) else [_copied(v) for v in g]
    if isinstance(index, slice):
        out[index] = [zeros_of(v) for v in out[index]]
    else:
        out[index] = zeros_of(out[index])
    return GradDict(out) if isinstance(g, dict) else GradTuple(out) if isinstance(g, tuple) \
        else GradList(out)


def _copied(v):
    return v.copy() if type(v) is np.ndarray else v


def store(container, key, value) -> None:
    """``container[key] = value`` into a container that is not the function's own (a memo of
    its module's): state outside the mathematics, written as Python writes it."""
    container[key] = value


def record(items, item) -> None:
    """``items.append(item)`` into a list that is not the function's own, which it only
    appends to (a history its module keeps): state outside the mathematics, written as Python
    writes it (the value, never its gradient)."""
    items.append(item)


def unknown_function(picked, spelled: str):
    """The last branch of a choice among the functions a table held when the gradient was
    compiled (passes/resolve.py): it holds another one now."""
    raise TypeError(f"{spelled} is {picked!r}, which it did not hold when the gradient was "
                    "compiled: fill the table before the gradient's first call, or pass the "
                    "function as an argument")


def sequence(items):
    """What ``for v in items`` walks through, indexable: a dict's keys as a list, else itself
    (an iterator, which a loop walked by its index cannot read, raises)."""
    if isinstance(items, dict):
        return list(items)
    if not hasattr(items, "__getitem__") or not hasattr(items, "__len__"):
        raise TypeError(f"a loop over a {type(items).__name__} (an iterator: a generator, map, "
                        "filter, ...) is not differentiated: loop over a list of its items "
                        "(list(...)), or over the sequence it walks")
    return items


def sequence_tangent(t, items):
    """Tangent of ``rt.sequence(items)``: a dict's keys carry none."""
    return zeros_of(list(items)) if isinstance(items, dict) else t


def unsequence(g, items):
    """The gradient of ``sequence(items)`` for ``items`` (a dict's keys carry none)."""
    return zeros_of(items) if isinstance(items, dict) else g


def values(mapping):
    """``list(mapping.values())``: ``for v in params.values()``."""
    return list(mapping.values())


def values_tangent(t, mapping):
    """Tangent of ``rt.values(mapping)``: the values' tangents, in ``mapping``'s order."""
    return GradList(t[k] for k in mapping)


def items(mapping):
    """``list(mapping.items())``: ``for k, v in params.items()``."""
    return list(mapping.items())


def items_tangent(t, mapping):
    """Tangent of ``rt.items(mapping)``: ``(0.0, tangent)`` per pair (keys carry none)."""
    return GradList(GradTuple((zeros_of(k), t[k])) for k in mapping)


def keys(mapping):
    """``list(mapping.keys())``."""
    return list(mapping.keys())


def unvalues(g, mapping):
    """The gradient of ``values(mapping)``: a dict gradient with each value's gradient."""
    return GradDict({k: zeros_of(v) if is_zero(gv) else gv
                     for (k, v), gv in zip(mapping.items(), g, strict=True)})


def unitems(g, mapping):
    """The gradient of ``items(mapping)``: the second entry of each pair's gradient."""
    return GradDict({k: zeros_of(v) if is_zero(gp) or is_zero(gp[1]) else gp[1]
                     for (k, v), gp in zip(mapping.items(), g, strict=True)})


def unget(g, mapping, key):
    """The gradient of ``mapping.get(key, default)`` for ``mapping``."""
    return unindex_container(g, mapping, key) if key in mapping else zeros_of(mapping)


def get_tangent(t_mapping, key, t_default=None):
    """Tangent of ``mapping.get(key, default)``."""
    return t_mapping[key] if key in t_mapping else t_default


def unget_default(g, mapping, key):
    """The gradient of ``mapping.get(key, default)`` for ``default``: ``g`` when it was used."""
    return 0.0 if key in mapping else g


def cotangent(ct, value):
    """The gradient of a function's result from a caller that unpacked it (``a, b = f(x)``
    sends ``(ba, bb)``): stacked back into an array when the result was an array."""
    if is_array(value) and isinstance(ct, (tuple, list)):
        rows = [np.zeros(value.shape[1:]) if is_zero(c) else c for c in ct]
        return np.stack(rows)
    return ct


def appended(items, item):
    """``items + [item]`` as a new list: ``xs.append(v)`` and comprehensions, without mutation."""
    return [*items, item]


def popped(items, index=-1):
    """``items`` without its entry at ``index`` as a new list (a dict: without the key):
    ``xs.pop(i)``, whose value ``xs[i]`` is read before, without mutation."""
    if isinstance(items, dict):
        return {k: v for k, v in items.items() if k != index}
    if not isinstance(items, list):
        raise TypeError(f"pop() of a {type(items).__name__} is differentiated for a list or a "
                        "dict")
    at = index + len(items) if index < 0 else index
    return [*items[:at], *items[at + 1:]]


def unpop(g, items, index=-1):
    """The gradient of ``items`` from its ``popped`` copy's ``g``: a zero entry put back at
    ``index`` (the popped value's gradient is its read's)."""
    if isinstance(items, dict):
        out = {k: g[k] if k != index and not is_zero(g) and k in g else zeros_of(v)
               for k, v in items.items()}
        return GradDict(out)
    at = index + len(items) if index < 0 else index
    rest = [zeros_of(v) for i, v in enumerate(items) if i != at] if is_zero(g) else list(g)
    return GradList([*rest[:at], zeros_of(items[at]), *rest[at:]])


def popped_tangent(t_items, items, index=-1):
    """The tangent of ``popped(items, index)``: the items' tangents, that one's left out."""
    if isinstance(items, dict):
        return GradDict({k: t_items[k] for k in items if k != index})
    at = index + len(items) if index < 0 else index
    return GradList([t for i, t in enumerate(t_items) if i != at])


def extended(items, more):
    """``items + list(more)`` as a new list: ``xs.extend(ys)``, without mutation."""
    return [*items, *more]


def extended_tangent(t_items, t_more):
    """Tangent of ``rt.extended(items, more)``: the items' tangents, then ``more``'s."""
    return GradList([*t_items, *t_more])


def unappend(g, n=1):
    """The gradient of the list ``appended`` (``extended``) received: all but the last ``n``
    items' gradients."""
    return g[:len(g) - n] if is_array(g) else GradList(g[:len(g) - n])


def last(g, n):
    """The gradients of the last ``n`` items of a list (the ones ``extended`` added)."""
    return g[len(g) - n:] if is_array(g) else GradList(g[len(g) - n:])


def _add_present(a, b):
    """``a + b`` where None stands for an absent entry (both are None, or neither)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def add_pairs(*tuples) -> GradTuple:
    """Item-by-item sums of tuples of equal length (None entries stay None)."""
    out = list(tuples[0])
    for t in tuples[1:]:
        out = [_add_present(a, b) for a, b in zip(out, t, strict=True)]
    return GradTuple(out)



def list_tangent(t, iterable, ans):
    """Tangent of ``list(iterable)`` / ``tuple(iterable)`` (``ans``): the items' tangents (a
    dict's keys have none)."""
    if isinstance(iterable, dict):
        return zeros_of(ans)
    return GradTuple(t) if isinstance(ans, tuple) else GradList(t)


def listed(items):
    """The tangents of a list result (``np.split``...) as a gradient list (``+`` adds items)."""
    return GradList(items)
