"""Numba implementations of the runtime helpers that element loops, scalar loops and array code
call, for gradients compiled with ``numba.njit`` (``backend="numba"``).

Imported only by the Numba backend: it imports Numba, the rest of the runtime never does. Each
helper keeps its one NumPy definition in its family's module; what is here says how Numba runs
it for the types Numba gives it (numbers and arrays), chosen when the code is compiled as the
NumPy version chooses at run time. A helper given a type it has no implementation for here (a
tuple, list or dict gradient, an integer-array index into a 2-D array) is a typing error,
which the backend reports as a ``TranspileError`` at the user's line.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from runtime import arrays, broadcast, containers, linalg, objects, reductions, shapes, special


def _number(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


def _float_dtype(t):
    """The dtype of a gradient of an array of Numba type ``t``: its own if floating, else
    float64."""
    return t.dtype if isinstance(t.dtype, types.Float) else types.float64


def _basic(index) -> bool:
    """An index that selects a view (as ``broadcast._basic``): ints and slices."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(p, (types.Integer, types.SliceType)) for p in parts)


def _mask(index) -> bool:
    return isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean)


def _int_vector(index) -> bool:
    return isinstance(index, types.Array) and index.ndim == 1 \
        and isinstance(index.dtype, types.Integer)


@overload(broadcast.unbroadcast)
def _unbroadcast(g, like):
    if _number(like):
        if isinstance(g, types.Array):
            return lambda g, like: g.sum()
        return lambda g, like: g
    if isinstance(like, types.Array):
        if _number(g):
            return lambda g, like: np.full(like.shape, g)
        if isinstance(g, types.Array) and g.ndim >= like.ndim:
            return lambda g, like: _same_shape(g, like) if g.ndim == like.ndim else _sum_to(
                g, like.shape)
    return None


def _same_shape(g, like):
    return g if g.shape == like.shape else _sum_to(g, like.shape)


def _sum_to(g, shape):
    """``g`` summed over its leading axes and the axes where ``shape`` has length 1."""
    out = np.zeros(shape, dtype=g.dtype)
    flat, values = out.ravel(), g.ravel()
    extra = g.ndim - len(shape)
    for p in range(values.size):
        rest, offset, stride = p, 0, 1
        for d in range(g.ndim - 1, extra - 1, -1):
            k = d - extra
            i = rest % g.shape[d]
            rest //= g.shape[d]
            if shape[k] != 1:
                offset += i * stride
            stride *= shape[k]
        flat[offset] += values[p]
    return out


@overload(broadcast.unreduce)
def _unreduce(g, like, axis=None, keepdims=False):
    none = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if _number(like):
        return lambda g, like, axis=None, keepdims=False: g
    if isinstance(like, types.Array) and none and _number(g):
        return lambda g, like, axis=None, keepdims=False: np.full(like.shape, g)
    kept = isinstance(keepdims, types.BooleanLiteral) and keepdims.literal_value
    if isinstance(like, types.Array) and isinstance(axis, types.Integer) \
            and isinstance(g, types.Array):
        if kept or g.ndim == like.ndim:
            return lambda g, like, axis=None, keepdims=False: \
                np.broadcast_to(g, like.shape).copy()
        if g.ndim == like.ndim - 1:
            return lambda g, like, axis=None, keepdims=False: np.broadcast_to(
                np.expand_dims(g, axis % like.ndim), like.shape).copy()
    if isinstance(like, types.Array) and isinstance(axis, types.Integer) and _number(g) \
            and like.ndim == 1:
        return lambda g, like, axis=None, keepdims=False: np.full(like.shape, g)
    return None


@overload(broadcast.seed)
def _seed(out):
    if _number(out):
        return lambda out: 1.0
    if isinstance(out, types.Array):
        def seed(out):
            if out.size != 1:
                raise TypeError("grad needs a function returning a scalar")
            return np.ones_like(out)
        return seed
    return None


@overload(arrays.size)
def _size(x):
    if isinstance(x, types.Array):
        return lambda x: x.size
    if _number(x):
        return lambda x: 1
    return None


@overload(broadcast.zeros_like_grad)
def _zeros_like_grad(x):
    if _number(x) or isinstance(x, types.NoneType) \
            or isinstance(x, types.Optional) and _number(x.type):
        return lambda x: 0.0
    if isinstance(x, types.Array):
        dtype = _float_dtype(x)
        return lambda x: np.zeros(x.shape, dtype=dtype)
    if isinstance(x, types.List):
        return lambda x: [broadcast.zeros_like_grad(v) for v in x]
    if isinstance(x, types.BaseTuple):
        return _each_item("zeros", len(x), "zeros_like_grad(x[{k}])", "x",
                          zeros_like_grad=broadcast.zeros_like_grad)
    return None


