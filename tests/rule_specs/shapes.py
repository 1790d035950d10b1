"""Specs of the shapes rules."""

import numpy as np

from tests.rule_specs.common import OpSpec
from transpiler.errors import TranspileError

V3, M23, T234 = ((3,),), ((2, 3),), ((2, 3, 4),)
ANY = (((),), V3, M23, T234)  # a Python float and 1-3 dimensional arrays
ARRAYS = (V3, M23, T234)

SPECS: list = [
    # --- axes ---------------------------------------------------------------------------------
    OpSpec(np.swapaxes, "np.swapaxes(a, 0, 1)", 1, shapes=(M23, T234)),
    OpSpec(np.swapaxes, "np.swapaxes(a, -1, 0)", 1, shapes=(V3, T234)),
    OpSpec(np.swapaxes, "a.swapaxes(2, 1)", 1, shapes=(T234,)),
    OpSpec(np.moveaxis, "np.moveaxis(a, 0, -1)", 1, shapes=(M23, T234)),
    OpSpec(np.moveaxis, "np.moveaxis(a, (0, 1), (2, 0))", 1, shapes=(T234,)),
    OpSpec(np.moveaxis, "np.moveaxis(a, source=-1, destination=1)", 1, shapes=(T234,)),
    OpSpec(np.rollaxis, "np.rollaxis(a, 2)", 1, shapes=(T234,)),
    OpSpec(np.rollaxis, "np.rollaxis(a, 0, 3)", 1, shapes=(T234,)),
    OpSpec(np.rollaxis, "np.rollaxis(a, -1, 1)", 1, shapes=(T234,)),
    OpSpec(np.rollaxis, "np.rollaxis(a, 1, -1)", 1, shapes=(T234,)),
    OpSpec(np.rollaxis, "np.rollaxis(a, 1, start=0)", 1, shapes=(M23,)),
    OpSpec(np.expand_dims, "np.expand_dims(a, 0)", 1, shapes=ANY),
    OpSpec(np.expand_dims, "np.expand_dims(a, axis=-1)", 1, shapes=(V3, M23)),
    OpSpec(np.expand_dims, "np.expand_dims(a, (0, -1))", 1, shapes=(M23,)),
    OpSpec(np.atleast_1d, "np.atleast_1d(a)", 1, shapes=ANY),
    OpSpec(np.atleast_2d, "np.atleast_2d(a)", 1, shapes=ANY),
    OpSpec(np.atleast_3d, "np.atleast_3d(a)", 1, shapes=ANY),
    OpSpec(np.atleast_1d, "x, y = np.atleast_1d(a, b); x * y[0]", 2, shapes=(((), (2,)),)),
    OpSpec(np.atleast_2d, "x, y = np.atleast_2d(a, b); x + y", 2, shapes=(((3,), (2, 3)),)),
    OpSpec(np.atleast_3d, "xs = np.atleast_3d(a, b, c); xs[0] * xs[2] + xs[1]", 3,
           shapes=(((2, 1),) * 2 + ((),),)),
    OpSpec(np.atleast_2d, "np.atleast_2d(a, b)[1]", 2, shapes=(((3,), (2, 2)),)),  # a unused
    OpSpec(np.broadcast_to, "np.broadcast_to(a, (2, 3))", 1, shapes=(((),), V3, ((2, 1),))),
    OpSpec(np.broadcast_to, "np.broadcast_to(a, shape=(4, 2, 3))", 1, shapes=(M23,)),
    OpSpec(np.broadcast_arrays, "x, y = np.broadcast_arrays(a, b); x * y", 2,
           shapes=(((3, 1), (4,)), ((), (2, 3)), ((2, 3), (2, 3)))),
    OpSpec(np.broadcast_arrays, "x, y, z = np.broadcast_arrays(a, b, c); x * y + z", 3,
           shapes=(((3, 1), (4,), ()), ((), (2, 1), (2, 3)))),
    OpSpec(np.broadcast_arrays, "np.broadcast_arrays(a, b)[0]", 2, shapes=(((3, 1), (4,)),)),
    OpSpec(np.broadcast_arrays, "np.broadcast_arrays(a)[0] * 2.0", 1, shapes=(M23,)),

    # NumPy 2 names of existing keys (the same objects): np.concat, np.permute_dims
    OpSpec(np.concatenate, "np.concat((a, b), axis=-1)", 2, shapes=(((2, 3), (2, 1)),)),
    OpSpec(np.transpose, "np.permute_dims(a, (2, 0, 1))", 1, shapes=(T234,)),

    # --- assembly -----------------------------------------------------------------------------
    OpSpec(np.hstack, "np.hstack((a, b))", 2, shapes=(
        ((3,), (2,)), ((), (3,)), ((), ()), ((2, 3), (2, 1)), ((2, 1, 2), (2, 3, 2)))),
    OpSpec(np.hstack, "np.hstack([a, b * 2.0, a])", 2, shapes=(((2, 3), (2, 2)),)),
    OpSpec(np.hstack, "np.hstack(a)", 1, shapes=(M23, T234)),  # an array's rows
    OpSpec(np.hstack, "np.hstack([v * b for v in a])", 2, shapes=(((2, 3), (3,)),)),
    OpSpec(np.hstack, "xs = [a, b]; np.hstack(xs) * np.concatenate(xs)", 2,
           shapes=(((3,), (2,)),)),
    OpSpec(np.hstack, "xs = [a, b]; np.hstack(xs) * np.hstack(xs)", 2, shapes=(((3,), (2,)),)),
    OpSpec(np.vstack, "np.vstack((a, b))", 2, shapes=(
        ((3,), (3,)), ((3,), (2, 3)), ((), ()), ((2, 3, 4), (1, 3, 4)))),
    OpSpec(np.vstack, "np.vstack([a, b, a])", 2, shapes=(((2, 3), (1, 3)),)),
    OpSpec(np.vstack, "np.vstack(a)", 1, shapes=(M23,)),
    OpSpec(np.dstack, "np.dstack((a, b))", 2, shapes=(
        ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (2, 3, 2)), ((), ()))),
    OpSpec(np.dstack, "np.dstack([a, b, a])", 2, shapes=(((2, 3, 1), (2, 3, 4)),)),
    OpSpec(np.column_stack, "np.column_stack((a, b))", 2, shapes=(
        ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (2, 1)), ((), ()))),
    OpSpec(np.column_stack, "np.column_stack([a, b, a])", 2, shapes=(((3, 2), (3,)),)),
    OpSpec(np.block, "np.block([a, b])", 2, shapes=(((3,), (2,)), ((2, 3), (2, 1)))),
    OpSpec(np.block, "np.block([a, b, a])", 2, shapes=(((), (2,)),)),
    OpSpec(np.block, "r = [a, b]; s = [b, a]; np.block([r, s])", 2, shapes=(
        ((2, 2), (2, 2)), ((2,), (2,)))),
    OpSpec(np.block, "r = [a, b]; s = [c]; np.block([r, s])", 3, shapes=(
        ((2, 1), (2, 3), (1, 4)), ((1,), (3,), (2, 4)))),
    OpSpec(np.block, "np.block(a)", 1, shapes=(M23,)),
    OpSpec(np.append, "np.append(a, b)", 2, shapes=(
        ((3,), (2,)), ((2, 3), ()), ((), (2, 2)), ((), ()))),
    OpSpec(np.append, "np.append(a, b, axis=0)", 2, shapes=(((2, 3), (1, 3)), ((3,), (2,)))),
    OpSpec(np.append, "np.append(a, b, -1)", 2, shapes=(((2, 3), (2, 2)),)),
    OpSpec(np.append, "np.append(a, [b, c])", 3, shapes=(((3,), (), ()),)),
    OpSpec(np.append, "np.append(a, a * b)", 2, shapes=(((3,), ()),)),
    OpSpec(np.insert, "np.insert(a, 1, b)", 2, shapes=(
        ((3,), ()), ((3,), (2,)), ((2, 3), (2,)), ((2, 3), ()))),
    OpSpec(np.insert, "np.insert(a, 1, b, axis=0)", 2, shapes=(
        ((2, 3), ()), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 3)))),
    OpSpec(np.insert, "np.insert(a, [0, 2, 2], b, axis=-1)", 2, shapes=(
        ((2, 3), ()), ((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), (2, 3)))),
    OpSpec(np.insert, "np.insert(a, slice(0, 2), b, 1)", 2, shapes=(((2, 3), (2,)),)),
    OpSpec(np.insert, "np.insert(a, 2, [b, c])", 3, shapes=(((3,), (), ()),)),
    OpSpec(np.insert, "np.insert(a, [3, -1, 0], b)", 2, shapes=(((4,), (3,)), ((2, 2), ()))),
    OpSpec(np.insert, "np.insert(a, -1, b, axis=1)", 2, shapes=(((2, 3, 2), (2, 2)),)),
    OpSpec(np.delete, "np.delete(a, 1)", 1, shapes=(V3, M23)),
    OpSpec(np.delete, "np.delete(a, [0, 2], axis=1)", 1, shapes=(M23, T234)),
    OpSpec(np.delete, "np.delete(a, slice(0, 4, 2), -1)", 1, shapes=(T234,)),
    OpSpec(np.delete, "np.delete(a, a < 0.0)", 1, shapes=(((6,),),)),

    # --- padding ------------------------------------------------------------------------------
    OpSpec(np.pad, "np.pad(a, 1)", 1, shapes=(V3, M23, T234)),
    OpSpec(np.pad, "np.pad(a, ((1, 0), (2, 1)))", 1, shapes=(M23,)),
    OpSpec(np.pad, "np.pad(a, (1, 2), constant_values=1.5)", 1, shapes=(M23,)),
    OpSpec(np.pad, "np.pad(a, (1, 2), 'constant', constant_values=b)", 2, shapes=(
        ((3,), ()), ((2, 3), ()), ((2, 3), (2,)), ((2, 3), (2, 2)), ((2, 3), (1,)))),
    OpSpec(np.pad, "np.pad(a, 1, constant_values=(b, c))", 3, shapes=(((2, 3), (), ()),)),
    OpSpec(np.pad, "np.pad(a, 2, mode='edge')", 1, shapes=(V3, M23)),
    OpSpec(np.pad, "np.pad(a, ((1, 2), (2, 1)), mode='reflect')", 1, shapes=(((3, 4),),)),
    OpSpec(np.pad, "np.pad(a, 2, 'symmetric')", 1, shapes=(V3, M23)),
    OpSpec(np.pad, "np.pad(a, (3, 4), mode='wrap')", 1, shapes=(V3, M23)),
    OpSpec(np.pad, "np.pad(a, 1, mode='mean')", 1, shapes=(V3,),
           xfail=(NotImplementedError, "only modes that copy elements are supported")),
    OpSpec(np.pad, "np.pad(a, 1, mode='linear_ramp')", 1, shapes=(V3,),
           xfail=(NotImplementedError, "only modes that copy elements are supported")),

    # --- splitting (list results) -------------------------------------------------------------
    OpSpec(np.split, "x, y, z = np.split(a, 3); x * y + z", 1, shapes=(((6,),), ((3, 2),))),
    OpSpec(np.split, "np.split(a, [1, 3], axis=1)[1]", 1, shapes=(((2, 4),), ((2, 5, 3),))),
    OpSpec(np.split, "xs = np.split(a, 2, axis=-1); xs[0] * xs[1]", 1, shapes=(((3, 4),),)),
    OpSpec(np.split, "x, y = np.split(a, [2]); np.sum(x) * y", 1, shapes=(((5,),),)),
    OpSpec(np.array_split, "x, y = np.array_split(a, 2); np.sum(x) * y", 1, shapes=(((5,),),)),
    OpSpec(np.array_split, "np.array_split(a, 3, axis=1)[2]", 1, shapes=(((2, 7),),)),
    OpSpec(np.array_split, "x, y, z = np.array_split(a, 3, -1); x * y[..., :1] + z", 1,
           shapes=(((2, 5),),)),
    OpSpec(np.hsplit, "x, y = np.hsplit(a, 2); x * y", 1, shapes=(((4,),), ((3, 4),),
                                                                  ((2, 4, 3),))),
    OpSpec(np.hsplit, "np.hsplit(a, [1])[1]", 1, shapes=(((3, 4),),)),
    OpSpec(np.vsplit, "x, y = np.vsplit(a, 2); x * y", 1, shapes=(((4, 3),), ((2, 3, 2),))),
    OpSpec(np.vsplit, "np.vsplit(a, [1])[0]", 1, shapes=(((3, 2),),)),
    OpSpec(np.dsplit, "x, y = np.dsplit(a, 2); x * y", 1, shapes=(((2, 3, 4),),)),
    OpSpec(np.dsplit, "np.dsplit(a, [1, 3])[2]", 1, shapes=(((2, 3, 5),),)),

    # --- conversion ---------------------------------------------------------------------------
    OpSpec(np.array, "np.array([a, b])", 2, shapes=(((), ()), ((3,), (3,)), ((2, 3), (2, 3)))),
    OpSpec(np.array, "np.array((a, 2.0, b, a))", 2, shapes=(((), ()),)),
    OpSpec(np.array, "np.array(a)", 1, shapes=(V3, M23)),
    OpSpec(np.array, "np.array(a, ndmin=3)", 1, shapes=(((),), V3)),
    OpSpec(np.array, "r = [a, b]; s = [b, c]; np.array([r, s])", 3, shapes=(
        ((), (), ()), ((2,), (2,), (2,)))),
    OpSpec(np.array, "r = (a, b); s = (c, 1.0); np.array([r, s], copy=True)", 3,
           shapes=(((), (), ()),)),
    OpSpec(np.array, "np.array([[a, b], [b, a]])", 2, shapes=(((), ()),), xfail=(
        AssertionError, "compiler: a nested literal in a call argument is not reduced to names")),
    OpSpec(np.asarray, "np.asarray([a, b, a])", 2, shapes=(((), ()), ((3,), (3,)))),
    OpSpec(np.asarray, "np.asarray(a)", 1, shapes=(V3, M23)),
    OpSpec(np.asarray, "xs = [a, b]; np.asarray(xs) * np.asarray(xs)", 2, shapes=(
        ((), ()), ((3,), (3,)))),
    OpSpec(np.array, "xs = [v * b for v in a]; np.array(xs)", 2, shapes=(((3,), ()),
                                                                       ((2, 3), (3,)))),
    OpSpec(np.asarray, "np.asarray(a, dtype=float)", 1, shapes=(M23,)),
    OpSpec(np.ascontiguousarray, "np.ascontiguousarray(a.T)", 1, shapes=(M23, T234)),
    OpSpec(np.ascontiguousarray, "np.ascontiguousarray([a, b])", 2, shapes=(((), ()),)),
    OpSpec(np.ndarray.astype, "a.astype(np.float64)", 1, shapes=(V3, M23)),
    OpSpec(np.ndarray.astype, "a.astype('f8', copy=False)", 1, shapes=(T234,)),
    OpSpec(np.ndarray.astype, "a * a.astype(int)", 1, domain=(0.2, 0.8), shapes=(V3,)),

    # --- reordering ---------------------------------------------------------------------------
    OpSpec(np.flip, "np.flip(a)", 1, shapes=ARRAYS),
    OpSpec(np.flip, "np.flip(a, 0)", 1, shapes=(V3, M23)),
    OpSpec(np.flip, "np.flip(a, axis=-1)", 1, shapes=(T234,)),
    OpSpec(np.flip, "np.flip(a, axis=(0, 2))", 1, shapes=(T234,)),
    OpSpec(np.fliplr, "np.fliplr(a)", 1, shapes=(M23, T234)),
    OpSpec(np.flipud, "np.flipud(a)", 1, shapes=ARRAYS),
    OpSpec(np.roll, "np.roll(a, 1)", 1, shapes=ARRAYS),
    OpSpec(np.roll, "np.roll(a, -2, axis=1)", 1, shapes=(M23, T234)),
    OpSpec(np.roll, "np.roll(a, 5, -1)", 1, shapes=(V3, M23)),
    OpSpec(np.roll, "np.roll(a, (1, -2), axis=(0, 2))", 1, shapes=(T234,)),
    OpSpec(np.roll, "np.roll(a, (1, 2))", 1, shapes=(M23,)),
    OpSpec(np.roll, "np.roll(a, shift=2, axis=(0, 1))", 1, shapes=(M23,)),
    OpSpec(np.rot90, "np.rot90(a)", 1, shapes=(M23, T234)),
    OpSpec(np.rot90, "np.rot90(a, 2)", 1, shapes=(M23,)),
    OpSpec(np.rot90, "np.rot90(a, k=-1, axes=(2, 0))", 1, shapes=(T234,)),
    OpSpec(np.rot90, "np.rot90(a, 3, (-1, -2))", 1, shapes=(T234,)),
    OpSpec(np.sort, "np.sort(a)", 1, shapes=ARRAYS),
    OpSpec(np.sort, "np.sort(a, axis=0)", 1, shapes=(M23, T234)),
    OpSpec(np.sort, "np.sort(a, -2)", 1, shapes=(T234,)),
    OpSpec(np.sort, "np.sort(a, axis=None)", 1, shapes=(M23,)),
    OpSpec(np.sort, "np.sort(a, kind='stable') * a", 1, shapes=(V3,)),

    # --- repetition ---------------------------------------------------------------------------
    OpSpec(np.tile, "np.tile(a, 2)", 1, shapes=ANY),
    OpSpec(np.tile, "np.tile(a, (2, 1, 3))", 1, shapes=(V3, M23)),
    OpSpec(np.tile, "np.tile(a, reps=(2, 2))", 1, shapes=(T234,)),
    OpSpec(np.tile, "np.tile(a, [3])", 1, shapes=(M23,)),
    OpSpec(np.repeat, "np.repeat(a, 3)", 1, shapes=ANY),
    OpSpec(np.repeat, "np.repeat(a, 2, axis=1)", 1, shapes=(M23, T234)),
    OpSpec(np.repeat, "np.repeat(a, [1, 0, 3], axis=-1)", 1, shapes=(V3, M23)),
    OpSpec(np.repeat, "np.repeat(a, [2, 1], 0)", 1, shapes=(M23,)),
    OpSpec(np.repeat, "a.repeat(2)", 1, shapes=(M23,)),
    OpSpec(np.repeat, "np.repeat(a, np.arange(6))", 1, shapes=(M23,)),
    OpSpec(np.resize, "np.resize(a, (3, 4))", 1, shapes=(V3, M23)),
    OpSpec(np.resize, "np.resize(a, 4)", 1, shapes=(M23,)),
    OpSpec(np.resize, "np.resize(a, 7)", 1, shapes=(V3,)),

    # --- selection ----------------------------------------------------------------------------
    OpSpec(np.take, "np.take(a, [2, 0, 2, 2])", 1, shapes=(V3, M23)),
    OpSpec(np.take, "np.take(a, 1)", 1, shapes=(V3, M23)),
    OpSpec(np.take, "np.take(a, [[0, 1], [1, 1]], axis=1)", 1, shapes=(M23, T234)),
    OpSpec(np.take, "np.take(a, np.array([-1, 0, -1]), axis=-1)", 1, shapes=(T234,)),
    OpSpec(np.take, "np.take(a, 1, axis=0)", 1, shapes=(M23,)),
    OpSpec(np.take, "np.take(a, [4, -5, 1], 1, mode='wrap')", 1, shapes=(M23,)),
    OpSpec(np.take, "np.take(a, [7, 1, -3], mode='clip')", 1, shapes=(M23,)),
    OpSpec(np.take, "a.take([0, 0, 1], axis=0)", 1, shapes=(M23,)),
    OpSpec(np.take_along_axis, "np.take_along_axis(a, np.array([[0, 2, 2], [1, 0, 1]]), 1)",
           1, shapes=(M23,)),
    OpSpec(np.take_along_axis, "np.take_along_axis(a, np.array([[1, 1, 0]]), axis=0)", 1,
           shapes=(M23,)),  # broadcasts over axis 1 of the indices
    OpSpec(np.take_along_axis, "np.take_along_axis(a, np.array([[0], [2]]), -1)", 1,
           shapes=(((2, 3),),)),
    OpSpec(np.take_along_axis, "np.take_along_axis(a, np.argsort(a, axis=0), axis=0)", 1,
           shapes=(T234,)),
    OpSpec(np.take_along_axis, "np.take_along_axis(a, np.array([3, 0, 0]), axis=None)", 1,
           shapes=(M23,)),
    OpSpec(np.compress, "np.compress([True, False, True], a)", 1, shapes=(V3, M23)),
    OpSpec(np.compress, "np.compress([False, True], a, axis=0)", 1, shapes=(M23, T234)),
    OpSpec(np.compress, "np.compress(np.array([True, False, True]), a, axis=-2)", 1,
           shapes=(T234,)),
    OpSpec(np.compress, "np.compress(a[0] > 0.0, a, 1)", 1, shapes=(M23,)),
    OpSpec(np.extract, "np.extract(a > 0.0, a)", 1, shapes=(V3, M23, T234)),
    OpSpec(np.extract, "np.extract(b, a)", 2, bools=(0,), shapes=(((2, 3), (2, 3)),)),
    OpSpec(np.select, "np.select([a > 0.5, a < -0.5], [a * a, b])", 2, shapes=(
        ((3,), (3,)), ((2, 3), ()), ((2, 3), (3,)))),
    OpSpec(np.select, "np.select([a > 0.0], [b], default=c)", 3, shapes=(
        ((3,), (3,), (3,)), ((2, 3), (3,), ()), ((), (), ()), ((3, 1), (), (1, 4)))),
    OpSpec(np.select, "np.select([a > 0.5, a > -0.5], [b, c], 1.5)", 3, shapes=(
        ((2, 3), (2, 3), (3,)),)),  # overlapping conditions: the first wins
    OpSpec(np.piecewise, "np.piecewise(a, [a < 0.0, a >= 0.0], [-1.0, 1.0]) * a", 1,
           shapes=(V3, M23)),
    OpSpec(np.piecewise, "np.piecewise(a, [a < 0.0], [np.sin, 1.0])", 1,
           shapes=(V3,), xfail=(NotImplementedError, "functions in funclist raise")),
    OpSpec(np.take, "np.take(a, [0, 1], out=np.zeros(2))", 1, shapes=(V3,),
           xfail=(TranspileError, "out= is refused")),
    OpSpec(np.compress, "np.compress([True, False], a, out=np.zeros(1))", 1, shapes=(V3,),
           xfail=(TranspileError, "out= is refused")),
]

