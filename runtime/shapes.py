"""Shape functions: the adjoints of functions that move, copy, join, split, pad or select
elements (``unblock`` for ``np.block``, ``unpad`` for ``np.pad``...), each next to the tangent of
the function it undoes (``block_tangent``, ``pad_tangent``: ``<function>_tangent``).
"""

from __future__ import annotations

import numpy as np

from runtime.arrays import ShapeOf, asarray, is_array, is_lazy, size
from runtime.broadcast import result_like, unbroadcast
from runtime.containers import GradList, GradTuple


def unconcatenate(g, arrays, axis=0):
    """Split the gradient of ``np.concatenate(arrays, axis)`` into one piece per input (one
    array, when ``arrays`` was itself an array whose rows were joined)."""
    if axis == 0 and type(g) is np.ndarray and type(arrays) is list \
            and all(type(a) is np.ndarray and a.ndim for a in arrays):  # (the common case)
        pieces, start = [], 0
        for a in arrays:
            pieces.append(g[start:start + a.shape[0]])
            start += a.shape[0]
        return GradTuple(pieces)
    if is_array(arrays):
        return np.stack(unconcatenate(g, list(arrays), axis))
    if axis is None:
        g = np.ravel(g)
        pieces = split_sizes(g, [size(a) for a in arrays], 0)
        return GradTuple(p.reshape(np.shape(a)) for p, a in zip(pieces, arrays, strict=True))
    sizes = [np.shape(a)[axis] for a in arrays]
    return GradTuple(split_sizes(g, sizes, axis))


def split_sizes(g, sizes, axis: int) -> list:
    """``g`` cut along ``axis`` into consecutive pieces of ``sizes`` (``np.split`` at their
    running sums, by slicing: every array library slices, not every one has ``np.split``)."""
    head, pieces, start = (slice(None),) * (axis % np.ndim(g)), [], 0
    for n in sizes:
        pieces.append(g[head + (slice(start, start + n),)])
        start += n
    return pieces


def sorted_order(items, key=None, reverse=False) -> list[int]:
    """The permutation ``sorted`` applies: ``sorted(items, key=key, reverse=reverse)[j]`` is
    ``items[order[j]]`` (Python's sort, stable either way, run on the positions)."""
    values = list(items)
    if key is None:
        return sorted(range(len(values)), key=values.__getitem__, reverse=reverse)
    return sorted(range(len(values)), key=lambda i: key(values[i]), reverse=reverse)


def unsorted(g, items, key=None, reverse=False):
    """The gradient of ``sorted(items, ...)`` (a list) sent back to ``items``: each item's is
    its place's in the sorted list (ties: the order the stable sort left them in)."""
    if not isinstance(items, (list, tuple)) and not is_array(items):
        raise TypeError(f"sorted() of a {type(items).__name__} is differentiated for a list, a "
                        "tuple or an array: make it a list first")
    order = sorted_order(items, key, reverse)
    parts = [None] * len(order)
    for j, i in enumerate(order):
        parts[i] = g[j]
    return _sequence(parts, items)


def sorted_tangent(t_items, items, key=None, reverse=False):
    """The tangent of ``sorted(items, ...)``: the items' tangents in the sorted order."""
    return GradList(t_items[i] for i in sorted_order(items, key, reverse))


def _matched(a, ans, axis):
    """Where each rank's element of ``a`` is, in ``a`` and in ``ans``, a permutation of it
    along ``axis`` (``np.partition``'s result, whose order inside a part NumPy leaves open):
    their stable argsorts, which pair equal values (a tie's gradient goes to one of them)."""
    a = np.asarray(a)
    if axis is None:
        a, axis = np.ravel(a), -1
    return np.argsort(a, axis=axis, kind="stable"), np.argsort(ans, axis=axis,
                                                               kind="stable"), axis