def _each_item(name: str, count: int, item: str, params: str, **names):
    """A function of ``params`` returning the tuple of ``item`` (source, with ``{k}`` the
    position; or a function of it) for each of ``count`` positions: a tuple's gradient, item by
    item."""
    source = item.format if isinstance(item, str) else item
    items = "".join(source(k=k) + ", " for k in range(count))
    return _compiled(f"def {name}({params}):\n    return ({items})\n", **names)


@overload(broadcast.zero_tangent)
def _zero_tangent(x):
    return _zeros_like_grad(x)


@register_jitable
def _extent(a):
    """The bytes an array's elements span: ``[low, high)``."""
    low = high = a.ctypes.data
    for i in range(a.ndim):
        step = (a.shape[i] - 1) * a.strides[i]
        if step < 0:
            low += step
        else:
            high += step
    return low, high + a.itemsize


@register_jitable
def _may_overlap(a, b):
    """``np.may_share_memory`` (which Numba lacks): whether the spans of two arrays meet."""
    if a.size == 0 or b.size == 0:
        return False
    a_low, a_high = _extent(a)
    b_low, b_high = _extent(b)
    return a_low < b_high and b_low < a_high


@overload(broadcast.copied)
def _copied(g):
    if isinstance(g, types.Array):
        return lambda g: g.copy()
    if _number(g):
        return lambda g: g
    if isinstance(g, types.BaseTuple):
        items = "".join(f"copied(g[{k}]), " for k in range(len(g)))
        return _compiled(f"def copied_tuple(g):\n    return ({items})\n",
                         copied=broadcast.copied)
    if isinstance(g, types.List):
        return lambda g: [broadcast.copied(v) for v in g]
    return None


@overload(broadcast.copy_tangent)
def _copy_tangent(t, ans):
    if isinstance(t, types.Array):
        return lambda t, ans: t.copy()
    if _number(t):
        return lambda t, ans: t
    return None


@overload(broadcast.distinct)
def _distinct(grads):
    if isinstance(grads, types.Array) or _number(grads):
        return lambda grads: grads
    if isinstance(grads, types.BaseTuple) and all(
            isinstance(t, types.Array) or _number(t) or t == types.none for t in grads):
        arrays = [k for k, t in enumerate(grads) if isinstance(t, types.Array)]
        lines = [f"    g{k} = grads[{k}]\n" for k in range(len(grads))]
        for i, k in enumerate(arrays):
            for j in arrays[:i]:
                lines.append(f"    if _may_overlap(g{k}, g{j}):\n        g{k} = g{k}.copy()\n")
        items = "".join(f"g{k}, " for k in range(len(grads)))
        return _compiled(f"def distinct_tuple(grads):\n{''.join(lines)}    return ({items})\n",
                         _may_overlap=_may_overlap)
    return lambda grads: grads  # (nested containers: as they are)


@overload(broadcast.grad_like)
def _grad_like(g, x):
    if isinstance(x, types.List) and isinstance(g, types.List):
        def grad_like_list(g, x):  # (a plain list, as the Python backend's)
            if len(g) != len(x):
                raise ValueError("a list's gradient of another length")
            return [broadcast.grad_like(g[k], x[k]) for k in range(len(x))]
        return grad_like_list
    if isinstance(x, types.BaseTuple) and isinstance(g, types.BaseTuple) and len(g) == len(x):
        items = "".join(f"grad_like(g[{k}], x[{k}]), " for k in range(len(x)))
        return _compiled(f"def grad_like_tuple(g, x):\n    return distinct(({items}))\n",
                         grad_like=broadcast.grad_like, distinct=broadcast.distinct)
    if isinstance(x, types.Array):
        dtype = x.dtype
        if _number(g):
            return lambda g, x: np.full(x.shape, g, dtype=dtype)
        if isinstance(g, types.Array) and g.dtype == x.dtype and g.ndim == x.ndim:
            return lambda g, x: g if g.shape == x.shape else np.broadcast_to(g, x.shape).copy()
        if isinstance(g, types.Array):
            return lambda g, x: np.broadcast_to(g, x.shape).astype(dtype)
    if _number(x) and not isinstance(x, types.Complex):
        if isinstance(g, types.Array) and g.ndim == 0:  # (as NumPy: only a 0-d array)
            return lambda g, x: float(g.ravel()[0])
        if _number(g):
            return lambda g, x: float(g)
    return None


@overload(broadcast.tangent_like)
def _tangent_like(t, value):
    if isinstance(value, types.Array) and not isinstance(value.dtype, types.Float):
        return lambda t, value: np.broadcast_to(t, value.shape).astype(np.float64)
    if _number(value) and not isinstance(value, types.Float):
        return lambda t, value: float(t)
    like = _grad_like(t, value)
    if like is None:
        return None
    like = _private(like)
    return lambda t, value: like(t, value)


