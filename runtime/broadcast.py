"""Broadcasting and accumulation: undo broadcasting and reductions in the adjoint sweep, seed
the sweep, make zero gradients and give a gradient (or tangent) the shape and dtype of its value.

Each helper's transpose (its adjoint, for reverse over reverse) sits next to it
(``unbroadcast``/``broadcast_like``, ``unreduce``/``reduce_like``); the tangents of these
helpers are the helpers themselves applied to the tangent (``transpiler/rules/runtime_rules.py``).
``tangent_array`` and ``result_like`` are the shape fix-ups the tangent helpers of the other
families share.
"""

from __future__ import annotations

import math

import numpy as np

from runtime.arrays import (
    ShapeOf,
    array_copy,
    as_like,
    asarray,
    float_dtype,
    is_array,
    is_lazy,
    is_zero,
    library,
    size,
    zeros,
)
from runtime.containers import CONTAINERS, GradTuple, unindex_container, zero_entry, zeros_of
from runtime.objects import (
    GradFields,
    differentiable_value,
    field_names,
    gradient_object,
    is_object,
)
from runtime.sparse import SparseGrad, is_sparse, sparse_grad_like, sparse_unindex

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
        if not is_array(g):
            return g
        return g.sum() if g.ndim else g
    if isinstance(like, CONTAINERS):
        if _same_structure(g, like):  # (a container stored whole: d[k] = {...}, xs[i] = [...])
            return g
        raise TypeError(f"arithmetic on a {type(like).__name__} of differentiated values (such as "
                        "concatenating or repeating it) cannot be differentiated; use arrays")
    shape = np.shape(like)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    g = asarray(g)
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


def _same_structure(g, like) -> bool:
    """Whether ``g`` is a gradient shaped like the container ``like``: a dict's of its keys, a
    list's or tuple's of its length."""
    if isinstance(like, dict):
        return isinstance(g, dict) and g.keys() == like.keys()
    return isinstance(g, (list, tuple)) and len(g) == len(like)


_SMALL = 4096  # below this many elements, a filled array costs less than a broadcast view


def unreduce(g, like, axis=None, keepdims=False):
    """Spread ``g``, the gradient of a reduction of ``like`` over ``axis``, to ``like``'s shape.

    ``axis`` may be None, an int or a tuple of ints (negative allowed). Without ``keepdims`` the
    reduced axes are re-inserted first. The result is a read-only broadcast view: no copy is
    made (a small NumPy array's is a filled array: faster to make than a view).
    """
    if type(like) in _SCALARS:
        return g
    if type(like) is np.ndarray and like.size <= _SMALL \
            and type(g) in (float, np.float64, np.float32):  # a filled array: faster, small
        # (a scalar ``g``: the reduction was over every axis, whichever ``axis`` names them)
        out = np.empty(like.shape, float if type(g) is float else g.dtype)
        out.fill(g)
        return out
    shape = np.shape(like)
    g = asarray(g)
    if axis is not None and not keepdims:
        axes = (int(axis),) if np.ndim(axis) == 0 else tuple(axis)
        ndim = len(shape)
        g = np.expand_dims(g, tuple(sorted(a % ndim for a in axes)))
    return np.broadcast_to(g, shape)


def _basic(index) -> bool:
    """True for an index that selects each element at most once (no integer arrays)."""
    if isinstance(index, tuple):
        return all(_basic(i) for i in index)
    if is_array(index):
        return index.dtype == bool
    return isinstance(index, (int, np.integer, slice, type(None), type(Ellipsis)))