def unpermuted(g, a, ans, axis=-1):
    """The gradient of ``ans``, a permutation of ``a`` along ``axis`` (``np.partition``), sent
    back to the elements of ``a`` it came from."""
    src, dst, along = _matched(a, ans, axis)
    out = np.zeros(src.shape, np.result_type(g, float))
    g = np.broadcast_to(np.asarray(g), dst.shape)
    np.put_along_axis(out, src, np.take_along_axis(g, dst, along), along)
    return out.reshape(np.shape(a))


def permuted_tangent(t, a, ans, axis=-1):
    """The tangent of ``ans``, a permutation of ``a`` along ``axis`` (``np.partition``)."""
    src, dst, along = _matched(a, ans, axis)
    t = np.broadcast_to(np.asarray(t), np.shape(a))
    t = np.ravel(t) if axis is None else t
    out = np.empty(dst.shape, np.result_type(t, float))
    np.put_along_axis(out, dst, np.take_along_axis(t, src, along), along)
    return out


def unstack(g, arrays, axis=0):
    """Split the gradient of ``np.stack(arrays, axis)`` into one piece per input (one array,
    when ``arrays`` was itself an array whose rows were stacked)."""
    pieces = np.moveaxis(g, axis, 0)
    return pieces if is_array(arrays) else GradTuple(pieces)


def _grad_dtype(g, like):
    """The dtype of a gradient for ``like``: its own float dtype (complex for a complex ``g``:
    the reverse pass takes its real part), else ``g``'s (at least float)."""
    kind = getattr(like, "dtype", None)
    if kind is not None and kind.kind == "f":
        return np.result_type(g, kind) if np.iscomplexobj(g) else kind
    return np.result_type(g, float)


def _sequence(parts, like):
    """Per-element gradients of the sequence ``like``: a gradient tuple/list (which add
    element by element), or one array when ``like`` was an array whose rows were used."""
    if is_array(like):
        return np.stack(parts)
    return GradTuple(parts) if isinstance(like, tuple) else GradList(parts)


def _fill(g, like):
    """``g`` as an array of ``like``'s shape: a scalar zero (nothing flowed) is broadcast."""
    shape = np.shape(like)
    if type(g) is np.ndarray and g.shape == shape:
        return g
    return np.broadcast_to(asarray(g, dtype=_grad_dtype(g, like)), shape)


def unsupported(what: str):
    """Raise for a variant of a function that has no gradient (e.g. an ``out=`` argument)."""
    raise NotImplementedError(f"{what} cannot be differentiated; assign the result instead")


def unsupported_tangent(v, what: str):
    """Raise for a variant of a function that has no derivative (e.g. an ``out=`` argument)."""
    raise NotImplementedError(f"{what} cannot be differentiated; assign the result instead")


def element_ids(x):
    """The flat index of every element of ``x``, in ``x``'s shape (int array)."""
    return np.arange(size(x)).reshape(np.shape(x))


def ungather(g, like, picked):
    """The gradient of an op that picked elements ``picked`` (ids from ``element_ids(like)``,
    -1 for values that are not elements of ``like``) from ``like``: ``g`` summed into them."""
    if is_lazy(g):
        raise TypeError("this gradient is a scatter-add (np.add.at), which Dask arrays do not "
                        "have: compute the array first (x.compute()), or keep the operation to "
                        "NumPy arrays")
    out = np.zeros(size(like), dtype=_grad_dtype(g, like))
    picked = asarray(picked)
    g = np.broadcast_to(g, picked.shape)
    keep = picked >= 0
    if out.size:
        np.add.at(out, picked[keep], g[keep])
    return out.reshape(np.shape(like))


def index_join(maker, items):
    """``maker[items]``: ``np.r_[a, 1:3, b]`` and ``np.c_[...]`` as a call (passes/resolve.py),
    the items a tuple with slices as ``slice`` objects."""
    return maker[items]


def _is_value(item) -> bool:
    """Whether an item of ``np.r_[...]`` is a value joined in (not a slice, which makes a range,
    nor a string directive such as ``"0,2"``)."""
    return not isinstance(item, (slice, str))