@overload(broadcast.broadcast_like)
def _broadcast_like(d, g):
    if isinstance(g, (types.List, types.BaseTuple)):  # (a container's gradient: as it is)
        return lambda d, g: d
    if _number(g) or isinstance(g, types.Array) and g.ndim == 0:
        return lambda d, g: d  # (the same shape; Numba cannot broadcast to ())
    if isinstance(g, types.Array):
        if _number(d):
            return lambda d, g: np.full(g.shape, d)
        if isinstance(d, types.Array) and d.ndim == g.ndim:
            return lambda d, g: np.ascontiguousarray(d) if d.shape == g.shape else \
                np.broadcast_to(d, g.shape).copy()
        if isinstance(d, types.Array):
            return lambda d, g: np.broadcast_to(d, g.shape).copy()
    return None


@overload(containers.sequence_tangent)
def _sequence_tangent(t, items):
    if not isinstance(items, types.DictType):
        return lambda t, items: t
    return None


@overload(containers.unsequence)
def _unsequence(g, items):
    if not isinstance(items, types.DictType):
        return lambda g, items: g
    return None


@overload(reductions.unsum)
def _unsum(g, items):
    if isinstance(items, types.Array):
        return lambda g, items: broadcast.unreduce(g, items, 0)
    if isinstance(items, types.List):
        return lambda g, items: [broadcast.unbroadcast(g, item) for item in items]
    if isinstance(items, types.BaseTuple):
        return _each_item("unsum_tuple", len(items), "unbroadcast(g, items[{k}])", "g, items",
                          unbroadcast=broadcast.unbroadcast)
    return None


def range_item(r, i):
    """``r[i]`` of a range (the backend's rewrite: Numba cannot index a range)."""
    n = len(r)
    if i < 0:
        i += n
    if i < 0 or i >= n:
        raise IndexError("range object index out of range")
    return r.start + i * r.step


def concatenate_list(items):
    """``np.concatenate(items)`` (the backend's rewrite: Numba joins tuples, not lists)."""
    return np.concatenate(items)


@overload(concatenate_list)
def _concatenate_list(items):
    if isinstance(items, types.List) and isinstance(items.dtype, types.Array):
        def join(items):
            n = 0
            for a in items:
                n += a.shape[0]
            out = np.empty((n,) + items[0].shape[1:], dtype=items[0].dtype)
            k = 0
            for a in items:
                out[k:k + a.shape[0]] = a
                k += a.shape[0]
            return out
        return join
    return lambda items: np.concatenate(items)


def _axis(axis):
    """The value of an axis argument Numba knows when it compiles (else its type)."""
    return axis.value if isinstance(axis, types.Omitted) else getattr(axis, "literal_value", axis)


@overload(shapes.unconcatenate)
def _unconcatenate(g, arrays, axis=0):
    value = _axis(axis)
    if isinstance(arrays, types.BaseTuple) and isinstance(g, types.Array) and value == 0 \
            and all(isinstance(a, types.Array) and a.ndim == g.ndim for a in arrays):
        n = len(arrays)
        ends = "".join(f"    e{k + 1} = e{k} + arrays[{k}].shape[0]\n" for k in range(n))
        pieces = "".join(f"g[e{k}:e{k + 1}], " for k in range(n))
        return _compiled(f"def split_tuple(g, arrays, axis=0):\n    e0 = 0\n{ends}"
                         f"    return ({pieces})\n")
    if isinstance(arrays, types.List) and isinstance(g, types.Array) and value == 0:
        def split(g, arrays, axis=0):
            pieces, k = [], 0
            for a in arrays:
                pieces.append(g[k:k + a.shape[0]].copy())
                k += a.shape[0]
            return pieces
        return split
    return None


def add_grads(a, b):
    """``a + b`` of two gradients (the backend's rewrite of an accumulation): item by item for
    lists and tuples, as the Python backend's gradient containers add (Numba's ``+`` would join
    them)."""
    return a + b


@overload(add_grads)
def _add_grads(a, b):
    if isinstance(a, types.List) and isinstance(b, types.List):
        def add_lists(a, b):
            if len(a) != len(b):
                raise ValueError("gradients of lists of different lengths")
            return [add_grads(a[k], b[k]) for k in range(len(a))]
        return add_lists
    if isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple):
        if len(a) != len(b):
            return None
        items = "".join(f"add_grads(a[{k}], b[{k}]), " for k in range(len(a)))
        return _compiled(f"def add_tuples(a, b):\n    return ({items})\n", add_grads=add_grads)
    if _container(a) or _container(b):
        return None  # (a list's gradient and a number's: refused)
    return lambda a, b: a + b


def _container(t) -> bool:
    return isinstance(t, (types.List, types.BaseTuple, types.DictType, types.ListType))


