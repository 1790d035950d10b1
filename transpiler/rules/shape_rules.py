"""Adjoints of NumPy shape manipulation, assembly, splitting and reordering.

Ops that only move elements around get their gradient from ``rt.shapes.ungather``: the same op
applied to the ids of the input's elements tells where each output element came from.
(``np.concat`` and ``np.permute_dims`` are ``np.concatenate`` and ``np.transpose``.)
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d

# --- axes -------------------------------------------------------------------------------------

@adjoint(np.swapaxes)
def adj_swapaxes(ans, a, axis1, axis2):
    d[a] = np.swapaxes(d[ans], axis1, axis2)


@adjoint(np.moveaxis)
def adj_moveaxis(ans, a, source, destination):
    d[a] = np.moveaxis(d[ans], destination, source)


@adjoint(np.rollaxis)
def adj_rollaxis(ans, a, axis, start=0):
    d[a] = rt.shapes.unrollaxis(d[ans], np.ndim(a), axis, start)


@adjoint(np.expand_dims)
def adj_expand_dims(ans, a, axis):
    d[a] = np.reshape(d[ans], np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def adj_atleast(ans, a, b=None, c=None):  # NumPy's *arys: up to three arrays here
    if b is None:
        d[a] = np.reshape(d[ans], np.shape(a))
    else:  # several arrays give a list
        d[a] = rt.shapes.reshape_like(d[ans][0], a)
        d[b] = rt.shapes.reshape_like(d[ans][1], b)
        d[c] = rt.shapes.reshape_like(d[ans][2], c)


@adjoint(np.broadcast_to)
def adj_broadcast_to(ans, array, shape, subok=False):
    d[array] = rt.unbroadcast(d[ans], array)


@adjoint(np.broadcast_arrays)
def adj_broadcast_arrays(ans, a, b=None, c=None, *, subok=False):  # *args: up to three
    d[a] = rt.shapes.unbroadcast_item(d[ans], 0, a)
    d[b] = rt.shapes.unbroadcast_item(d[ans], 1, b)
    d[c] = rt.shapes.unbroadcast_item(d[ans], 2, c)


# --- assembly and splitting -------------------------------------------------------------------

@adjoint(np.hstack)
def adj_hstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[tup] = rt.shapes.unjoin(d[ans], tup, "hstack")


@adjoint(np.vstack)
def adj_vstack(ans, tup, *, dtype=None, casting="same_kind"):
    d[tup] = rt.shapes.unjoin(d[ans], tup, "vstack")


@adjoint(np.dstack)
def adj_dstack(ans, tup):
    d[tup] = rt.shapes.unjoin(d[ans], tup, "dstack")


@adjoint(np.column_stack)
def adj_column_stack(ans, tup):
    d[tup] = rt.shapes.unjoin(d[ans], tup, "column_stack")


@adjoint(np.block)
def adj_block(ans, arrays):
    d[arrays] = rt.shapes.unblock(d[ans], arrays)


@adjoint(np.split, np.array_split)
def adj_split(ans, ary, indices_or_sections, axis=0):
    d[ary] = rt.shapes.unsplit(d[ans], ans, axis)


@adjoint(np.hsplit)
def adj_hsplit(ans, ary, indices_or_sections):
    d[ary] = rt.shapes.unsplit(d[ans], ans, 1 if np.ndim(ary) > 1 else 0)


@adjoint(np.vsplit)
def adj_vsplit(ans, ary, indices_or_sections):
    d[ary] = rt.shapes.unsplit(d[ans], ans, 0)


@adjoint(np.dsplit)
def adj_dsplit(ans, ary, indices_or_sections):
    d[ary] = rt.shapes.unsplit(d[ans], ans, 2)


@adjoint(np.append)
def adj_append(ans, arr, values, axis=None):
    parts = rt.shapes.unappend(d[ans], arr, values, axis)
    d[arr] = parts[0]
    d[values] = parts[1]


@adjoint(np.insert)
def adj_insert(ans, arr, obj, values, axis=None):
    parts = rt.shapes.uninsert(d[ans], arr, obj, values, axis)
    d[arr] = parts[0]
    d[values] = parts[1]


@adjoint(np.delete)
def adj_delete(ans, arr, obj, axis=None):
    d[arr] = rt.shapes.ungather(d[ans], arr, np.delete(rt.shapes.element_ids(arr), obj, axis))


@adjoint(np.pad)
def adj_pad(ans, array, pad_width, mode="constant", *, constant_values=0):
    parts = rt.shapes.unpad(d[ans], array, pad_width, mode, constant_values)
    d[array] = parts[0]
    d[constant_values] = parts[1]


# --- conversion -------------------------------------------------------------------------------

@adjoint(np.array)
def adj_array(ans, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,
              ndmax=0, like=None):
    d[object] = rt.shapes.unarray(d[ans], object)


@adjoint(np.asarray)
def adj_asarray(ans, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    d[a] = rt.shapes.unarray(d[ans], a)


@adjoint(np.ascontiguousarray)
def adj_ascontiguousarray(ans, a, dtype=None, *, like=None):
    d[a] = rt.shapes.unarray(d[ans], a)


@adjoint(np.ndarray.astype)
def adj_astype(ans, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[a] = rt.shapes.uncast(d[ans], a, dtype)


# --- reordering, repetition and selection -----------------------------------------------------

@adjoint(np.flip)
def adj_flip(ans, m, axis=None):
    d[m] = np.flip(d[ans], axis)


@adjoint(np.fliplr)
def adj_fliplr(ans, m):
    d[m] = np.fliplr(d[ans])


@adjoint(np.flipud)
def adj_flipud(ans, m):
    d[m] = np.flipud(d[ans])


@adjoint(np.roll)
def adj_roll(ans, a, shift, axis=None):
    d[a] = np.roll(d[ans], np.negative(shift), axis)


@adjoint(np.rot90)
def adj_rot90(ans, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[ans], -k, axes)


@adjoint(np.tile)
def adj_tile(ans, A, reps):
    d[A] = rt.shapes.untile(d[ans], A, reps)


@adjoint(np.repeat)
def adj_repeat(ans, a, repeats, axis=None):
    d[a] = rt.shapes.ungather(d[ans], a, np.repeat(rt.shapes.element_ids(a), repeats, axis))


@adjoint(np.resize)
def adj_resize(ans, a, new_shape):
    d[a] = rt.shapes.ungather(d[ans], a, np.resize(rt.shapes.element_ids(a), new_shape))


@adjoint(np.take)
def adj_take(ans, a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        d[a] = rt.shapes.unsupported("np.take(..., out=...)")
    d[a] = rt.shapes.ungather(d[ans], a, np.take(rt.shapes.element_ids(a), indices, axis,
                                                 mode=mode))


@adjoint(np.take_along_axis)
def adj_take_along_axis(ans, arr, indices, axis=-1):
    d[arr] = rt.shapes.ungather(d[ans], arr, np.take_along_axis(rt.shapes.element_ids(arr),
                                                                indices, axis))


@adjoint(np.sort)
def adj_sort(ans, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = rt.shapes.ungather(d[ans], a, np.take_along_axis(
        rt.shapes.element_ids(a), np.argsort(a, axis=axis, kind="stable"), axis))


@adjoint(np.compress)
def adj_compress(ans, condition, a, axis=None, out=None):
    if out is not None:
        d[a] = rt.shapes.unsupported("np.compress(..., out=...)")
    d[a] = rt.shapes.ungather(d[ans], a, np.compress(condition, rt.shapes.element_ids(a), axis))


@adjoint(np.extract)
def adj_extract(ans, condition, arr):
    d[arr] = rt.shapes.ungather(d[ans], arr, np.extract(condition, rt.shapes.element_ids(arr)))


@adjoint(np.select)
def adj_select(ans, condlist, choicelist, default=0):
    parts = rt.shapes.unselect(d[ans], condlist, choicelist, default)
    d[choicelist] = parts[0]
    d[default] = parts[1]


@adjoint(np.piecewise)
def adj_piecewise(ans, x, condlist, funclist):  # constant values only (functions raise)
    d[x] = rt.shapes.unpiecewise(d[ans], x, funclist)