def _join_ids(maker, items):
    """``(ids, pieces)``: for each element of ``maker[items]``, 1 + its flat position among the
    joined values' elements (0: made by a slice); and each value item's ``(start, size)``. The
    same join of the items' element ids, with ranges and directives kept, tells where every
    element came from; joined once more with the ids zeroed, the ranges' own values cancel."""
    ids, zeros, pieces, start = [], [], [], 0
    for item in items:
        if not _is_value(item):
            ids.append(item)
            zeros.append(item)
            pieces.append(None)
            continue
        n = size(item)
        if type(item) in np.ScalarType:  # a number: r_ gives it a scalar's dtype rules
            ids.append(start + 1)
            zeros.append(0)
        else:
            ids.append(start + 1 + element_ids(item))
            zeros.append(np.zeros(np.shape(item), dtype=np.intp))
        pieces.append((start, n))
        start += n
    joined = maker[tuple(ids)]
    if isinstance(joined, np.matrix):
        raise TypeError("the gradient of np.r_/np.c_ with the matrix directive 'r' or 'c' "
                        "is not supported: join arrays (np.asarray of it is an array)")
    if any(isinstance(item, slice) for item in items):
        joined = joined - np.asarray(maker[tuple(zeros)])
    return np.rint(joined).astype(np.intp), pieces


def unindex_join(g, maker, items):
    """The gradient of ``maker[items]`` (``np.r_``, ``np.c_``) for each item: its elements'
    entries of ``g`` (0.0 for a slice or a directive)."""
    ids, pieces = _join_ids(maker, items)
    g = np.broadcast_to(np.asarray(g), ids.shape)
    dtype = np.result_type(g, float)
    flat = np.zeros(1 + sum(p[1] for p in pieces if p is not None), dtype=dtype)
    np.add.at(flat, ids.ravel(), g.ravel())
    parts = []
    for item, piece in zip(items, pieces, strict=True):
        if piece is None:
            parts.append(0.0)
            continue
        part = flat[1 + piece[0]:1 + piece[0] + piece[1]].reshape(np.shape(item))
        parts.append(part[()] if np.ndim(item) == 0 else part)
    return GradTuple(parts)


def index_join_tangent(tangents, maker, items):
    """The tangent of ``maker[items]``: the items' tangents joined as the items were (a slice's
    range and a directive have none)."""
    ids, pieces = _join_ids(maker, items)
    flat = [np.zeros(1)]
    for tangent, item, piece in zip(tangents, items, pieces, strict=True):
        if piece is not None:
            flat.append(np.ravel(np.broadcast_to(np.asarray(tangent, dtype=float),
                                                 np.shape(item))))
    return np.concatenate(flat)[ids]


def lanes(a, axis):
    """The lanes of ``a`` along ``axis`` as the rows of a 2-D array, in the order
    ``np.apply_along_axis`` visits them (passes/higher_order.py)."""
    a = asarray(a)
    return np.reshape(np.moveaxis(a, axis, -1), (-1, a.shape[axis]))


def along_axis(results, a, axis):
    """The rows ``results`` of a function applied to ``lanes(a, axis)``, arranged as
    ``np.apply_along_axis(f, axis, a)`` returns them: each row's shape in place of ``axis``."""
    a, results = asarray(a), asarray(results)
    axis = axis % a.ndim
    kept = a.shape[:axis] + a.shape[axis + 1:]
    inner = results.shape[1:]
    out = np.reshape(results, kept + inner)
    moved = range(len(kept), len(kept) + len(inner))
    return np.moveaxis(out, tuple(moved), tuple(range(axis, axis + len(inner))))


def unview(g, a, dtype=None):
    """The gradient of ``a.view()`` (the same elements): ``g``. A view as another dtype
    reinterprets the bytes, which has no gradient: TypeError."""
    if dtype is not None and np.dtype(dtype) != np.result_type(a):
        raise TypeError(f"the gradient of x.view({np.dtype(dtype)}) of a "
                        f"{np.result_type(a)} array is not defined: it reinterprets the bytes; "
                        "use x.astype(...) to convert the values")
    return g