@overload(shapes.unstack)
def _unstack(g, arrays, axis=0):
    value = _axis(axis)
    if not (isinstance(g, types.Array) and isinstance(value, int)):
        return None
    k = value % g.ndim
    order = (k, *(d for d in range(g.ndim) if d != k))  # (np.moveaxis(g, axis, 0))
    if isinstance(arrays, types.List):
        return _compiled(f"def unstack_list(g, arrays, axis=0):\n"
                         f"    pieces = g.transpose({order})\n"
                         f"    return [pieces[k] for k in range(pieces.shape[0])]\n")
    if isinstance(arrays, types.BaseTuple):
        return _each_item("unstack_tuple", len(arrays), "g.transpose(order)[{k}]",
                          "g, arrays, axis=0", order=order)
    return None


@overload(shapes.unjoin)
def _unjoin(g, arrays, how):
    how = getattr(how, "literal_value", None)
    if not (isinstance(g, types.Array) and isinstance(arrays, types.List)
            and isinstance(arrays.dtype, types.Array) and how in _JOINED):
        return None
    ndim = arrays.dtype.ndim
    axis, promoted = _JOINED[how](ndim)  # (the joined axis; an item's extent along it)
    head = ":, " * axis
    return _compiled(f"""
def unjoin(g, arrays, how):
    pieces, start = [], 0
    for a in arrays:
        n = {promoted}
        pieces.append(np.ascontiguousarray(g[{head}start:start + n]).reshape(a.shape))
        start += n
    return pieces
""")


_JOINED = {  # np.<how>(arrays) of arrays of ndim dimensions: (its axis, an item's extent)
    "hstack": lambda ndim: (0, "a.shape[0]") if ndim <= 1 else (1, "a.shape[1]"),
    "vstack": lambda ndim: (0, "1" if ndim < 2 else "a.shape[0]"),
    "column_stack": lambda ndim: (1, "1" if ndim < 2 else "a.shape[1]"),
    "dstack": lambda ndim: (2, "1" if ndim < 3 else "a.shape[2]"),
}


def stack_list(items, axis=0):
    """``np.stack(items, axis)`` (the backend's rewrite: Numba stacks tuples, not lists)."""
    return np.stack(items, axis)


@overload(stack_list)
def _stack_list(items, axis=0):
    value = _axis(axis)
    if isinstance(items, types.List) and isinstance(items.dtype, types.Array) \
            and isinstance(value, int):
        ndim = items.dtype.ndim
        k = value % (ndim + 1)
        order = (*range(1, k + 1), 0, *range(k + 1, ndim + 1))  # (the new axis 0 to k)

        def stack(items, axis=0):
            first = items[0]
            out = np.empty((len(items),) + first.shape, dtype=first.dtype)
            for j in range(len(items)):
                if items[j].shape != first.shape:
                    raise ValueError("all input arrays must have the same shape")
                out[j] = items[j]
            return np.ascontiguousarray(out.transpose(order))
        return stack
    if not isinstance(items, types.List):
        return lambda items, axis=0: np.stack(items, axis)
    return None


def builtin_sum(items):
    """The builtin ``sum(items)`` (the backend's rewrite: Numba's adds numbers only)."""
    return sum(items)


@overload(builtin_sum)
def _builtin_sum(items):
    if isinstance(items, types.List) and isinstance(items.dtype, types.Array):
        def sum_of_arrays(items):  # (0 + a + b + ...: an empty list sums to 0)
            total = 0.0 + items[0]
            for k in range(1, len(items)):
                total = total + items[k]
            return total
        return sum_of_arrays
    return lambda items: sum(items)


register_jitable(special.balanced_eq)


@overload(special.pow_slope)
def _pow_slope(x, y):
    """``y * x ** (y - 1)``, 0 where ``y`` is 0 (as its NumPy definition)."""
    if _number(x) and _number(y):
        def number_slope(x, y):
            if y == 0:
                return 0.0 * x
            if x == 0 and y < 1:
                return y * np.inf
            return y * x ** (y - 1)
        return number_slope
    if isinstance(x, types.Array) or isinstance(y, types.Array):
        return lambda x, y: np.where(y == 0, 0.0, y * np.power(x, y - 1))
    return None


@overload(special.clip_partials)
def _clip_partials(g, a, a_min=None, a_max=None, min=None, max=None):
    """As its NumPy definition, with the bounds that are None known when compiled."""
    lo = "a_min" if _given(min, None) else "min"
    hi = "a_max" if _given(max, None) else "max"
    has_lo = not _given(a_min if lo == "a_min" else min, None)
    has_hi = not _given(a_max if hi == "a_max" else max, None)
    lines = [f"m = np.maximum(a, {lo})" if has_lo else "m = a",
             f"ans = np.minimum(m, {hi})" if has_hi else "ans = m", "gm, ghi = g, None"]
    if has_hi:
        lines += [f"gm = g * balanced_eq(m, ans, {hi})",
                  f"ghi = unbroadcast(g * balanced_eq({hi}, ans, m), {hi})"]
    lines.append("ga, glo = gm, None")
    if has_lo:
        lines += [f"ga = gm * balanced_eq(a, m, {lo})",
                  f"glo = unbroadcast(gm * balanced_eq({lo}, m, a), {lo})"]
    body = "".join(f"    {line}\n" for line in lines)
    return _compiled("def clip_partials(g, a, a_min=None, a_max=None, min=None, max=None):\n"
                     f"{body}    return unbroadcast(ga, a), glo, ghi\n",
                     balanced_eq=special.balanced_eq, unbroadcast=broadcast.unbroadcast)