def unindex(g, like, index):
    """The gradient of ``like[index]`` spread back to ``like``'s shape: zeros elsewhere.

    Integer-array indices may repeat an element; their contributions are summed. For a tuple,
    list or dict ``like`` the result is a gradient container of the same structure.
    """
    if type(like) is np.ndarray and (type(index) is slice or type(index) is int) \
            and like.dtype.kind == "f" and type(g) in (np.ndarray, float, np.float64):
        # (the common case, kept cheap)
        out = np.zeros(like.shape, np.result_type(g, like.dtype))
        out[index] = g
        return out
    if isinstance(like, CONTAINERS):
        return unindex_container(g, like, index)
    if isinstance(like, SparseGrad):  # (a sparse gradient's tangent: rt.add_into's)
        return SparseGrad(like.shape).added(index, g)
    kind = getattr(like, "dtype", None)
    out = zeros(np.shape(like), np.result_type(g, kind if kind is not None and kind.kind == "f"
                                               else float), like=_foreign(like, g))
    if _basic(index):
        out[index] = g
    elif type(out) is np.ndarray:
        np.add.at(out, index, g)
    else:
        raise TypeError(f"the gradient of indexing a {library(out)} array with an integer array "
                        "(which may select an element twice) is computed with np.add.at, which "
                        "only NumPy has; index with slices or a boolean mask, or use NumPy arrays")
    return out


def _foreign(*values):
    """The first of ``values`` that is an array of another library than NumPy (None if none
    is): the array whose namespace new arrays are made in."""
    return next((v for v in values if type(v) is not np.ndarray and is_array(v)), None)


def written(g, index):
    """``g[index]``, the gradient of the value ``v`` of ``a[index] = v``, where an element the
    index selects several times (a repeated integer) passes its gradient to its last write
    only: the one NumPy keeps. An array comes back as a copy (``g`` is zeroed there next)."""
    if isinstance(g, SparseGrad):  # (a sparse matrix's gradient: read at coordinates)
        return g.written(index)
    part = g[index]
    if isinstance(g, CONTAINERS):
        return part
    if _basic(index):
        return array_copy(part) if is_array(part) else part
    return np.where(_last_writes(np.shape(g), index), part, 0)


def unwritten(d, like, index):
    """The transpose of ``written(g, index)``: ``d`` spread back to ``like``'s shape, each
    element from its last write."""
    if isinstance(like, CONTAINERS) or _basic(index):
        return unindex(d, like, index)
    return unindex(np.where(_last_writes(np.shape(like), index), d, 0), like, index)


def _last_writes(shape: tuple, index):
    """For ``a[index]`` of an array of ``shape``: True where the element selected is the last
    selection of its position (what ``a[index] = v`` keeps of ``v``)."""
    selected = np.arange(int(np.prod(shape))).reshape(shape)[index]
    positions = selected.ravel()
    last = np.zeros(positions.size, dtype=bool)
    _, first_of_reversed = np.unique(positions[::-1], return_index=True)
    last[positions.size - 1 - first_of_reversed] = True
    return last.reshape(np.shape(selected))


def added_at(a, index, b):
    """``np.add.at(a, index, b)`` as a function: a copy of ``a`` with ``b`` added at ``index``
    (an element the index selects several times gets each addition), ``a`` unchanged."""
    if is_lazy(a) or is_lazy(b):
        raise TypeError("np.add.at is a scatter-add, which Dask arrays do not have: compute "
                        "the array first (x.compute()), or keep the operation to NumPy arrays")
    out = array_copy(asarray(a))
    np.add.at(out, index, b)
    return out


def subtracted_at(a, index, b):
    """``np.subtract.at(a, index, b)`` as a function (``a`` unchanged)."""
    if is_lazy(a) or is_lazy(b):
        raise TypeError("np.subtract.at is a scatter-add, which Dask arrays do not have: "
                        "compute the array first (x.compute()), or keep the operation to "
                        "NumPy arrays")
    out = array_copy(asarray(a))
    np.subtract.at(out, index, b)
    return out


def _scattered(name: str, *values) -> None:
    if any(is_lazy(v) for v in values):
        raise TypeError(f"np.{name} writes in place, which Dask arrays do not do: compute the "
                        "array first (x.compute()), or keep the operation to NumPy arrays")


def multiplied_at(a, index, b):
    """``np.multiply.at(a, index, b)`` as a function (``a`` unchanged): each selection of an
    element multiplies it once more."""
    _scattered("multiply.at", a, b)
    out = array_copy(asarray(a))
    np.multiply.at(out, index, b)
    return out