def reshape_like(g, x):
    """``g`` reshaped to ``x``'s shape (same size; a scalar zero is broadcast)."""
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape:
        return g  # (the common case, kept cheap)
    if np.ndim(g) == 0 and size(x) != 1:
        return _fill(g, x)
    return np.reshape(g, np.shape(x))


def uncast(g, x, dtype=None):
    """The gradient of ``x.astype(dtype)`` for ``x``: ``g`` in ``x``'s float dtype. A cast to an
    integer or boolean type is piecewise constant, with zero gradient; after a cast of a real
    ``x`` to complex, the real part of ``g`` flows back."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        return np.zeros(np.shape(x), dtype=_grad_dtype(g, x))
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    kind = getattr(x, "dtype", None)
    if kind is not None and kind.kind == "f" and np.result_type(g) != kind:
        g = asarray(g, dtype=kind)
    return g


def cast_tangent(v, ans):
    """Tangent of ``ans = a.astype(dtype)``: ``v`` in ``ans``'s dtype; a cast to an integer or
    boolean type is piecewise constant, with a zero tangent."""
    kind = getattr(ans, "dtype", None)
    if kind is None or kind.kind not in "fc":
        return result_like(np.zeros(np.shape(ans)), ans)
    return result_like(v, ans)


def _nested_shape(obj) -> tuple:
    """The shape of ``np.array(obj)`` for a nested list/tuple, without building the array."""
    if isinstance(obj, (list, tuple)):
        return (len(obj),) + (_nested_shape(obj[0]) if obj else ())
    return np.shape(obj)


def _unnest(g, obj):
    if isinstance(obj, (list, tuple)):
        parts = [_unnest(g[i], item) for i, item in enumerate(obj)]
        return GradTuple(parts) if isinstance(obj, tuple) else GradList(parts)
    return uncast(g, obj)


def unarray(g, obj):
    """The gradient of ``np.array(obj)`` (or ``np.asarray``) for ``obj``: an array, a number, or
    a nested list/tuple of them (a gradient container of the same structure then). Leading axes
    added by ``ndmin`` are dropped and the gradient is cast back to each element's dtype."""
    g = np.reshape(g, _nested_shape(obj))
    return _unnest(g, obj)


# --- assembly and splitting -------------------------------------------------------------------

def _promoted(shape: tuple, ndim: int, where: str = "front") -> tuple:
    """``shape`` padded with 1s to ``ndim`` axes as ``np.atleast_{ndim}d`` ("front") or
    ``np.column_stack`` ("column") do it."""
    if len(shape) >= ndim:
        return shape
    if where == "column":
        return shape + (1,) * (ndim - len(shape))
    if ndim == 3:
        return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]
    return (1,) * (ndim - len(shape)) + shape


def unjoin(g, arrays, how):
    """Split the gradient of ``np.hstack/vstack/dstack/column_stack(arrays)`` (``how``) into one
    gradient per input."""
    items = list(arrays)
    if how == "hstack":
        ndim = 1
        axis = 0 if np.ndim(items[0]) <= 1 else 1
    else:
        ndim, axis = {"vstack": (2, 0), "dstack": (3, 2), "column_stack": (2, 1)}[how]
    where = "column" if how == "column_stack" else "front"
    sizes = [_promoted(np.shape(a), ndim, where)[axis] for a in items]
    pieces = split_sizes(g, sizes, axis)
    return _sequence([np.reshape(p, np.shape(a)) for p, a in zip(pieces, items, strict=True)],
                     arrays)


def unsplit(g, pieces, axis=0):
    """The gradient of ``np.split``-like ops (which returned ``pieces`` along ``axis``): the
    pieces' gradients joined back (a scalar zero stands for a piece nothing flowed to)."""
    return np.concatenate([_fill(gi, p) for gi, p in zip(g, pieces, strict=True)], axis=axis)


def _depth(arrays) -> int:
    return 1 + _depth(arrays[0]) if isinstance(arrays, list) else 0