@overload(special.tie_split)
def _tie_split(g, ans, items, key=None):
    """``max``/``min`` of numbers: ``g`` shared evenly by the items equal to the result."""
    if not (key is None or isinstance(key, (types.NoneType, types.Omitted))) or not _number(g):
        return None
    if isinstance(items, types.Array) and items.ndim == 1:
        def split_array(g, ans, items, key=None):  # (NaN: the NaN items', as in Python's)
            hits = (items == ans) | ((items != items) & (ans != ans))
            return np.where(hits, g / np.count_nonzero(hits), 0.0)
        return split_array
    if isinstance(items, types.List) and _number(items.dtype):
        def split_list(g, ans, items, key=None):
            count = 0
            for item in items:
                count += item == ans or (item != item and ans != ans)
            share = g / count
            return [share if item == ans or (item != item and ans != ans) else 0.0
                    for item in items]
        return split_list
    if isinstance(items, types.BaseTuple) and all(
            _number(t) or isinstance(t, types.NoneType) for t in items):
        given = [k for k, t in enumerate(items) if not isinstance(t, types.NoneType)]
        hits = "".join(f"    hit{k} = items[{k}] == ans or (items[{k}] != items[{k}] and ans "
                       "!= ans)\n" for k in given)
        count = " + ".join(f"int(hit{k})" for k in given)
        parts = "".join(f"share if hit{k} else 0.0, " if k in given else "0.0, "
                        for k in range(len(items)))
        return _compiled(f"def split_arguments(g, ans, items, key=None):\n{hits}"
                         f"    share = g / ({count})\n    return ({parts})\n")
    return None


def astype_like(x, like):
    """``x.astype(like.dtype, copy=False)``, spelled so that ``like`` (and ``x``) may be a
    number, as a NumPy scalar of the Python backend is in Numba (the backend's rewrite)."""
    return np.asarray(x).astype(np.result_type(like), copy=False)


@overload(astype_like)
def _astype_like(x, like):
    if isinstance(like, types.Float):
        if _number(x):
            return lambda x, like: float(x)
        if isinstance(x, types.Array):
            return lambda x, like: x.astype(np.float64)
    if isinstance(like, types.Array) and isinstance(x, types.Array):
        dtype = like.dtype
        return lambda x, like: x.astype(dtype)
    return None  # (its NumPy definition compiles as it is)


@overload(objects.owned)
def _owned(obj):
    if isinstance(obj, types.Array):
        return lambda obj: obj.copy()
    if _number(obj):
        return lambda obj: obj
    return None


@overload(broadcast.unindex)
def _unindex(g, like, index):
    if isinstance(like, types.List) and isinstance(index, types.SliceType) \
            and isinstance(g, types.List):
        def unindex_slice(g, like, index):  # (zeros, with g's items at the slice's)
            out = [broadcast.zeros_like_grad(v) for v in like]
            out[index] = g
            return out
        return unindex_slice
    if isinstance(like, types.List) and isinstance(index, types.Integer):
        def unindex_list(g, like, index):  # (zeros, with g at index)
            out = [broadcast.zeros_like_grad(v) for v in like]
            out[index] = g
            return out
        return unindex_list
    if isinstance(like, types.BaseTuple) and isinstance(index, types.Integer):
        n = len(like)
        at = getattr(index, "literal_value", None)  # (known: the items may differ in type)
        item = "g if index % n == {k} else zeros_like_grad(like[{k}])" if at is None else \
            lambda k: "g" if k == at % n else f"zeros_like_grad(like[{k}])"
        return _each_item("unindex_tuple", n, item, "g, like, index", n=n,
                          zeros_like_grad=broadcast.zeros_like_grad)
    if not isinstance(like, types.Array):
        return None
    dtype = _float_dtype(like)
    return lambda g, like, index: broadcast.add_into(np.zeros(like.shape, dtype=dtype), index, g)


def _without_newaxis(index) -> str:
    """For an index tuple of ints, slices and None (a new axis, which selects nothing), the
    source of the tuple without its None parts; "" for any other index."""
    parts = index.types if isinstance(index, types.BaseTuple) else ()
    if not any(isinstance(p, types.NoneType) for p in parts) or not all(
            isinstance(p, (types.Integer, types.SliceType, types.NoneType)) for p in parts):
        return ""
    return "(" + "".join(f"index[{k}], " for k, p in enumerate(parts)
                         if not isinstance(p, types.NoneType)) + ")"


