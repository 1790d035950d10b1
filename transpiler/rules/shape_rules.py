"""Adjoints of NumPy shape manipulation, assembly, splitting and reordering.

Ops that only move elements around get their gradient from ``rt.ungather``: the same op
applied to the ids of the input's elements tells where each output element came from.
(``np.concat`` and ``np.permute_dims`` are ``np.concatenate`` and ``np.transpose``.) Their
tangents apply the same op to the tangent; helpers live in ``runtime/shapes.py``, each adjoint
next to its tangent.
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent

# --- axes -------------------------------------------------------------------------------------

@adjoint(np.swapaxes)
def adj_swapaxes(ans, a, axis1, axis2):
    d[a] = np.swapaxes(d[ans], axis1, axis2)


@tangent(np.swapaxes)
def tan_swapaxes(ans, a, axis1, axis2):
    d[ans] = np.swapaxes(d[a], axis1, axis2)


@adjoint(np.moveaxis)
def adj_moveaxis(ans, a, source, destination):
    d[a] = np.moveaxis(d[ans], destination, source)


@tangent(np.moveaxis)
def tan_moveaxis(ans, a, source, destination):
    d[ans] = np.moveaxis(d[a], source, destination)


@adjoint(np.rollaxis)
def adj_rollaxis(ans, a, axis, start=0):
    d[a] = rt.unrollaxis(d[ans], np.ndim(a), axis, start)


@tangent(np.rollaxis)
def tan_rollaxis(ans, a, axis, start=0):
    d[ans] = np.rollaxis(d[a], axis, start)


@adjoint(np.expand_dims)
def adj_expand_dims(ans, a, axis):
    d[a] = np.reshape(d[ans], np.shape(a))


@tangent(np.expand_dims)
def tan_expand_dims(ans, a, axis):
    d[ans] = np.expand_dims(d[a], axis)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def adj_atleast(ans, a, b=None, c=None):  # NumPy's *arys: up to three arrays here
    if b is None:
        d[a] = np.reshape(d[ans], np.shape(a))
    else:  # several arrays give a list
        d[a] = rt.reshape_like(d[ans][0], a)
        d[b] = rt.reshape_like(d[ans][1], b)
        d[c] = rt.reshape_like(d[ans][2], c)


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def tan_atleast(ans, a, b=None, c=None):  # only adds axes: each tangent reshaped like its result
    if b is None:
        d[ans] = np.reshape(d[a], np.shape(ans))
    elif c is None:  # several arrays give a tuple
        d[ans] = rt.reshape_each(ans, d[a], d[b])
    else:
        d[ans] = rt.reshape_each(ans, d[a], d[b], d[c])


@adjoint(np.broadcast_to)
def adj_broadcast_to(ans, array, shape, subok=False):
    d[array] = rt.unbroadcast(d[ans], array)


@tangent(np.broadcast_to)
def tan_broadcast_to(ans, array, shape, subok=False):
    d[ans] = np.broadcast_to(d[array], shape, subok)


@adjoint(np.broadcast_arrays)
def adj_broadcast_arrays(ans, a, b=None, c=None, *, subok=False):  # *args: up to three
    d[a] = rt.unbroadcast_item(d[ans], 0, a)
    d[b] = rt.unbroadcast_item(d[ans], 1, b)
    d[c] = rt.unbroadcast_item(d[ans], 2, c)


@tangent(np.broadcast_arrays)
def tan_broadcast_arrays(ans, a, b=None, c=None, *, subok=False):  # *args: up to three
    if b is None:
        d[ans] = rt.broadcast_arrays_tangent(ans, d[a])
    elif c is None:
        d[ans] = rt.broadcast_arrays_tangent(ans, d[a], d[b])
    else:
        d[ans] = rt.broadcast_arrays_tangent(ans, d[a], d[b], d[c])


# --- assembly and splitting -------------------------------------------------------------------

@adjoint(np.hstack)
def adj_hstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[tup] = rt.unjoin(d[ans], tup, "hstack")


@tangent(np.hstack)
def tan_hstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[ans] = np.hstack(d[tup], dtype=dtype, casting=casting)


@adjoint(np.vstack)
def adj_vstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[tup] = rt.unjoin(d[ans], tup, "vstack")


@tangent(np.vstack)
def tan_vstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[ans] = np.vstack(d[tup], dtype=dtype, casting=casting)


@adjoint(np.dstack)
def adj_dstack(ans, tup):
    d[tup] = rt.unjoin(d[ans], tup, "dstack")


@tangent(np.dstack)
def tan_dstack(ans, tup):
    d[ans] = np.dstack(d[tup])


@adjoint(np.column_stack)
def adj_column_stack(ans, tup):
    d[tup] = rt.unjoin(d[ans], tup, "column_stack")


@tangent(np.column_stack)
def tan_column_stack(ans, tup):
    d[ans] = np.column_stack(d[tup])


@adjoint(np.block)
def adj_block(ans, arrays):
    d[arrays] = rt.unblock(d[ans], arrays)


@tangent(np.block)
def tan_block(ans, arrays):
    d[ans] = rt.block_tangent(d[arrays])


@adjoint(rt.index_join)  # np.r_[...] and np.c_[...] (passes/resolve.py)
def adj_index_join(ans, maker, items):
    d[items] = rt.unindex_join(d[ans], maker, items)


@tangent(rt.index_join)
def tan_index_join(ans, maker, items):
    d[ans] = rt.index_join_tangent(d[items], maker, items)


@adjoint(rt.lanes)  # np.apply_along_axis (passes/higher_order.py)
def adj_lanes(ans, a, axis):
    d[a] = rt.ungather(d[ans], a, rt.lanes(rt.element_ids(a), axis))


@tangent(rt.lanes)
def tan_lanes(ans, a, axis):
    d[ans] = rt.lanes(d[a], axis)


@adjoint(rt.along_axis)
def adj_along_axis(ans, results, a, axis):
    d[results] = rt.ungather(d[ans], results, rt.along_axis(rt.element_ids(results), a, axis))


@tangent(rt.along_axis)
def tan_along_axis(ans, results, a, axis):
    d[ans] = rt.along_axis(d[results], a, axis)


@adjoint(np.split, np.array_split)
def adj_split(ans, ary, indices_or_sections, axis=0):
    d[ary] = rt.unsplit(d[ans], ans, axis)


@tangent(np.split, np.array_split)
def tan_split(ans, ary, indices_or_sections, axis=0):
    # array_split cuts where split does whenever split succeeds
    d[ans] = rt.listed(np.array_split(d[ary], indices_or_sections, axis))


@adjoint(np.hsplit)
def adj_hsplit(ans, ary, indices_or_sections):
    d[ary] = rt.unsplit(d[ans], ans, 1 if np.ndim(ary) > 1 else 0)


@tangent(np.hsplit)
def tan_hsplit(ans, ary, indices_or_sections):
    d[ans] = rt.listed(np.hsplit(d[ary], indices_or_sections))


@adjoint(np.vsplit)
def adj_vsplit(ans, ary, indices_or_sections):
    d[ary] = rt.unsplit(d[ans], ans, 0)


@tangent(np.vsplit)
def tan_vsplit(ans, ary, indices_or_sections):
    d[ans] = rt.listed(np.vsplit(d[ary], indices_or_sections))


@adjoint(np.dsplit)
def adj_dsplit(ans, ary, indices_or_sections):
    d[ary] = rt.unsplit(d[ans], ans, 2)


@tangent(np.dsplit)
def tan_dsplit(ans, ary, indices_or_sections):
    d[ans] = rt.listed(np.dsplit(d[ary], indices_or_sections))


@adjoint(np.append)
def adj_append(ans, arr, values, axis=None):
    parts = rt.unappend_array(d[ans], arr, values, axis)
    d[arr] = parts[0]
    d[values] = parts[1]


@tangent(np.append)
def tan_append(ans, arr, values, axis=None):
    d[ans] = np.append(d[arr], d[values], axis)


@adjoint(np.insert)
def adj_insert(ans, arr, obj, values, axis=None):
    parts = rt.uninsert(d[ans], arr, obj, values, axis)
    d[arr] = parts[0]
    d[values] = parts[1]


@tangent(np.insert)
def tan_insert(ans, arr, obj, values, axis=None):
    d[ans] = np.insert(d[arr], obj, d[values], axis)


@adjoint(np.delete)
def adj_delete(ans, arr, obj, axis=None):
    d[arr] = rt.ungather(d[ans], arr, np.delete(rt.element_ids(arr), obj, axis))


@tangent(np.delete)
def tan_delete(ans, arr, obj, axis=None):
    d[ans] = np.delete(d[arr], obj, axis)


@adjoint(np.pad)
def adj_pad(ans, array, pad_width, mode="constant", *, constant_values=0):
    parts = rt.unpad(d[ans], array, pad_width, mode, constant_values)
    d[array] = parts[0]
    d[constant_values] = parts[1]


@tangent(np.pad)
def tan_pad(ans, array, pad_width, mode="constant", *, constant_values=0):
    d[ans] = rt.pad_tangent(d[array], pad_width, mode, d[constant_values], ans)


# --- construction from values -----------------------------------------------------------------
# (np.zeros, np.ones, np.eye, ... are non-differentiable: their values are constants)

@adjoint(np.full)
def adj_full(ans, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[fill_value] = rt.unfill(d[ans], fill_value, ans)


@tangent(np.full)
def tan_full(ans, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[ans] = rt.cast_tangent(d[fill_value], ans)


@adjoint(np.full_like)  # the values of a do not matter, only its shape and dtype
def adj_full_like(ans, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                  device=None):
    d[fill_value] = rt.unfill(d[ans], fill_value, ans)


@tangent(np.full_like)
def tan_full_like(ans, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                  device=None):
    d[ans] = rt.cast_tangent(d[fill_value], ans)


@adjoint(np.linspace)
def adj_linspace(ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                 device=None):
    parts = rt.unlinspace(d[ans], start, stop, num, endpoint, retstep, axis, ans)
    d[start] = parts[0]
    d[stop] = parts[1]


@tangent(np.linspace)
def tan_linspace(ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                 device=None):
    d[ans] = rt.linspace_tangent(d[start], d[stop], num, endpoint, retstep, axis, ans)


@adjoint(np.arange)  # np.arange(stop) alone is 0, 1, ...: no gradient; stop only sets the length
def adj_arange(ans, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    if stop is not None:
        parts = rt.unarange(d[ans], start, step, ans)
        d[start] = parts[0]
        d[step] = parts[1]


@tangent(np.arange)
def tan_arange(ans, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    if stop is not None:
        if step is None:
            d[ans] = rt.cast_tangent(d[start], ans)
        else:
            d[ans] = rt.arange_tangent(d[start], d[step], ans)


# --- conversion -------------------------------------------------------------------------------

@adjoint(np.array)
def adj_array(ans, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,
              ndmax=0, like=None):
    d[object] = rt.unarray(d[ans], object)


@tangent(np.array)
def tan_array(ans, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,
              ndmax=0, like=None):
    # the same array of the tangents: only the keywords that decide values and memory are
    # passed on (a keyword of a newer NumPy, such as ndmax, is not, so the rule works on older)
    if dtype is None:
        d[ans] = np.array(d[object], copy=copy, ndmin=ndmin)
    else:
        d[ans] = np.array(d[object], dtype, copy=copy, ndmin=ndmin)


@adjoint(np.asarray)
def adj_asarray(ans, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    d[a] = rt.unarray(d[ans], a)


@tangent(np.asarray)
def tan_asarray(ans, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    if copy is None:  # copy= is NumPy 2's
        d[ans] = np.asarray(d[a], dtype)
    else:
        d[ans] = np.asarray(d[a], dtype, copy=copy)


@adjoint(np.ascontiguousarray)
def adj_ascontiguousarray(ans, a, dtype=None, *, like=None):
    d[a] = rt.unarray(d[ans], a)


@tangent(np.ascontiguousarray)
def tan_ascontiguousarray(ans, a, dtype=None, *, like=None):
    d[ans] = np.ascontiguousarray(d[a], dtype)


@adjoint(np.ndarray.astype)
def adj_astype(ans, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[a] = rt.uncast(d[ans], a, dtype)


@tangent(np.ndarray.astype)
def tan_astype(ans, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[ans] = rt.cast_tangent(d[a], ans)


@adjoint(np.ndarray.view)  # x.view() read, not written through (analysis/aliases.py)
def adj_view(ans, a, dtype=None, type=None):
    d[a] = rt.unview(d[ans], a, dtype)


@tangent(np.ndarray.view)
def tan_view(ans, a, dtype=None, type=None):
    d[ans] = rt.unview(d[a], a, dtype)


@adjoint(np.lib.stride_tricks.sliding_window_view)  # each element in every window holding it
def adj_sliding_window_view(ans, x, window_shape, axis=None, *, subok=False, writeable=False):
    d[x] = rt.ungather(d[ans], x, np.lib.stride_tricks.sliding_window_view(
        rt.element_ids(x), window_shape, axis))


@tangent(np.lib.stride_tricks.sliding_window_view)
def tan_sliding_window_view(ans, x, window_shape, axis=None, *, subok=False, writeable=False):
    d[ans] = np.lib.stride_tricks.sliding_window_view(d[x], window_shape, axis)


# --- reordering, repetition and selection -----------------------------------------------------

@adjoint(np.flip)
def adj_flip(ans, m, axis=None):
    d[m] = np.flip(d[ans], axis)


@tangent(np.flip)
def tan_flip(ans, m, axis=None):
    d[ans] = np.flip(d[m], axis)


@adjoint(np.fliplr)
def adj_fliplr(ans, m):
    d[m] = np.fliplr(d[ans])


@tangent(np.fliplr)
def tan_fliplr(ans, m):
    d[ans] = np.fliplr(d[m])


@adjoint(np.flipud)
def adj_flipud(ans, m):
    d[m] = np.flipud(d[ans])


@tangent(np.flipud)
def tan_flipud(ans, m):
    d[ans] = np.flipud(d[m])


@adjoint(np.roll)
def adj_roll(ans, a, shift, axis=None):
    d[a] = np.roll(d[ans], np.negative(shift), axis)


@tangent(np.roll)
def tan_roll(ans, a, shift, axis=None):
    d[ans] = np.roll(d[a], shift, axis)


@adjoint(np.rot90)
def adj_rot90(ans, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[ans], -k, axes)


@tangent(np.rot90)
def tan_rot90(ans, m, k=1, axes=(0, 1)):
    d[ans] = np.rot90(d[m], k, axes)


@adjoint(np.tile)
def adj_tile(ans, A, reps):
    d[A] = rt.untile(d[ans], A, reps)


@tangent(np.tile)
def tan_tile(ans, A, reps):
    d[ans] = np.tile(d[A], reps)


@adjoint(np.repeat)
def adj_repeat(ans, a, repeats, axis=None):
    d[a] = rt.ungather(d[ans], a, np.repeat(rt.element_ids(a), repeats, axis))


@tangent(np.repeat)
def tan_repeat(ans, a, repeats, axis=None):
    d[ans] = np.repeat(d[a], repeats, axis)


@adjoint(np.resize)
def adj_resize(ans, a, new_shape):
    d[a] = rt.ungather(d[ans], a, np.resize(rt.element_ids(a), new_shape))


@tangent(np.resize)
def tan_resize(ans, a, new_shape):
    d[ans] = np.resize(d[a], new_shape)


@adjoint(np.take)
def adj_take(ans, a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        d[a] = rt.unsupported("np.take(..., out=...)")
    d[a] = rt.ungather(d[ans], a, np.take(rt.element_ids(a), indices, axis,
                                          mode=mode))


@tangent(np.take)
def tan_take(ans, a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        d[ans] = rt.unsupported_tangent(d[a], "np.take(..., out=...)")
    else:
        d[ans] = np.take(d[a], indices, axis, mode=mode)


@adjoint(np.take_along_axis)
def adj_take_along_axis(ans, arr, indices, axis=-1):
    d[arr] = rt.ungather(d[ans], arr, np.take_along_axis(rt.element_ids(arr),
                                                         indices, axis))


@tangent(np.take_along_axis)
def tan_take_along_axis(ans, arr, indices, axis=-1):
    d[ans] = np.take_along_axis(d[arr], indices, axis)


@adjoint(np.sort)
def adj_sort(ans, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = rt.ungather(d[ans], a, np.take_along_axis(
        rt.element_ids(a), np.argsort(a, axis=axis, kind="stable"), axis))


@tangent(np.sort)
def tan_sort(ans, a, axis=-1, kind=None, order=None, *, stable=None):
    d[ans] = np.take_along_axis(d[a], np.argsort(a, axis=axis, kind="stable"), axis)


# np.partition: a permutation along the axis, the order inside each part NumPy's own (the
# elements matched to their places by rank)
@adjoint(np.partition)
def adj_partition(ans, a, kth, axis=-1, kind="introselect", order=None):
    d[a] = rt.unpermuted(d[ans], a, ans, axis)


@tangent(np.partition)
def tan_partition(ans, a, kth, axis=-1, kind="introselect", order=None):
    d[ans] = rt.permuted_tangent(d[a], a, ans, axis)


@adjoint(np.compress)
def adj_compress(ans, condition, a, axis=None, out=None):
    if out is not None:
        d[a] = rt.unsupported("np.compress(..., out=...)")
    d[a] = rt.ungather(d[ans], a, np.compress(condition, rt.element_ids(a), axis))


@tangent(np.compress)
def tan_compress(ans, condition, a, axis=None, out=None):
    if out is not None:
        d[ans] = rt.unsupported_tangent(d[a], "np.compress(..., out=...)")
    else:
        d[ans] = np.compress(condition, d[a], axis)


@adjoint(np.extract)
def adj_extract(ans, condition, arr):
    d[arr] = rt.ungather(d[ans], arr, np.extract(condition, rt.element_ids(arr)))


@tangent(np.extract)
def tan_extract(ans, condition, arr):
    d[ans] = np.extract(condition, d[arr])


@adjoint(np.select)
def adj_select(ans, condlist, choicelist, default=0):
    parts = rt.unselect(d[ans], condlist, choicelist, default)
    d[choicelist] = parts[0]
    d[default] = parts[1]


@tangent(np.select)
def tan_select(ans, condlist, choicelist, default=0):
    d[ans] = rt.select_tangent(condlist, d[choicelist], d[default], ans)


@adjoint(np.piecewise)
def adj_piecewise(ans, x, condlist, funclist):  # constant values only (functions raise)
    d[x] = rt.unpiecewise(d[ans], x, funclist)


@tangent(np.piecewise)
def tan_piecewise(ans, x, condlist, funclist):
    d[ans] = rt.piecewise_tangent(d[x], ans, funclist)