def _block_shape(item, depth: int, ndim: int) -> tuple:
    """The shape of the (promoted) block ``item`` at nesting ``depth`` of ``np.block``."""
    if depth == 0:
        return (1,) * (ndim - np.ndim(item)) + np.shape(item)
    shapes = [_block_shape(x, depth - 1, ndim) for x in item]
    axis = ndim - depth
    return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]


def _unblock(g, item, depth: int, ndim: int):
    if depth == 0:
        return np.reshape(g, np.shape(item))
    sizes = [_block_shape(x, depth - 1, ndim)[ndim - depth] for x in item]
    pieces = split_sizes(g, sizes, ndim - depth)
    return GradList(_unblock(p, x, depth - 1, ndim) for p, x in zip(pieces, item, strict=True))


def unblock(g, arrays):
    """The gradient of ``np.block(arrays)`` for each (nested) element of ``arrays``. The
    innermost lists join along the last axis, the outer ones along the axes before it."""
    depth = _depth(arrays)

    def leaves(x, k):
        return [y for item in x for y in leaves(item, k - 1)] if k else [x]

    ndim = max([depth] + [np.ndim(x) for x in leaves(arrays, depth)])
    return _unblock(g, arrays, depth, ndim)


def block_tangent(arrays):
    """``np.block`` of nested lists of tangents: gradient lists become plain lists, as NumPy
    before 2.3 arranges only ``list`` itself."""
    def plain(x):
        return [plain(v) for v in x] if isinstance(x, list) else x

    return np.block(plain(arrays))



def reshape_each(ans, *tangents):
    """The tangents of ``np.atleast_Nd(a, b, ...)`` (a tuple): each reshaped like its result."""
    return GradTuple(result_like(t, r) for t, r in zip(tangents, ans, strict=True))


def broadcast_arrays_tangent(ans, *tangents):
    """The tangents of ``np.broadcast_arrays(a, b, ...)``: each broadcast like its result."""
    return GradTuple(result_like(np.broadcast_to(asarray(t), np.shape(r)), r)
                     for t, r in zip(tangents, ans, strict=True))


# --- reordering and repetition ----------------------------------------------------------------

def untile(g, like, reps):
    """The gradient of ``np.tile(like, reps)``: the copies' gradients summed."""
    shape = np.shape(like)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(reps)
    n = max(len(shape), len(reps))
    full = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + reps
    g = np.reshape(g, [k for r, s in zip(reps, full, strict=True) for k in (r, s)])
    return g.sum(axis=tuple(range(0, 2 * n, 2))).reshape(shape)