def _compiled(source: str, **names):
    """The one function ``source`` defines, seeing NumPy and ``names``: an implementation whose
    code depends on the types (which parts of an index tuple to keep)."""
    namespace = {"np": np, **names}
    exec(source, namespace)
    (function,) = (v for k, v in namespace.items() if k not in names and k != "np"
                   and callable(v) and not k.startswith("__"))
    return function


def _last_writes(n, index):
    """Which entries of ``index`` (an integer vector into a length-``n`` axis) are the last
    write of their element (as ``broadcast._last_writes``)."""
    last = np.ones(index.size, dtype=np.bool_)
    seen = np.zeros(n, dtype=np.bool_)
    for k in range(index.size - 1, -1, -1):
        j = index[k] % n
        last[k] = not seen[j]
        seen[j] = True
    return last


@overload(broadcast.written)
def _written(g, index):
    if isinstance(g, types.Array) and _basic(index):
        if len(index.types if isinstance(index, types.BaseTuple) else (index,)) >= g.ndim \
                and not any(isinstance(p, types.SliceType) for p in (
                    index.types if isinstance(index, types.BaseTuple) else (index,))):
            return lambda g, index: g[index]  # (an element)
        return lambda g, index: g[index].copy()
    if isinstance(g, types.Array) and _mask(index):
        return lambda g, index: g[index]  # (a mask selects each element once: a copy)
    if isinstance(g, types.Array):
        return _written_vector(index)
    return None


@overload(broadcast.unwritten)
def _unwritten(d, like, index):
    if isinstance(like, types.Array) and (_basic(index) or _mask(index)):
        return lambda d, like, index: broadcast.unindex(d, like, index)
    if isinstance(like, types.Array):
        return _unwritten_vector(like, index)
    return None


@overload(broadcast.zero_index)
def _zero_index(g, index):
    if isinstance(g, types.List) and isinstance(index, types.Integer):
        def zero_entry(g, index):  # (a new list, its arrays copies: as the Python backend's)
            out = [objects.owned(v) for v in g]
            out[index] = broadcast.zeros_like_grad(out[index])
            return out
        return zero_entry
    if isinstance(g, types.Array):
        dtype = _float_dtype(g)

        def zero_index(g, index):
            out = g.astype(dtype)
            out[index] = 0
            return out
        return zero_index
    return None


@overload(broadcast.add_into)
def _add_into(g, index, part):
    if isinstance(g, types.List) and isinstance(index, types.Integer):
        def add_into_list(g, index, part):  # (a new list, as the Python backend's)
            out = g.copy()
            out[index] = add_grads(out[index], part)
            return out
        return add_into_list
    if isinstance(g, types.BaseTuple) and isinstance(index, types.Integer):
        n = len(g)
        at = getattr(index, "literal_value", None)
        item = "add_grads(g[{k}], part) if index % n == {k} else g[{k}]" if at is None else \
            lambda k: f"add_grads(g[{k}], part)" if k == at % n else f"g[{k}]"
        return _each_item("add_into_tuple", n, item, "g, index, part", n=n, add_grads=add_grads)
    if not isinstance(g, types.Array):
        return None
    if _basic(index):
        def add_into(g, index, part):
            g[index] += part
            return g
        return add_into
    kept = _without_newaxis(index)
    if kept:
        return _compiled(f"""
def add_into_newaxis(g, index, part):
    selected = {kept}
    view = g[selected]
    view += {"np.ascontiguousarray(part).reshape(view.shape)"
             if isinstance(part, types.Array) else "part"}
    return g
""")
    if _mask(index):
        def add_into_mask(g, index, part):
            g[index] = g[index] + part
            return g
        return add_into_mask
    return _add_into_vector(index)


def _vector_index(index):
    """For an index of one integer vector, alone or in a tuple of ints and slices: the source
    lines that bind ``vector`` and ``shape`` (the selection's) in a function of ``g`` and
    ``index``, the vector's axis of ``g`` and of the selection, and a function giving the
    source of the index with an entry in the vector's place. None for any other index."""
    parts = list(index.types) if isinstance(index, types.BaseTuple) else [index]
    vectors = [k for k, p in enumerate(parts) if _int_vector(p)]
    if len(vectors) != 1 or not all(isinstance(p, (types.Integer, types.SliceType))
                                    for k, p in enumerate(parts) if k != vectors[0]):
        return None
    (j,) = vectors
    axis = sum(isinstance(p, types.SliceType) for p in parts[:j])
    names = [f"index[{k}]" for k in range(len(parts))] \
        if isinstance(index, types.BaseTuple) else ["index"]

    def at(entry: str) -> str:
        return ", ".join(entry if k == j else n for k, n in enumerate(names)) + ","
    lines = (f"    vector = {names[j]}\n"
             f"    view = np.asarray(g[{at('0')}])\n"
             f"    shape = view.shape[:{axis}] + (vector.size,) + view.shape[{axis}:]\n")
    return lines, j, axis, at