def _factors(a, index, b):
    """For ``np.multiply.at(a, index, b)``: the flat position each factor multiplies, the
    factors (``b`` broadcast to the selection), each position's product of them, and each
    factor's product of the others at its position (exact where factors are zero)."""
    a = asarray(a)
    selected = np.arange(a.size).reshape(a.shape)[index]
    factors = np.broadcast_to(b, np.shape(selected)).ravel().astype(float)
    pos = np.ravel(selected)
    zero = factors == 0
    nonzero = np.ones(a.size)
    np.multiply.at(nonzero, pos, np.where(zero, 1.0, factors))
    zeros = np.bincount(pos, zero, minlength=a.size)
    whole = np.where(zeros > 0, 0.0, nonzero)
    with np.errstate(divide="ignore", invalid="ignore"):
        others = np.where(zero, np.where(zeros[pos] == 1, nonzero[pos], 0.0),
                          np.where(zeros[pos] > 0, 0.0, nonzero[pos] / np.where(zero, 1.0,
                                                                                factors)))
    return pos, np.shape(selected), whole.reshape(a.shape), others


def multiplied_at_grad(g, a, index, b):
    """``(a's gradient, b's)`` of ``np.multiply.at(a, index, b)``: ``g`` times each element's
    product of its factors, and for each factor ``g a`` times the product of the others
    multiplying the same element."""
    pos, shape, whole, others = _factors(a, index, b)
    g = asarray(g)
    gb = (g.ravel()[pos] * asarray(a).ravel()[pos] * others).reshape(shape)
    return g * whole, unbroadcast(gb, b)


def _others_tangent(pos, factors, dfactors):
    """For each factor ``k`` of ``np.multiply.at``, the tangent of the product of the others
    multiplying its element: ``sum_{j != k} df_j prod_{i != k, j} f_i``, as the dual part of
    the products before and after it in its element's group (exact where factors are zero)."""
    order = np.argsort(pos, kind="stable")
    p, f, df = pos[order], factors[order], dfactors[order]
    n = p.size
    start = np.ones(n, dtype=bool)
    start[1:] = p[1:] != p[:-1]
    end = np.ones(n, dtype=bool)
    end[:-1] = start[1:]
    rank = np.arange(n) - np.maximum.accumulate(np.where(start, np.arange(n), 0))
    back = np.minimum.accumulate(np.where(end, np.arange(n), n)[::-1])[::-1] - np.arange(n)
    before, dbefore = np.ones(n), np.zeros(n)  # (the dual product of the factors before)
    for r in range(1, int(rank.max(initial=0)) + 1):
        t = np.flatnonzero(rank == r)
        before[t] = before[t - 1] * f[t - 1]
        dbefore[t] = dbefore[t - 1] * f[t - 1] + before[t - 1] * df[t - 1]
    after, dafter = np.ones(n), np.zeros(n)  # (and after)
    for r in range(1, int(back.max(initial=0)) + 1):
        t = np.flatnonzero(back == r)
        after[t] = after[t + 1] * f[t + 1]
        dafter[t] = dafter[t + 1] * f[t + 1] + after[t + 1] * df[t + 1]
    out = np.empty(n)
    out[order] = dbefore * after + before * dafter
    return out


def multiplied_at_grad_tangent(dg, da, db, g, a, index, b):
    """Tangent of ``multiplied_at_grad(g, a, index, b)`` (forward over reverse): ``a``'s
    ``g * whole`` moves as ``dg * whole + g * dwhole``; each factor's ``g a others`` as the
    product's, ``others``' tangent the dual part of the other factors' product."""
    pos, shape, whole, others = _factors(a, index, b)
    a = asarray(a)
    g = asarray(g)
    dg = np.zeros(a.shape) if is_zero(dg) else asarray(dg)
    da = np.zeros(a.shape) if is_zero(da) else asarray(da)
    dfactors = np.zeros(pos.size) if is_zero(db) else \
        np.broadcast_to(db, shape).ravel().astype(float)
    factors = np.broadcast_to(b, shape).ravel().astype(float)
    dwhole = np.bincount(pos, others * dfactors, minlength=a.size).reshape(a.shape)
    dothers = _others_tangent(pos, factors, dfactors)
    gf, af = g.ravel()[pos], a.ravel()[pos]
    dgb = (dg.ravel()[pos] * af * others + gf * da.ravel()[pos] * others + gf * af * dothers)
    return GradTuple((dg * whole + g * dwhole, unbroadcast(dgb.reshape(shape), b)))