def unrollaxis(g, ndim: int, axis: int, start: int = 0):
    """The gradient of ``np.rollaxis(a, axis, start)`` for an ``ndim``-dimensional ``a``."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1  # rollaxis places the axis before the one at ``start``
    return np.moveaxis(g, start, axis)


def unselect(g, condlist, choicelist, default):
    """The gradients of ``np.select(condlist, choicelist, default)``: each choice gets ``g``
    where its condition is the first true one, ``default`` where none is (a tuple:
    (choices' gradients, default's gradient))."""
    which = np.select(condlist, list(range(len(condlist))), -1)
    g = asarray(g)
    parts = [unbroadcast(np.where(which == i, g, 0.0), c) for i, c in enumerate(choicelist)]
    return _sequence(parts, choicelist), unbroadcast(np.where(which == -1, g, 0.0), default)


def select_tangent(condlist, vchoices, vdefault, ans):
    """Tangent of ``np.select(condlist, choicelist, default)``: the same selection of the
    choices' and the default's tangents."""
    return result_like(np.select(condlist, list(vchoices), vdefault), ans)


_INDEX_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def unpad(g, array, pad_width, mode, constant_values):
    """The gradients of ``np.pad(array, pad_width, mode, constant_values=...)`` for ``array``
    and ``constant_values`` (a tuple). Only modes that copy elements are linear maps of
    ``array`` alone; any other raises."""
    if not isinstance(mode, str) or mode not in _INDEX_MODES:
        raise NotImplementedError(f"np.pad with mode={mode!r} cannot be differentiated; "
                                  f"supported modes: {', '.join(_INDEX_MODES)}")
    ids = element_ids(array)
    if mode != "constant":
        return ungather(g, array, np.pad(ids, pad_width, mode)), 0.0
    # pad value (axis i, side s) gets the id -2 - (2 i + s): every cell names its source
    ndim = np.ndim(array)
    codes = -2 - np.arange(2 * ndim).reshape(ndim, 2)
    picked = np.pad(ids, pad_width, "constant", constant_values=codes)
    g = asarray(g)
    table = np.array([np.sum(g[picked == c]) for c in codes.ravel()]).reshape(ndim, 2)
    like = constant_values
    if isinstance(like, (tuple, list)):  # a literal (before, after) or per-axis pairs
        like = ShapeOf(np.shape(like), np.result_type(g, float))
    gc = unbroadcast(table.astype(_grad_dtype(g, constant_values)), like)
    return ungather(g, array, picked), gc


def pad_tangent(v, pad_width, mode, vc, ans):
    """Tangent of ``np.pad(array, pad_width, mode, constant_values=...)`` for the tangents
    ``v`` of ``array`` and ``vc`` of ``constant_values``. Only modes that copy elements are
    linear; any other raises."""
    if not isinstance(mode, str) or mode not in _INDEX_MODES:
        raise NotImplementedError(f"np.pad with mode={mode!r} cannot be differentiated; "
                                  f"supported modes: {', '.join(_INDEX_MODES)}")
    v = asarray(v)
    if mode == "constant":
        return result_like(np.pad(v, pad_width, mode, constant_values=vc), ans)
    return result_like(np.pad(v, pad_width, mode), ans)


def unpiecewise(g, x, funclist):
    """The gradient of ``np.piecewise(x, condlist, funclist)`` with constant values in
    ``funclist``: the result does not depend on ``x``'s values. Functions raise."""
    if any(callable(f) for f in funclist):
        raise NotImplementedError("np.piecewise with functions in funclist cannot be "
                                  "differentiated; use np.where or np.select")
    return np.zeros(np.shape(x), dtype=_grad_dtype(g, x))


def piecewise_tangent(v, ans, funclist):
    """Tangent of ``np.piecewise(x, condlist, funclist)`` with constant values in ``funclist``:
    zero (the result does not depend on ``x``'s values). Functions raise."""
    if any(callable(f) for f in funclist):
        raise NotImplementedError("np.piecewise with functions in funclist cannot be "
                                  "differentiated; use np.where or np.select")
    return result_like(np.zeros(np.shape(ans)), ans)


def unbroadcast_item(g, i, like):
    """The gradient of ``like``, the ``i``-th argument of ``np.broadcast_arrays``."""
    return unbroadcast(g[i], like)


def unappend_array(g, arr, values, axis=None):
    """The gradients of ``np.append(arr, values, axis)`` for ``arr`` and ``values``."""
    ids, missing = element_ids, np.full
    return (ungather(g, arr, np.append(ids(arr), missing(np.shape(values), -1), axis)),
            ungather(g, values, np.append(missing(np.shape(arr), -1), ids(values), axis)))


def uninsert(g, arr, obj, values, axis=None):
    """The gradients of ``np.insert(arr, obj, values, axis)`` for ``arr`` and ``values`` (which
    NumPy may broadcast: a value inserted several times sums its gradients)."""
    into_arr = np.insert(element_ids(arr), obj, np.full(np.shape(values), -1), axis)
    into_values = np.insert(np.full(np.shape(arr), -1), obj, element_ids(values), axis)
    return ungather(g, arr, into_arr), ungather(g, values, into_values)


# --- construction: np.full, np.full_like, np.linspace, np.arange --------------------------------

def _floating(ans) -> bool:
    return np.result_type(ans).kind in "fc"


def _summed_to(g, like):
    """``g`` summed back to the shape of ``like``, which NumPy broadcast: a number, an array,
    or a list or tuple of them (then a gradient of the same structure)."""
    if isinstance(like, (list, tuple)):
        return _unnest(unbroadcast(g, ShapeOf(_nested_shape(like), _grad_dtype(g, None))), like)
    return uncast(unbroadcast(g, like), like)