def _add_into_vector(index):
    """``np.add.at(g, index, part)`` for an index of one integer vector (``_vector_index``):
    the selected entries one by one (an entry selected twice gets both parts)."""
    found = _vector_index(index)
    if found is None:
        return None
    lines, _, axis, at = found
    return _compiled(f"""
def add_into_at(g, index, part):
{lines}    parts = np.broadcast_to(np.asarray(part), shape)
    for k in range(vector.size):
        g[{at("vector[k]")}] += parts[{":, " * axis}k]
    return g
""")


def _written_vector(index):
    """``broadcast.written`` for an index of one integer vector: the selection, with zeros
    where an entry is selected again later (only its last write reached the array)."""
    found = _vector_index(index)
    if found is None:
        return None
    lines, j, axis, at = found
    return _compiled(f"""
def written_at(g, index):
{lines}    last = _last_writes(g.shape[{j}], vector)
    out = np.zeros(shape, dtype=g.dtype)
    for k in range(vector.size):
        if last[k]:
            out[{":, " * axis}k] = g[{at("vector[k]")}]
    return out
""", _last_writes=_last_writes)


def _unwritten_vector(like, index):
    """``broadcast.unwritten`` for an index of one integer vector: the parts of the last writes
    of each entry, in an array like ``like``."""
    found = _vector_index(index)
    if found is None:
        return None
    lines, j, axis, at = found
    dtype = _float_dtype(like)
    return _compiled(f"""
def unwritten_at(d, like, index):
    g = like
{lines}    last = _last_writes(g.shape[{j}], vector)
    parts = np.broadcast_to(np.asarray(d), shape)
    out = np.zeros(like.shape, dtype=dtype)
    for k in range(vector.size):
        if last[k]:
            out[{at("vector[k]")}] += parts[{":, " * axis}k]
    return out
""", _last_writes=_last_writes, dtype=dtype)


@overload(arrays.shape_of)
def _shape_of(x):
    return lambda x: x  # (an array itself: Numba has no ShapeOf)


@overload(containers.cotangent)
def _cotangent(ct, value):
    if isinstance(value, types.Array) and isinstance(ct, types.UniTuple) \
            and isinstance(ct.dtype, types.Array):
        return lambda ct, value: np.stack(ct)
    if not isinstance(ct, (types.BaseTuple, types.List)):
        return lambda ct, value: ct
    return None


@overload(containers.appended)
def _appended(items, item):
    if isinstance(items, types.List) and types.unliteral(item) == items.dtype:  # (never cast)
        def appended(items, item):
            out = list(items)
            out.append(item)
            return out
        return appended
    return None


@overload(containers.unappend)
def _unappend(g, n=1):
    if isinstance(g, (types.List, types.Array)):
        return lambda g, n=1: g[:len(g) - n]
    return None


@overload(containers.sequence)
def _sequence(items):
    if isinstance(items, types.RangeType):  # (Numba cannot index a range: its numbers)
        return lambda items: np.arange(items.start, items.stop, items.step)
    if isinstance(items, (types.Array, types.List, types.BaseTuple)):
        return lambda items: items
    return None


@overload(linalg.matmul_adjoint_a)
def _matmul_adjoint_a(g, a, b):
    if _number(g) and isinstance(a, types.Array) and isinstance(b, types.Array) \
            and a.ndim == 1 and b.ndim == 1:  # (a @ b of vectors: a number)
        return lambda g, a, b: g * b
    if all(isinstance(t, types.Array) for t in (g, a, b)):
        if a.ndim == 2 and b.ndim == 2:
            return lambda g, a, b: g @ b.T
        if a.ndim == 2 and b.ndim == 1:  # g: (n,) = (a @ b)
            return lambda g, a, b: np.outer(g, b)
        if a.ndim == 1 and b.ndim == 2:  # g: (m,)
            return lambda g, a, b: b @ g
        if a.ndim == 1 and b.ndim == 1:
            return lambda g, a, b: g * b
    return None


@overload(linalg.matmul_adjoint_b)
def _matmul_adjoint_b(g, a, b):
    if _number(g) and isinstance(a, types.Array) and isinstance(b, types.Array) \
            and a.ndim == 1 and b.ndim == 1:
        return lambda g, a, b: g * a
    if all(isinstance(t, types.Array) for t in (a, b)):
        if a.ndim == 2 and b.ndim == 2:
            return lambda g, a, b: a.T @ g
        if a.ndim == 2 and b.ndim == 1:
            return lambda g, a, b: a.T @ g
        if a.ndim == 1 and b.ndim == 2:
            return lambda g, a, b: np.outer(a, g)
        if a.ndim == 1 and b.ndim == 1:
            return lambda g, a, b: g * a
    return None