def multiplied_at_tangent(da, db, a, index, b):
    """The tangent of ``np.multiply.at(a, index, b)``: ``da`` times the products, plus ``a`` times
    each factor's tangent times the other factors, summed per element."""
    pos, shape, whole, others = _factors(a, index, b)
    out = np.zeros(np.shape(a)) if is_zero(da) else asarray(da) * whole
    if not is_zero(db):
        dfactors = np.broadcast_to(db, shape).ravel()
        flat = np.zeros(np.size(a))
        np.add.at(flat, pos, asarray(a).ravel()[pos] * others * dfactors)
        out = out + flat.reshape(np.shape(a))
    return out


def put_index(a, ind, mode="raise"):
    """The index of ``a`` that ``np.put(a, ind, v, mode)`` writes (flat positions resolved by
    ``mode``: negative from the end, wrapped or clipped), as a tuple of arrays."""
    size = int(np.size(a))
    pos = np.asarray(ind, dtype=np.intp).ravel()
    if mode == "wrap":
        pos = pos % size
    elif mode == "clip":
        pos = np.clip(pos, 0, size - 1)
    else:
        pos = np.where(pos < 0, pos + size, pos)
    return np.unravel_index(pos, np.shape(a))


def put(a, ind, v, mode="raise"):
    """``np.put(a, ind, v, mode)`` as a function (``a`` unchanged)."""
    _scattered("put", a, v)
    out = array_copy(asarray(a))
    np.put(out, ind, v, mode=mode)
    return out


def put_grad(g, a, ind, v, mode="raise"):
    """``(a's gradient, v's)`` of ``np.put(a, ind, v, mode)``: ``v``'s entries (repeated in turn
    to the length of ``ind``) get the gradient of the positions they were last written to, and
    ``a``'s is zero there."""
    index = put_index(a, ind, mode)
    part = written(asarray(g), index)
    count = max(int(np.size(v)), 1)
    gv = np.bincount(np.arange(part.size) % count, np.ravel(part), minlength=count)
    return zero_index(g, index), gv.reshape(np.shape(v)) if np.ndim(v) else float(gv[0])


def put_grad_tangent(dg, g, a, ind, v, mode="raise"):
    """The tangent of ``put_grad`` (forward over reverse): linear in ``g``, whose values alone
    it reads."""
    if is_zero(dg):
        return (np.zeros(np.shape(a)), np.zeros(np.shape(v)) if np.ndim(v) else 0.0)
    return put_grad(dg, a, ind, v, mode)


def put_tangent(da, dv, a, ind, v, mode="raise"):
    """The tangent of ``np.put(a, ind, v, mode)``: ``da`` with ``dv`` put in its place."""
    out = np.zeros(np.shape(a)) if is_zero(da) else array_copy(asarray(da), float)
    np.put(out, ind, 0.0 if is_zero(dv) else dv, mode=mode)
    return out


def along_axis_index(a, indices, axis):
    """The index ``np.put_along_axis(a, indices, values, axis)`` (and ``take_along_axis``)
    writes: ``indices`` along ``axis`` beside each other axis's positions (``axis=None``:
    positions of the flattened array)."""
    shape = np.shape(a)
    indices = np.asarray(indices, dtype=np.intp)
    if axis is None:
        size = int(np.prod(shape))
        return np.unravel_index(np.where(indices < 0, indices + size, indices), shape)
    axis = axis % len(shape)
    fancy = []
    for dim, n in enumerate(shape):
        if dim == axis:
            fancy.append(np.where(indices < 0, indices + n, indices))
        else:
            fancy.append(np.arange(n).reshape([n if i == dim else 1
                                               for i in range(len(shape))]))
    return tuple(fancy)


def put_along(a, indices, values, axis):
    """``np.put_along_axis(a, indices, values, axis)`` as a function (``a`` unchanged)."""
    _scattered("put_along_axis", a, values)
    out = array_copy(asarray(a))
    np.put_along_axis(out, indices, values, axis)
    return out


