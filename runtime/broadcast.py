"""Shape helpers: undo broadcasting and reductions in the adjoint sweep."""

from __future__ import annotations

import numpy as np

from runtime.containers import CONTAINERS, unindex_container
from runtime.stand_in import ShapeOf

_SCALARS = (float, int)


def unbroadcast(g, like):
    """Sum ``g`` down to the shape of ``like``.

    ``like`` was broadcast against other operands in the primal, so ``g`` (shaped like the
    result) may carry extra leading axes and axes where ``like`` had length 1. Those are summed
    away. A Python-scalar ``like`` gets a scalar back. The common case (same shape) costs two
    type checks or one shape comparison and returns ``g`` itself.
    """
    kind = type(like)
    if type(g) is np.ndarray and (kind is np.ndarray or kind is ShapeOf):
        if g.shape == like.shape:  # the common case, kept cheap
            return g
    elif kind in _SCALARS or isinstance(like, np.generic):  # a number, or a NumPy scalar
        if type(g) is not np.ndarray:
            return g
        return g.sum() if g.ndim else g
    if isinstance(like, CONTAINERS):
        raise TypeError(f"arithmetic on a {type(like).__name__} of differentiated values (such as "
                        "concatenating or repeating it) cannot be differentiated; use arrays")
    shape = np.shape(like)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    elif extra < 0:  # fewer axes than ``like``: the missing ones are leading and of length 1
        g = g.reshape((1,) * -extra + g.shape)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if g.shape != shape:  # ``like`` is larger: only a size-1 seed reaches here
        g = np.broadcast_to(g, shape)
    return g


def unreduce(g, like, axis=None, keepdims=False):
    """Spread ``g``, the gradient of a reduction of ``like`` over ``axis``, to ``like``'s shape.

    ``axis`` may be None, an int or a tuple of ints (negative allowed). Without ``keepdims`` the
    reduced axes are re-inserted first. The result is a read-only broadcast view: no copy is made.
    """
    shape = np.shape(like)
    if type(like) in _SCALARS:
        return g
    g = np.asarray(g)
    if axis is not None and not keepdims:
        axes = (int(axis),) if np.ndim(axis) == 0 else tuple(axis)
        ndim = len(shape)
        g = np.expand_dims(g, tuple(sorted(a % ndim for a in axes)))
    return np.broadcast_to(g, shape)


def _basic(index) -> bool:
    """True for an index that selects each element at most once (no integer arrays)."""
    if isinstance(index, tuple):
        return all(_basic(i) for i in index)
    if isinstance(index, np.ndarray):
        return index.dtype == bool
    return isinstance(index, (int, np.integer, slice, type(None), type(Ellipsis)))


def unindex(g, like, index):
    """The gradient of ``like[index]`` spread back to ``like``'s shape: zeros elsewhere.

    Integer-array indices may repeat an element; their contributions are summed. For a tuple,
    list or dict ``like`` the result is a gradient container of the same structure.
    """
    if isinstance(like, CONTAINERS):
        return unindex_container(g, like, index)
    kind = getattr(like, "dtype", None)
    out = np.zeros(np.shape(like), dtype=np.result_type(g, kind if kind is not None and
                                                         kind.kind == "f" else float))
    if _basic(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def zero_index(g, index):
    """A copy of ``g`` with ``g[index]`` zeroed: the gradient of an array before ``a[index] = v``
    overwrote those elements."""
    if type(g) is np.ndarray and g.dtype.kind == "f":
        out = g.copy()
    else:
        kind = getattr(g, "dtype", np.dtype(float))
        out = np.array(g, dtype=kind if kind.kind == "f" else float, copy=True)
    out[index] = 0
    return out


def add_into(g, index, part):
    """``g + unindex(part, g, index)`` computed in place: ``g[index] += part``, returning ``g``.

    Only for a gradient array the adjoint has just created (``rt.unindex``, ``rt.zero_index``)
    and nothing else refers to; the compiler checks that before emitting this call.
    """
    if type(g) is np.ndarray:
        if type(index) is slice or type(index) is int or _basic(index):
            g[index] += part
        else:
            np.add.at(g, index, part)
        return g
    return g + unindex_container(part, g, index)


def broadcast_like(d, g):
    """The transpose of ``unbroadcast(g, like)``: ``d`` spread back to ``g``'s shape."""
    shape = np.shape(g)
    return d if np.shape(d) == shape else np.broadcast_to(d, shape)


def reduce_like(d, g, axis=None, keepdims=False):
    """The transpose of ``unreduce(g, like, axis, keepdims)``: ``d`` summed over the axes the
    reduction removed, back to ``g``'s shape."""
    if np.ndim(d) == np.ndim(g):
        return d if axis is None and np.shape(d) == np.shape(g) else \
            np.sum(d, axis=axis, keepdims=True).reshape(np.shape(g))
    summed = np.sum(d, axis=axis, keepdims=keepdims)
    return summed.reshape(np.shape(g)) if np.ndim(g) else summed