@overload(linalg.dot_adjoint_a)
def _dot_adjoint_a(g, a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim <= 2 \
            and b.ndim <= 2:  # (np.dot is a @ b for vectors and matrices)
        return lambda g, a, b: linalg.matmul_adjoint_a(g, a, b)
    return None


@overload(linalg.dot_adjoint_b)
def _dot_adjoint_b(g, a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim <= 2 \
            and b.ndim <= 2:
        return lambda g, a, b: linalg.matmul_adjoint_b(g, a, b)
    return None


@overload(linalg.untrace)
def _untrace(g, like, offset=0, axis1=0, axis2=1):
    plain = _given(axis1, 0) and _given(axis2, 1)
    if not (isinstance(like, types.Array) and like.ndim == 2 and _number(g) and plain):
        return None
    dtype = _float_dtype(like)

    def untrace(g, like, offset=0, axis1=0, axis2=1):
        out = np.zeros(like.shape, dtype=dtype)
        for i in range(max(0, -offset), like.shape[0]):
            if 0 <= i + offset < like.shape[1]:
                out[i, i + offset] = g
        return out
    return untrace


def _given(t, value) -> bool:
    """Whether an argument of Numba type ``t`` is ``value`` when compiled: omitted (Numba then
    gives the overload's default, or ``Omitted``), a literal, or None."""
    known = t.value if isinstance(t, types.Omitted) else getattr(t, "literal_value", t)
    if isinstance(t, types.NoneType):
        known = None
    return known is value or (type(known) is type(value) and known == value)


def _whole(axis, keepdims) -> bool:
    """A reduction over every axis, without keepdims (its result a number)."""
    return _given(axis, None) and _given(keepdims, False)


@overload(reductions.extremum_grad)
def _extremum_grad(g, a, ans, axis=None, keepdims=False):
    if not (isinstance(a, types.Array) and _number(g) and _whole(axis, keepdims)):
        return None
    dtype = _float_dtype(a)

    def extremum_grad(g, a, ans, axis=None, keepdims=False):  # (ties share g evenly)
        if np.isnan(ans):
            return np.full(a.shape, np.nan, dtype=dtype)
        hits = a == ans
        return np.where(hits, g / np.count_nonzero(hits), 0.0).astype(dtype)
    return extremum_grad


@overload(reductions.extremum_tangent)
def _extremum_tangent(v, a, ans, axis=None, keepdims=False):
    if not (isinstance(a, types.Array) and _whole(axis, keepdims)):
        return None
    if isinstance(v, types.Array):
        def extremum_tangent(v, a, ans, axis=None, keepdims=False):  # (the ties' mean)
            if np.isnan(ans):
                return np.nan
            hits = a == ans
            return np.sum(np.where(hits, v, 0.0)) / np.count_nonzero(hits)
        return extremum_tangent
    if _number(v):
        return lambda v, a, ans, axis=None, keepdims=False: np.nan if np.isnan(ans) else v * 1.0
    return None


@overload(reductions.norm_grad)
def _norm_grad(g, x, ans, ord=None, axis=None, keepdims=False):
    """The 2-norm (Frobenius of a matrix) of a whole float64 array: ``g x / ans`` (0 at 0)."""
    if not (isinstance(x, types.Array) and x.dtype == types.float64 and _number(g)
            and _given(ord, None) and _whole(axis, keepdims)):
        return None
    return lambda g, x, ans, ord=None, axis=None, keepdims=False: \
        g * x / (ans if ans != 0 else 1.0)


@overload(reductions.norm_tangent)
def _norm_tangent(v, x, ans, ord=None, axis=None, keepdims=False):
    if not (isinstance(x, types.Array) and x.dtype == types.float64
            and isinstance(v, types.Array) and _given(ord, None) and _whole(axis, keepdims)):
        return None
    return lambda v, x, ans, ord=None, axis=None, keepdims=False: \
        np.sum(x / (ans if ans != 0 else 1.0) * v)  # (NumPy's order of operations)


@overload(containers.extended)
def _extended(items, more):
    if isinstance(items, types.List) and isinstance(more, (types.List, types.UniTuple)) \
            and types.unliteral(more.dtype) == items.dtype:  # (never cast)
        def extended(items, more):
            out = list(items)
            for item in more:
                out.append(item)
            return out
        return extended
    return None


@overload(containers.last)
def _last(g, n):
    if isinstance(g, (types.List, types.Array)):
        return lambda g, n: g[len(g) - n:]
    return None


def _private(fn):
    """A helper of this module, compiled where its callers are."""
    from numba import njit
    return njit(fn)


_sum_to = _private(_sum_to)
_same_shape = _private(_same_shape)
_last_writes = _private(_last_writes)
range_item = _private(range_item)