def put_along_tangent(da, dv, a, indices, values, axis):
    """The tangent of ``np.put_along_axis(a, indices, values, axis)``: ``da`` with ``dv`` put in
    its place (where an index repeats, the last write's, as NumPy keeps)."""
    out = np.zeros(np.shape(a)) if is_zero(da) else array_copy(asarray(da), float)
    dv = np.zeros(np.shape(values)) if is_zero(dv) else dv
    np.put_along_axis(out, np.asarray(indices), dv, axis)
    return out


def zero_index(g, index):
    """A copy of ``g`` with ``g[index]`` zeroed: the gradient of an array before ``a[index] = v``
    overwrote those elements (for a tuple, list or dict ``g``: that entry)."""
    if type(g) is np.ndarray and g.dtype.kind in "fc":
        out = g.copy()
    elif isinstance(g, CONTAINERS):
        return zero_entry(g, index)
    elif isinstance(g, SparseGrad) or is_sparse(g):  # (a sparse gradient or tangent)
        out = g.copy()
    else:
        kind = getattr(g, "dtype", np.dtype(float))
        out = array_copy(g, kind if kind.kind in "fc" else np.dtype(float))
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
    if isinstance(g, SparseGrad):
        return g.added(index, part)
    if is_sparse(g):  # (a sparse tangent: no in-place update of its pattern)
        return g + sparse_unindex(part, g, index)
    if is_array(g):  # (another library's array: no in-place update)
        return g + unindex(part, g, index)
    return g + unindex_container(part, g, index)


def broadcast_like(d, g):
    """The transpose of ``unbroadcast(g, like)``: ``d`` spread back to ``g``'s shape."""
    if type(d) is np.ndarray and type(g) is np.ndarray and d.shape == g.shape:
        return d  # (the common case, kept cheap)
    if isinstance(g, (*CONTAINERS, GradFields)):  # a container's or object's gradient: as it is
        return d
    shape = np.shape(g)
    return d if np.shape(d) == shape else np.broadcast_to(d, shape)


def reduce_like(d, g, axis=None, keepdims=False):
    """The transpose of ``unreduce(g, like, axis, keepdims)``: ``d`` summed over the axes the
    reduction removed, back to ``g``'s shape."""
    if axis is None and type(d) is np.ndarray and type(g) is np.ndarray and d.shape == g.shape:
        return d  # (the common case, kept cheap)
    if np.ndim(d) == np.ndim(g):
        return d if axis is None and np.shape(d) == np.shape(g) else \
            np.sum(d, axis=axis, keepdims=True).reshape(np.shape(g))
    summed = np.sum(d, axis=axis, keepdims=keepdims)
    return summed.reshape(np.shape(g)) if np.ndim(g) else summed


def seed(out):
    """The gradient of a scalar result with respect to itself (1, in the result's dtype).

    Raises TypeError when ``out`` is not a real scalar: ``grad`` needs a single real number.
    """
    if type(out) is float:
        return 1.0
    if type(out) is complex or getattr(getattr(out, "dtype", None), "kind", "") == "c":
        raise TypeError("grad needs a real-valued function, but it returned a complex value; "
                        "complex numbers are not supported")
    if (size(out) if is_array(out) else np.size(out)) != 1 or isinstance(out, (tuple, list, dict)):
        kind = type(out).__name__ if not is_array(out) or isinstance(out, np.ndarray) else \
            f"{library(out)} array"
        shape = f" of shape {np.shape(out)}" if hasattr(out, "shape") else ""
        pair = "; for a function returning (value, aux), pass has_aux=True" \
            if isinstance(out, tuple) else ""
        raise TypeError(
            f"grad needs a function returning a scalar, but it returned a {kind}{shape}; "
            f"reduce it first (e.g. np.sum) or use a Jacobian{pair}"
        )
    if is_array(out):
        return np.ones_like(out)
    return 1.0