def unfill(g, fill_value, ans):
    """The gradient of ``ans = np.full(shape, fill_value)`` (or ``np.full_like``) for
    ``fill_value``: ``g`` summed back to its shape; zero when ``ans`` is not floating (an
    integer fill is piecewise constant)."""
    return _summed_to(g if _floating(ans) else np.zeros(np.shape(ans)), fill_value)


def _linspace_t(num, endpoint, dtype):
    """The weights ``t`` of np.linspace's samples ``start + t (stop - start)``."""
    div = num - 1 if endpoint else num
    return np.arange(num, dtype=dtype) / div if div > 0 else np.zeros(num, dtype=dtype)


def unlinspace(g, start, stop, num, endpoint, retstep, axis, ans):
    """The gradients of ``ans = np.linspace(start, stop, num, endpoint, retstep, axis=axis)``
    for ``start`` and ``stop`` (a tuple): sample ``i`` is ``start + t_i (stop - start)`` with
    ``t_i = i / div``, and the step (``retstep``) is ``(stop - start) / div``."""
    samples = ans[0] if retstep else ans
    gs, gstep = (g[0], g[1]) if retstep else (g, 0.0)
    if not _floating(samples):
        return (_summed_to(np.zeros(np.shape(start)), start),
                _summed_to(np.zeros(np.shape(stop)), stop))
    gs = np.moveaxis(np.broadcast_to(gs, np.shape(samples)), axis, 0)
    t = _linspace_t(int(num), endpoint, samples.dtype).reshape((-1,) + (1,) * (gs.ndim - 1))
    g_stop, g_start = np.sum(gs * t, axis=0), np.sum(gs * (1 - t), axis=0)
    div = int(num) - 1 if endpoint else int(num)
    if retstep and np.any(gstep):  # the step of one sample (div 0) is NaN, as NumPy's
        per = asarray(gstep) / div if div > 0 else asarray(gstep) * np.nan
        g_stop, g_start = g_stop + per, g_start - per
    return _summed_to(g_start, start), _summed_to(g_stop, stop)


def linspace_tangent(v_start, v_stop, num, endpoint, retstep, axis, ans):
    """Tangent of ``np.linspace(start, stop, ...)``: linear in ``(start, stop)``, so the same
    linspace of the tangents (zero when the samples are not floating)."""
    samples = ans[0] if retstep else ans
    if not _floating(samples):
        zero = result_like(np.zeros(np.shape(samples)), samples)
        return GradTuple((zero, 0.0)) if retstep else zero
    made = np.linspace(asarray(v_start, dtype=samples.dtype),
                       asarray(v_stop, dtype=samples.dtype), num, endpoint, retstep, axis=axis)
    if retstep:
        return GradTuple((result_like(made[0], samples), made[1]))
    return result_like(made, samples)


def unarange(g, start, step, ans):
    """The gradients of ``ans = np.arange(start, stop, step)`` for ``start`` and ``step`` (a
    tuple): element ``i`` is ``start + i step``. The length depends on the values only
    piecewise (a constant between jumps), so ``stop`` gets none."""
    if not _floating(ans):
        return unfill(g, start, ans), (0.0 if step is None else unfill(g, step, ans))
    g = np.broadcast_to(g, np.shape(ans))
    g_start = uncast(unbroadcast(np.sum(g), start), start)
    if step is None:
        return g_start, 0.0
    g_step = np.sum(g * np.arange(size(ans), dtype=ans.dtype))
    return g_start, uncast(unbroadcast(g_step, step), step)


def arange_tangent(v_start, v_step, ans):
    """Tangent of ``ans = np.arange(start, stop, step)``: ``v_start + i v_step``, zero when
    ``ans`` is not floating."""
    if not _floating(ans):
        return result_like(np.zeros(np.shape(ans)), ans)
    return result_like(v_start + v_step * np.arange(size(ans), dtype=ans.dtype), ans)