FLOAT32: list = [
    ("np.swapaxes(a, 0, -1)", ((2, 3, 4),)),
    ("np.moveaxis(a, 0, -1)", ((2, 3, 4),)),
    ("np.rollaxis(a, -1)", ((2, 3, 4),)),
    ("np.expand_dims(a, (0, 2))", ((2, 3),)),
    ("np.atleast_3d(a)", ((3,),)),
    ("x, y = np.atleast_2d(a, b); x * y", ((3,), (2, 3))),
    ("np.broadcast_to(a, (4, 2, 3))", ((2, 1),)),
    ("x, y = np.broadcast_arrays(a, b); x * y", ((3, 1), (4,))),
    ("np.hstack((a, b))", ((2, 3), (2, 1))),
    ("np.vstack((a, b))", ((3,), (2, 3))),
    ("np.dstack((a, b))", ((2, 3), (2, 3, 2))),
    ("np.column_stack((a, b))", ((3,), (3, 2))),
    ("r = [a, b]; s = [b, a]; np.block([r, s])", ((2, 2), (2, 2))),
    ("x, y = np.split(a, 2, axis=-1); x * y", ((3, 4),)),
    ("np.array_split(a, 3)[1]", ((5,),)),
    ("x, y = np.hsplit(a, 2); x * y", ((3, 4),)),
    ("x, y = np.vsplit(a, 2); x * y", ((4, 3),)),
    ("np.dsplit(a, [1])[1]", ((2, 3, 4),)),
    ("np.tile(a, (2, 1, 3))", ((2, 3),)),
    ("np.repeat(a, [1, 0, 3], axis=-1)", ((2, 3),)),
    ("np.flip(a, (0, 2))", ((2, 3, 4),)),
    ("np.fliplr(a) + np.flipud(a)", ((2, 3),)),
    ("np.roll(a, (1, -2), axis=(0, 2))", ((2, 3, 4),)),
    ("np.rot90(a, 1, (2, 0))", ((2, 3, 4),)),
    ("np.pad(a, ((1, 0), (2, 1)), constant_values=b)", ((2, 3), (2,))),
    ("np.pad(a, 2, mode='reflect')", ((3, 4),)),
    ("np.array([a, b])", ((3,), (3,))),
    ("np.asarray(a, dtype=np.float64)", ((2, 3),)),
    ("np.ascontiguousarray(a.T)", ((2, 3),)),
    ("a.astype(np.float64)", ((2, 3),)),
    ("np.take(a, [2, 0, 2], axis=-1)", ((2, 3),)),
    ("np.take_along_axis(a, np.array([[0, 2, 2], [1, 0, 1]]), 1)", ((2, 3),)),
    ("np.sort(a, axis=0)", ((3, 4),)),
    ("np.append(a, b, axis=0)", ((2, 3), (1, 3))),
    ("np.insert(a, [0, 2], b, axis=1)", ((2, 3), (2, 1))),
    ("np.delete(a, [0, 2], axis=1)", ((2, 3, 4),)),
    ("np.select([a > 1.0], [a * b], b)", ((2, 3), (3,))),
    ("np.compress([True, False, True], a, axis=-1)", ((2, 3),)),
    ("np.extract(a > 1.0, a)", ((2, 3),)),
    ("np.resize(a, (3, 4))", ((2, 3),)),
]