def zeros_like_grad(x):
    """A zero gradient mirroring ``x``: 0.0 for a scalar, else a float array of ``x``'s shape
    (or a gradient container for a tuple, list or dict)."""
    if type(x) is np.ndarray:  # (the common case, kept cheap)
        return np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else float)
    if isinstance(x, (np.ndarray, ShapeOf)) or is_array(x):
        return zeros(x.shape, x.dtype if x.dtype.kind in "fc" else float, like=_foreign(x))
    if isinstance(x, CONTAINERS):
        return zeros_of(x)
    if is_sparse(x):  # (a sparse matrix's gradient: one with no terms, read at coordinates)
        return SparseGrad(x.shape)
    return 0.0


def zero_tangent(x):
    """A zero tangent for value ``x``, of its type: an object's (a dataclass, a NamedTuple) is an
    instance of it with zero fields, as jvp returns tangents of objects; otherwise
    ``zeros_like_grad(x)`` (a sparse matrix's: an empty one of its format)."""
    if type(x) is not np.ndarray and type(x) is not float and is_sparse(x):
        return type(x)(x.shape, dtype=float)
    if type(x) is not np.ndarray and type(x) is not float and is_object(x):
        return gradient_object(0.0, x, tangent_like)
    return zeros_like_grad(x)


def grad_like(g, x):
    """Return gradient ``g`` shaped and typed like its argument ``x``.

    A float argument gets a float, an array gets a fresh writable array of the same shape and
    dtype (float32 in, float32 out). Gradients that are broadcast views are materialised. An
    array of another library gets an array of its own (a Dask array a lazy Dask array); a lazy
    gradient of a NumPy array or a number stays lazy, of the right shape and dtype, for the
    caller to compute together with the rest (``arrays.concrete``).
    """
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape \
            and g.dtype is x.dtype and g.flags.writeable:  # (the common case, first)
        return g
    if type(x) is not np.ndarray and is_array(x):
        if x.dtype.kind != "c":  # (a complex argument's gradient is complex: JAX's)
            _refuse_complex(g)
        return as_like(g, x)
    if is_lazy(g):
        if getattr(getattr(x, "dtype", None), "kind", "") != "c":
            _refuse_complex(g)
        if is_array(x):
            return np.broadcast_to(g, x.shape).astype(x.dtype)
        return g
    if is_array(x):
        if type(g) is not np.ndarray or g.dtype != x.dtype or not g.flags.writeable:
            if x.dtype.kind != "c":  # (a complex argument's gradient is complex: JAX's)
                _refuse_complex(g)
            g = np.array(np.broadcast_to(g, x.shape), dtype=x.dtype)
        elif g.shape != x.shape:
            g = g.reshape(x.shape)
        return g
    if isinstance(x, CONTAINERS):  # (two entries' gradients may be one array: distinct)
        return distinct(gradient_object(g, x, grad_like) if is_object(x) else _plain(g, x))
    if is_sparse(x):  # (a sparse matrix's: of its format, on its stored entries)
        return sparse_grad_like(g, x)
    if type(x) is not float and is_object(x):  # a dataclass or class instance: of its type
        return distinct(gradient_object(g, x, grad_like))
    if isinstance(x, (str, bytes)) or x is None:  # in a container: copied, as an object's
        return x
    if type(x) is complex:  # (JAX's gradient of a complex number: complex)
        return complex(g)
    _refuse_complex(g)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    return float(g)


def copy_tangent(t, ans):
    """The tangent of ``np.copy(a)`` or of the method ``a.copy()``, ``ans`` the copy: a copy of
    the tangent ``t``, a dict's or a list's when ``ans`` is one (``state.copy()``, which a
    derivative's own code writes into), else an array's."""
    if isinstance(ans, (dict, list)) or is_zero(t):
        return type(t)(t) if isinstance(t, (dict, list)) else t
    return np.copy(t)


def copied(g):
    """A copy of gradient ``g`` that may be an argument's own array (passes/finalize.py): its
    arrays copied, in containers too."""
    if isinstance(g, np.ndarray):
        return g.copy()
    if type(g) in (list, tuple):
        items = [copied(v) for v in g]
        return items if type(g) is list else tuple(items)
    if type(g) is dict:
        return {k: copied(v) for k, v in g.items()}
    return g


def distinct(grads):
    """``grads`` (the gradients a call returns: a tuple of them, or one container or object)
    with each float array that may share memory with one met before it copied, so that each
    gradient is an array of its own, as if computed alone: ``x + y`` gives ``x`` and ``y`` one
    gradient array otherwise, and writing into one would change the other. Only what
    ``grad_like`` made is walked into (fields without gradients are the argument's own)."""
    if type(grads) is tuple and all(type(g) is np.ndarray and g.base is None for g in grads) \
            and len({id(g) for g in grads}) == len(grads):
        return grads  # (arrays owning their memory, each once: none shares another's)
    seen: dict[int, list] = {}  # id of the array owning the memory -> the arrays met using it

    def own(g):
        if type(g) is np.ndarray:
            if g.dtype.kind not in "fc":
                return g
            root = g
            while isinstance(root.base, np.ndarray):
                root = root.base
            met = seen.setdefault(id(root), [])
            if any(np.may_share_memory(g, m) for m in met):
                g = g.copy()
                met = seen.setdefault(id(g), [])
            met.append(g)
            return g
        if type(g) in (tuple, list):
            items = [own(v) for v in g]
            return items if type(g) is list else tuple(items)
        if type(g) is dict:
            return {k: own(v) for k, v in g.items()}
        if isinstance(g, tuple) and hasattr(type(g), "_fields"):  # a NamedTuple's gradient
            return type(g)(*[own(v) if differentiable_value(v) else v for v in g])
        if is_object(g):  # a gradient object (objects.gradient_object): a copy of its own
            for name in field_names(g):
                value = getattr(g, name)
                if differentiable_value(value):
                    new = own(value)
                    if new is not value:
                        object.__setattr__(g, name, new)
        return g

    return own(grads)


def _plain(g, like):
    """A container gradient as the plain structure of its argument ``like``."""
    if isinstance(like, dict):
        return {k: grad_like(g[k], v) for k, v in like.items()}
    items = [grad_like(a, b) for a, b in zip(g, like, strict=True)]
    return tuple(items) if isinstance(like, tuple) else items


def _refuse_complex(g) -> None:
    if type(g) is complex or getattr(getattr(g, "dtype", None), "kind", "") == "c":
        raise TypeError("the gradient came out complex: the function computes with complex "
                        "numbers, which is not supported")


def tangent_like(t, value):
    """Return tangent ``t`` shaped and typed like the result ``value`` it belongs to (a float
    for a number, an array of the value's shape and floating dtype, a tuple/list for one)."""
    if type(value) is np.ndarray and value.dtype.kind == "f":  # (the common case, first)
        return grad_like(t, value)
    if is_object(value):
        return gradient_object(t, value, tangent_like)
    if isinstance(value, (tuple, list)):
        return type(value)(tangent_like(a, v) for a, v in zip(t, value, strict=True))
    if isinstance(value, dict):
        return {k: tangent_like(t[k], v) for k, v in value.items()}
    if is_array(value) and value.dtype.kind != "f":
        kind = value.dtype if value.dtype.kind == "c" else np.dtype(float)  # (complex: its own)
        if type(value) is not np.ndarray:
            return as_like(t, value, kind)
        return np.array(np.broadcast_to(t, value.shape), dtype=kind)
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return float(t)
    return grad_like(t, value)


def tangent_array(t, like):
    """Tangent ``t`` as an array of ``like``'s shape (a Python zero becomes zeros)."""
    shape = np.shape(like)
    if is_zero(t):
        return zeros(shape, float_dtype(like), like=_foreign(like))
    t = asarray(t)
    return t if t.shape == shape else np.broadcast_to(t, shape)


def result_like(t, ans):
    """``t`` with the shape of ``ans`` and its dtype when floating (a NumPy scalar for a scalar
    ``ans``)."""
    t = asarray(t)
    kind = getattr(ans, "dtype", None)
    if kind is not None and kind.kind in "fc":
        if t.dtype != kind:
            t = t.astype(kind)
    elif t.dtype.kind not in "fc":
        t = t.astype(float)
    shape = np.shape(ans)
    if t.shape != shape:
        t = np.reshape(t, shape) if t.size == math.prod(shape) else np.broadcast_to(t, shape)
    return t if is_array(ans) else t[()]

