"""Every adjoint rule, checked against finite differences.

The spec table ``SPECS`` holds one or more ``OpSpec`` per key of ``ADJOINTS``. Each spec is an
expression template in the arguments ``a, b, c`` and a list of argument shapes. For every
spec x shapes x optimize a scalar test function is built:

- scalar-valued expression:  ``return <expr>``
- array-valued expression:   ``return np.sum((<expr>) * u)`` with ``u`` a fixed random covector
  of the output's shape (a global of the function). The gradient of this is the vector-Jacobian
  product ``J^T u``, so a random ``u`` checks the whole Jacobian-transpose, not a single row.

The gradient with respect to every differentiable argument (all at once, ``wrt`` a tuple) is
compared with central finite differences by ``check_grad``.

Other tests: float32 in -> float32 gradient per op family; a meta-test that every registered
key has a spec (and that this meta-test detects a missing one); and sanity tests that the
checking machinery itself can fail.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator

import gast
import numpy as np
import pytest

import runtime
from tests.rule_specs import SPEC_GLOBALS, build, case_seed, discovered, here, make_args
from tests.rule_specs.common import (
    AWAY,
    BINARY,
    CONST_OPERAND,
    POS,
    REDUCE_IN,
    SCALAR1,
    SCALAR2,
    UNARY,
    OpSpec,
    unary_math,
    unary_np,
)
from tests.util import make, rand
from transpiler import check_grad, grad
from transpiler.checking import numeric_grad
from transpiler.rules.methods import METHODS
from transpiler.rules.registry import ADJOINTS, adjoint, d, key_name

SPECS: list[OpSpec] = here([
    # --- operators ---------------------------------------------------------------------------
    OpSpec(gast.Add, "a + b", 2, shapes=BINARY),
    OpSpec(gast.Add, "a + 1.5", 1, shapes=CONST_OPERAND),
    OpSpec(gast.Add, "a + a", 1, shapes=CONST_OPERAND),  # accumulation into one argument
    OpSpec(gast.Sub, "a - b", 2, shapes=BINARY),
    OpSpec(gast.Sub, "2.0 - a", 1, shapes=CONST_OPERAND),
    OpSpec(gast.Mult, "a * b", 2, shapes=BINARY),
    OpSpec(gast.Mult, "3.0 * a", 1, shapes=CONST_OPERAND),
    OpSpec(gast.Mult, "a * a", 1, shapes=CONST_OPERAND),
    OpSpec(gast.Div, "a / b", 2, ((-2.0, 2.0), AWAY), BINARY, signed=(1,)),
    OpSpec(gast.Div, "1.0 / a", 1, AWAY, CONST_OPERAND, signed=(0,)),
    OpSpec(gast.Div, "a / 4.0", 1, shapes=CONST_OPERAND),
    OpSpec(gast.Pow, "a ** b", 2, (POS, (-2.0, 2.0)), BINARY),
    OpSpec(gast.Pow, "a ** 3", 1, shapes=CONST_OPERAND),  # any sign: constant int exponent
    OpSpec(gast.Pow, "a ** 0.5", 1, POS, CONST_OPERAND),
    OpSpec(gast.Pow, "2.0 ** a", 1, shapes=CONST_OPERAND),
    OpSpec(gast.MatMult, "a @ b", 2, shapes=(
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (3, 3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)))),
    OpSpec(gast.USub, "-a", 1, shapes=UNARY),
    OpSpec(gast.UAdd, "+a", 1, shapes=UNARY),

    # --- numpy arithmetic ufuncs (same rules as the operators) --------------------------------
    OpSpec(np.add, "np.add(a, b)", 2, shapes=BINARY),
    OpSpec(np.subtract, "np.subtract(a, b)", 2, shapes=BINARY),
    OpSpec(np.multiply, "np.multiply(a, b)", 2, shapes=BINARY),
    OpSpec(np.multiply, "np.multiply(a, a)", 1, shapes=UNARY),
    OpSpec(np.divide, "np.divide(a, b)", 2, ((-2.0, 2.0), AWAY), BINARY, signed=(1,)),
    OpSpec(np.power, "np.power(a, b)", 2, (POS, (-2.0, 2.0)), BINARY),
    OpSpec(np.power, "np.power(a, 2)", 1, shapes=UNARY),
    OpSpec(np.matmul, "np.matmul(a, b)", 2, shapes=(
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (3, 3, 4)),
        ((3,), (5, 3, 4)), ((5, 2, 3), (3,)))),
    OpSpec(np.negative, "np.negative(a)", 1, shapes=UNARY),
    OpSpec(np.positive, "np.positive(a)", 1, shapes=UNARY),

    # --- numpy unary ufuncs -------------------------------------------------------------------
    unary_np(np.sin),
    unary_np(np.cos),
    unary_np(np.tan, domain=(-1.2, 1.2)),
    unary_np(np.arctan),
    unary_np(np.sinh),
    unary_np(np.cosh),
    unary_np(np.tanh),
    unary_np(np.exp),
    unary_np(np.expm1),
    unary_np(np.log, domain=POS),
    unary_np(np.log1p, domain=(-0.5, 2.0)),
    unary_np(np.sqrt, domain=POS),
    unary_np(np.square),
    unary_np(np.reciprocal, domain=AWAY, signed=(0,)),
    unary_np(np.abs, domain=AWAY, signed=(0,)),
    unary_np(np.fabs, domain=AWAY, signed=(0,)),

    # --- numpy binary ufuncs ------------------------------------------------------------------
    OpSpec(np.arctan2, "np.arctan2(a, b)", 2, (AWAY, (-2.0, 2.0)), BINARY, signed=(0,)),
    OpSpec(np.hypot, "np.hypot(a, b)", 2, AWAY, BINARY, signed=(0, 1)),
    OpSpec(np.maximum, "np.maximum(a, b)", 2, shapes=BINARY),
    OpSpec(np.maximum, "np.maximum(a, 0.1)", 1, shapes=UNARY),
    OpSpec(np.minimum, "np.minimum(a, b)", 2, shapes=BINARY),
    OpSpec(np.minimum, "np.minimum(a, 0.1)", 1, shapes=UNARY),
    # max(a, a) == a: a tie on purpose, smooth, so the rule must split it (1/2 + 1/2 = 1)
    OpSpec(np.maximum, "np.maximum(a, a)", 1, shapes=UNARY),
    OpSpec(np.minimum, "np.minimum(a, a)", 1, shapes=UNARY),
    OpSpec(np.where, "np.where(a, b, c)", 3, bools=(0,), shapes=(
        ((3,), (3,), (3,)), ((2, 3), (), (2, 3)), ((2, 3), (2, 3), ()),
        ((3, 1), (1, 4), ()), ((2, 3), (3,), (2, 1)), ((), (3,), (3,)))),
    OpSpec(np.where, "np.where(b > 0.0, b, c)", 3, bools=(0,), shapes=(  # condition from b
        ((), (3,), (3,)), ((), (2, 3), (3,)))),

    # --- reductions ---------------------------------------------------------------------------
    OpSpec(np.sum, "np.sum(a)", 1, shapes=UNARY + REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, 1)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=0)", 1, shapes=(((3,),),) + REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=-1)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=(0, 2))", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=(-1, 0))", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=1, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=-2, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=(0, 2), keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=(np.int64(0), 2))", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=np.int64(1), keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.sum, "np.sum(a, axis=np.int64(1))", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a)", 1, shapes=UNARY + REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, -1)", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, axis=(0, 2))", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, axis=(1, -1), keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, axis=0, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.mean, "np.mean(a, axis=np.int64(-1))", 1, shapes=REDUCE_IN),

    # --- linear algebra -----------------------------------------------------------------------
    OpSpec(np.dot, "np.dot(a, b)", 2, shapes=(
        ((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
        ((2, 3), (3, 4)), ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)),
        ((2, 3, 4), (5, 4, 2)))),

    # --- shape --------------------------------------------------------------------------------
    OpSpec(np.transpose, "np.transpose(a)", 1, shapes=(((3,),), ((2, 3),), ((2, 3, 4),))),
    OpSpec(np.transpose, "np.transpose(a, (1, 0))", 1, shapes=(((2, 3),),)),
    OpSpec(np.transpose, "np.transpose(a, (2, 0, 1))", 1, shapes=REDUCE_IN),
    OpSpec(np.transpose, "np.transpose(a, axes=(1, 2, 0))", 1, shapes=REDUCE_IN),
    OpSpec(np.transpose, "np.transpose(a, axes=(0, 2, 1))", 1, shapes=REDUCE_IN),
    OpSpec(np.transpose, "np.transpose(a, None)", 1, shapes=(((2, 3),),)),
    OpSpec(np.transpose, "np.transpose(a, (-1, 0, 1))", 1, shapes=REDUCE_IN),
    OpSpec(np.transpose, "np.transpose(a, axes=(1, 0, -1))", 1, shapes=REDUCE_IN),
    OpSpec(np.ndarray.T, "a.T", 1, shapes=(((3,),), ((2, 3),), ((2, 3, 4),))),
    OpSpec(np.reshape, "np.reshape(a, (3, 2))", 1, shapes=(((2, 3),), ((6,),))),
    OpSpec(np.copy, "np.copy(a)", 1, shapes=(((3,),), ((2, 3),))),
    OpSpec(np.copy, "a.copy() * 2.0", 1, shapes=(((2, 3),),)),
    OpSpec(np.ravel, "np.ravel(a)", 1, shapes=(((2, 3),),)),
    OpSpec(np.ravel, "a.ravel(order='F')", 1, shapes=(((2, 3),),)),
    OpSpec(np.ravel, "a.flatten()", 1, shapes=(((2, 3),),)),
    OpSpec(np.squeeze, "np.squeeze(a)", 1, shapes=(((2, 1, 3),),)),
    OpSpec(np.squeeze, "a.squeeze(axis=1)", 1, shapes=(((2, 1, 3),),)),
    # --- indexing (x[i] is operator.getitem) and assembly ------------------------------------
    OpSpec(operator.getitem, "a[1]", 1, shapes=(((4,),), ((3, 2),))),
    OpSpec(operator.getitem, "a[-1] * a[0]", 1, shapes=(((4,),),)),
    OpSpec(operator.getitem, "a[1:-1]", 1, shapes=(((5,),), ((4, 3),))),
    OpSpec(operator.getitem, "a[::2]", 1, shapes=(((5,),),)),
    OpSpec(operator.getitem, "a[:, 0]", 1, shapes=(((3, 2),),)),
    OpSpec(operator.getitem, "a[1, 1:]", 1, shapes=(((3, 4),),)),
    OpSpec(operator.getitem, "a[None]", 1, shapes=(((3,),),)),
    OpSpec(operator.getitem, "a[np.array([0, 2, 2])]", 1, shapes=(((4,),),)),  # repeats sum
    OpSpec(operator.getitem, "a[a > 0.0]", 1, shapes=(((6,),),)),
    OpSpec(operator.getitem, "a[..., 1]", 1, shapes=(((2, 3, 4),),)),
    OpSpec(operator.setitem, "c = a * 1.0; c[1:3] = b; c", 2, shapes=(((4,), (2,)),)),
    OpSpec(operator.setitem, "c = a * 1.0; c[0] = b; c * a", 2, shapes=(((3,), ()),)),
    OpSpec(operator.setitem, "c = a * 1.0; c[1] = b; c", 2, shapes=(((3, 2), (2,)),)),
    OpSpec(operator.setitem, "c = a * 1.0; c[:, 1] = b; c", 2, shapes=(((3, 2), ()),)),  # bcast
    OpSpec(operator.setitem, "c = a * 1.0; c[a > 0.0] = b; c", 2, shapes=(((5,), ()),)),
    OpSpec(operator.setitem, "c = a * 1.0; c[1:] += b * c[:-1]; c", 2, shapes=(((4,), (3,)),)),
    OpSpec(operator.setitem, "a[0] = b; a * 2.0", 2, shapes=(((3,), ()),)),  # into an argument
    # np.add.at: a scatter-add, an index repeated adds each time (FEM assembly)
    OpSpec(runtime.added_at, "c = a * 1.0; np.add.at(c, np.array([0, 2, 2]), b); c", 2,
           shapes=(((4,), (3,)), ((4,), ()), ((4, 2), (3, 2)), ((4, 2), (2,)))),
    OpSpec(runtime.added_at, "c = a * 1.0; np.add.at(c, (np.array([[0, 1], [1, 2]]), "
           "np.array([[0, 1], [1, 2]])), b); c * a", 2, shapes=(((3, 3), (2, 2)),)),
    OpSpec(runtime.added_at, "np.add.at(a, [1, 1], b * b); a * 2.0", 2,
           shapes=(((3,), ()),)),  # into an argument
    OpSpec(runtime.subtracted_at, "c = a * 1.0; np.subtract.at(c, [1, 0, 1], b); c * c", 2,
           shapes=(((3,), (3,)), ((3, 2), (2,)))),
    # the other writes in place: np.multiply.at (an index repeated multiplies each time), np.put
    # and np.put_along_axis (an index repeated: the last write is kept)
    OpSpec(runtime.multiplied_at, "c = a * 1.0; np.multiply.at(c, [0, 2, 2, 1], b); c", 2,
           shapes=(((3,), (4,)), ((3,), ()), ((3, 2), (4, 2)))),
    OpSpec(runtime.multiplied_at, "c = a * 1.0; np.multiply.at(c, [1, 1, 1], b * "
           "np.array([1.0, 0.0, 1.0])); c * a", 2, shapes=(((3,), (3,)),)),  # a factor is 0
    OpSpec(runtime.multiplied_at, "c = a * 1.0; np.multiply.at(c, [2, 0, 2, 2, 0], b * "
           "np.array([0.0, 1.0, 1.0, 0.0, 1.0])); c * a", 2, shapes=(((3,), (5,)),)),  # two 0s
    OpSpec(runtime.put, "c = a * 1.0; np.put(c, [0, -1, 2, 0], b); c", 2,
           shapes=(((5,), (3,)), ((2, 3), (4,)), ((5,), ()))),
    OpSpec(runtime.put, "c = a * 1.0; np.put(c, [7, 1], b, mode='wrap'); c * a", 2,
           shapes=(((5,), (2,)),)),
    OpSpec(runtime.put_along, "c = a * 1.0; np.put_along_axis(c, np.array([[0, 2], [1, 1]]), "
           "b, axis=1); c", 2, shapes=(((2, 3), (2, 2)), ((2, 3), ()))),
    OpSpec(runtime.put_along, "c = a * 1.0; np.put_along_axis(c, np.array([4, 0]), b, None); "
           "c * a", 2, shapes=(((2, 3), (2,)),)),
    OpSpec(np.concatenate, "np.concatenate((a, b))", 2, shapes=(((3,), (2,)),)),
    OpSpec(runtime.appended, "xs = [v * b for v in a]; sum(xs)", 2, shapes=(((3,), ()),)),
    OpSpec(runtime.appended, "xs = [a]; xs.append(b * a); np.stack(xs) * 1.0", 2,
           shapes=(((3,), (3,)),)),
    OpSpec(runtime.appended, "sum(v * b for v in a if np.sum(v) > -9.0)", 2,
           shapes=(((2, 3), (3,)),)),
    OpSpec(sum, "sum((a, b, a))", 2, shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
    OpSpec(sum, "sum([a * 2.0, b], 1.0)", 2, shapes=(((3,), (3,)),)),
    OpSpec(sum, "sum(a, b)", 2, shapes=(((4,), ()), ((4, 2), (2,)))),
    OpSpec(sum, "sum((a, b), start=b)", 2, shapes=(((), ()),)),
    OpSpec(np.concatenate, "np.concatenate([a, b, a], axis=1)", 2,
           shapes=(((2, 3), (2, 1)),)),
    OpSpec(np.concatenate, "np.concatenate((a, b), axis=None)", 2, shapes=(((2, 2), (3,)),)),
    OpSpec(np.concatenate, "np.concatenate((a, b * 2.0), 0)", 2, shapes=(((1, 3), (2, 3)),)),
    OpSpec(np.stack, "np.stack((a, b))", 2, shapes=(((3,), (3,)),)),
    OpSpec(np.stack, "np.stack(a * 2.0, axis=1)", 1, shapes=(((2, 3),),)),  # rows of an array
    OpSpec(np.concatenate, "np.concatenate(a * 2.0, axis=1)", 1, shapes=(((2, 3, 2),),)),
    OpSpec(np.stack, "np.stack([a, b, a], axis=-1)", 2, shapes=(((2, 3), (2, 3)),)),
    OpSpec(np.reshape, "np.reshape(a, (-1,))", 1, shapes=REDUCE_IN),
    OpSpec(np.reshape, "np.reshape(a, 6)", 1, shapes=(((2, 3),),)),
    OpSpec(np.reshape, "np.reshape(a, (4, 6), order='F')", 1, shapes=REDUCE_IN),
    OpSpec(np.reshape, "np.reshape(a, shape=(6, 4))", 1, shapes=REDUCE_IN, numpy="2.1.0"),

    # --- math (Python floats only) ------------------------------------------------------------
    unary_math(math.sin),
    unary_math(math.cos),
    unary_math(math.tan, domain=(-1.2, 1.2)),
    unary_math(math.atan),
    OpSpec(math.atan2, "math.atan2(a, b)", 2, (AWAY, (-2.0, 2.0)), SCALAR2, signed=(0,)),
    OpSpec(math.hypot, "math.hypot(a, b)", 2, AWAY, SCALAR2, signed=(0, 1)),
    unary_math(math.sinh),
    unary_math(math.cosh),
    unary_math(math.tanh),
    unary_math(math.exp),
    unary_math(math.expm1),
    unary_math(math.log, domain=POS),
    OpSpec(math.log, "math.log(a, b)", 2, (POS, (1.5, 3.0)), SCALAR2),
    OpSpec(math.log, "math.log(a, 2.0)", 1, POS, SCALAR1),
    unary_math(math.log1p, domain=(-0.5, 2.0)),
    unary_math(math.sqrt, domain=POS),
    unary_math(math.fabs, domain=AWAY, signed=(0,)),
    unary_math(math.erf),
    OpSpec(math.pow, "math.pow(a, b)", 2, (POS, (-2.0, 2.0)), SCALAR2),
    OpSpec(math.pow, "math.pow(a, 3.0)", 1, shapes=SCALAR1),

    # --- builtins -----------------------------------------------------------------------------
    OpSpec(builtins.abs, "abs(a)", 1, AWAY, UNARY, signed=(0,)),
    OpSpec(builtins.float, "float(a)", 1, shapes=SCALAR1),
    OpSpec(builtins.float, "float(np.sum(a))", 1, shapes=(((3,),),)),
    OpSpec(builtins.pow, "pow(a, b)", 2, (POS, (-2.0, 2.0)), BINARY),
    OpSpec(builtins.pow, "pow(a, 2)", 1, shapes=UNARY),
]) + discovered()


# --- building test functions ------------------------------------------------------------------

def _shape_str(shapes) -> str:
    return "x".join(str(s) if s else "()" for s in shapes)


def _cases():
    seen = set()
    for spec in SPECS:
        for shapes in spec.shapes:
            case_id = f"{spec.expr}-{_shape_str(shapes)}"
            assert case_id not in seen, f"duplicate case {case_id}"
            seen.add(case_id)
            bug = spec.xfail
            if isinstance(bug, dict):
                bug = bug.get(shapes)
            marks = []
            if bug:
                raises, reason = bug
                marks = [pytest.mark.xfail(raises=raises, reason=reason, strict=True)]
            yield pytest.param(spec, shapes, id=case_id, marks=marks)


CASES = list(_cases())


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("spec, shapes", CASES)
def test_rule_vjp(spec: OpSpec, shapes, optimize):
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = build(spec.expr, args, seed + 1)
    wrt = spec.diff_positions
    grads = check_grad(f, *args, wrt=wrt, rtol=spec.rtol, atol=spec.atol, optimize=optimize)
    # gradients mirror arguments: float -> float, float64 array -> float64 array of its shape
    for pos, g in zip(wrt, grads, strict=True):
        x = args[pos]
        if isinstance(x, np.ndarray):
            assert isinstance(g, np.ndarray), f"argument {pos}: {type(g).__name__}, expected array"
            assert g.shape == x.shape and g.dtype == x.dtype, (g.shape, g.dtype)
        else:
            assert type(g) is float, f"argument {pos}: gradient is {type(g).__name__}, not float"


NUMBER_CASES = [c for c in CASES if all(shape == () for shape in c.values[1]) and not c.marks]


@pytest.mark.parametrize("spec, shapes", NUMBER_CASES)
def test_rule_vjp_on_numpy_scalars(spec: OpSpec, shapes):
    """The numbers of a case as NumPy scalars (``x[i]`` of a float64 array is one): the same
    gradient, each a ``np.float64`` like its argument."""
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = tuple(a if isinstance(a, bool) else np.float64(a) for a in make_args(spec, shapes, seed))
    f = build(spec.expr, args, seed + 1)
    wrt = spec.diff_positions
    grads = check_grad(f, *args, wrt=wrt, rtol=spec.rtol, atol=spec.atol)
    for pos, g in zip(wrt, grads, strict=True):
        assert type(g) is np.float64, f"argument {pos}: gradient is {type(g).__name__}"


# --- float32 ----------------------------------------------------------------------------------

FLOAT32_CASES = [
    pytest.param("np.exp(a)", ((3, 4),), id="unary-np.exp"),
    pytest.param("np.tanh(a) + np.sin(a)", ((5,),), id="unary-np.tanh+np.sin"),
    pytest.param("a * b", ((3, 1), (1, 4)), id="binary-mult-(3,1)x(1,4)"),
    pytest.param("np.maximum(a, b)", ((2, 3), (3,)), id="binary-np.maximum-(2,3)x(3,)"),
    pytest.param("a / b + a", ((2, 3), (3,)), id="binary-div-(2,3)x(3,)"),
    pytest.param("np.sum(a, axis=1)", ((2, 3, 4),), id="reduction-np.sum-axis1"),
    pytest.param("np.mean(a, axis=(0, 2), keepdims=True)", ((2, 3, 4),),
                 id="reduction-np.mean-keepdims"),
    pytest.param("np.dot(a, b)", ((2, 3), (3, 4)), id="linalg-np.dot-2d"),
    pytest.param("a @ b", ((5, 2, 3), (3,)), id="linalg-matmul-batched"),
    pytest.param("np.transpose(a, (2, 0, 1))", ((2, 3, 4),), id="shape-np.transpose-axes"),
    pytest.param("np.reshape(a.T, (4, 6))", ((2, 3, 4),), id="shape-np.reshape-T"),
] + [pytest.param(expr, shapes, id=f"{expr}-{shapes}") for expr, shapes in discovered("FLOAT32")]


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("expr, shapes", FLOAT32_CASES)
def test_float32(expr, shapes, optimize):
    seed = case_seed(expr)
    spec = OpSpec(None, expr, len(shapes), domain=AWAY)  # positive: safe for a / b
    args32 = make_args(spec, shapes, seed, dtype=np.float32)
    args64 = tuple(x.astype(np.float64) for x in args32)
    wrt = tuple(range(len(shapes)))
    f32 = build(expr, args32, seed + 1, u_dtype=np.float32)
    f64 = build(expr, args64, seed + 1, u_dtype=np.float64)
    g32 = grad(f32, wrt=wrt, optimize=optimize)(*args32)
    g64 = grad(f64, wrt=wrt, optimize=optimize)(*args64)
    for x, a, b in zip(args32, g32, g64, strict=True):
        assert isinstance(a, np.ndarray)
        assert a.dtype == np.float32, f"float32 argument got a {a.dtype} gradient"
        assert a.shape == x.shape
        assert b.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# --- every rule has a spec --------------------------------------------------------------------

def same_key(a, b) -> bool:
    """Rule keys compared by identity (np.abs is not np.fabs), but for the methods of a ufunc or
    of a scipy.stats distribution, made anew at each access (``np.add.reduce``,
    ``stats.norm.cdf``): those by equality (the same object's method)."""
    owner = getattr(a, "__self__", None)
    return a is b or ((isinstance(owner, np.ufunc) or type(owner).__module__.startswith(
        "scipy.stats")) and a == b)


def keys_without_spec(adjoints, specs) -> list:
    """Keys of ``adjoints`` that no spec names, compared by identity (``same_key``)."""
    return [key for key in adjoints if not any(same_key(s.key, key) for s in specs)]


def test_every_rule_has_a_spec():
    missing = keys_without_spec(ADJOINTS, SPECS)
    assert not missing, "rules without a spec entry: " + ", ".join(key_name(k) for k in missing)


def test_every_built_in_template_parses_and_keeps_the_contract():
    # (the built-in templates are parsed when first used, the package's import stays quick: a
    # broken one, or one of a rule no spec reaches, would otherwise go unnoticed until used)
    from transpiler.rules import registry

    tables = (registry.ADJOINTS, registry.TANGENTS, registry.COMPLEX_ADJOINTS,
              registry.COMPLEX_TANGENTS, registry.SPARSE_ADJOINTS, registry.SPARSE_TANGENTS)
    for table in tables:
        for key, rule in table.items():
            assert rule.body is not None and rule.params[0] == "ans", key_name(key)


def test_a_template_first_parsed_while_a_function_is_rebound_means_what_it_meant(tmp_path):
    # (in a fresh interpreter, where np.cos's template is not parsed yet: parsed while np.sin is
    # np.cos, as a test's mock makes it, its np.sin must still be the sine)
    import pathlib
    import subprocess
    import sys

    program = tmp_path / "mocked.py"
    program.write_text(
        "import numpy as np\n"
        "from transpiler import grad\n\n\n"
        "def f(x):\n"
        "    return np.sin(x)\n\n\n"
        "sine = np.sin\n"
        "np.sin = np.cos\n"
        "try:\n"
        "    print(repr(grad(f)(0.7)))\n"
        "finally:\n"
        "    np.sin = sine\n")
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                         check=True, cwd=str(pathlib.Path(__file__).parent.parent)).stdout
    assert float(out) == pytest.approx(-np.sin(0.7), rel=1e-15)  # (the derivative of cos)


def test_every_spec_names_a_rule():
    stale = [s.expr for s in SPECS if not any(same_key(s.key, k) for k in ADJOINTS)]
    assert not stale, f"specs for keys without a rule: {stale}"


_IN_PLACE = {"np.add.at": runtime.added_at, "np.subtract.at": runtime.subtracted_at,
             "np.multiply.at": runtime.multiplied_at, "np.put": runtime.put,
             "np.put_along_axis": runtime.put_along}


def _keys_used(expr: str) -> list:
    """The rule keys an expression template exercises (operators, called functions, x.T)."""
    keys = []
    env = {**SPEC_GLOBALS, **vars(builtins)}
    for node in ast.walk(ast.parse(expr.replace("; ", "\n"))):
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            keys.append(getattr(gast, type(node.op).__name__))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id not in env \
                and node.func.attr in METHODS:
            keys.append(METHODS[node.func.attr])  # a.sum() shares np.sum's rule
        elif isinstance(node, ast.comprehension) and isinstance(node.iter, ast.Name):
            keys.append(runtime.sequence)  # for v in xs walks rt.sequence(xs)
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp)) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append" and isinstance(node.func.value, ast.Name)
                and node.func.value.id not in env):
            keys.append(runtime.appended)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "extend":
            keys.append(runtime.extended)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "pop":
            keys.append(runtime.popped)  # v = xs.pop(i) is v = xs[i]; xs = rt.popped(xs, i)
        elif isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
            keys.append(list)  # first, *rest = xs makes rest = list(xs[1:])
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in _IN_PLACE:
            keys.append(_IN_PLACE[ast.unparse(node.func)])  # a = rt.added_at(a, i, b): desugar
        elif isinstance(node, ast.Call):
            keys.append(eval(ast.unparse(node.func), env))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id not in env and node.attr not in METHODS \
                and hasattr(np.ndarray, node.attr):  # (x.T, z.real)
            keys.append(getattr(np.ndarray, node.attr))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("np.r_", "np.c_"):
            keys.append(runtime.index_join)  # np.r_[a, b] joins its items (passes/resolve.py)
        elif isinstance(node, ast.Subscript):
            keys.append(operator.setitem if isinstance(node.ctx, ast.Store) else operator.getitem)
    return keys


@pytest.mark.parametrize("spec", SPECS, ids=[s.expr for s in SPECS])
def test_spec_expression_uses_its_key(spec):
    """Guard against typos in the table: the template really calls the key it claims to test."""
    assert any(same_key(k, spec.key) for k in _keys_used(spec.expr)), \
        f"{spec.expr!r} does not exercise {key_name(spec.key)}"


def _rule_without_spec(x):
    return x * x


@pytest.fixture
def registered_without_spec():
    """Register (then remove) a rule for a function that has no spec entry."""
    assert _rule_without_spec not in ADJOINTS

    @adjoint(_rule_without_spec)
    def adj_rule_without_spec(ans, x):
        d[x] = d[ans] * 2.0 * x

    try:
        yield _rule_without_spec
    finally:
        del ADJOINTS[_rule_without_spec]


def test_meta_test_detects_a_rule_without_spec(registered_without_spec):
    assert keys_without_spec(ADJOINTS, SPECS) == [registered_without_spec]
    with pytest.raises(AssertionError, match="rules without a spec entry"):
        test_every_rule_has_a_spec()
    # and identity, not equality or name, decides: a spec for it makes the meta-test pass
    assert keys_without_spec(ADJOINTS, SPECS + [OpSpec(registered_without_spec, "", 1)]) == []


def test_key_identity_distinguishes_aliases():
    """np.abs and np.fabs, math.pow and pow are different keys, each needing its own spec."""
    specs = [s for s in SPECS if s.key is not np.fabs]
    assert keys_without_spec(ADJOINTS, specs) == [np.fabs]


# --- the checking machinery can fail ----------------------------------------------------------

def test_numeric_grad_matches_known_derivative():
    f = make("def f(a, b):\n    return np.sum(np.sin(a) * b)\n")
    a, b = rand((4,), seed=1), rand((4,), seed=2)
    np.testing.assert_allclose(numeric_grad(f, (a, b), 0), np.cos(a) * b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(numeric_grad(f, (a, b), 1), np.sin(a), rtol=1e-6, atol=1e-8)
    wrong = np.cos(a) * b * (1 + 1e-3)
    assert not np.allclose(numeric_grad(f, (a, b), 0), wrong, rtol=1e-5, atol=1e-6)


def _wrongly_differentiated(x):
    return x * x * x


@pytest.fixture
def wrong_rule():
    """A rule whose derivative is off by a constant factor, registered only for this test."""

    @adjoint(_wrongly_differentiated)
    def adj_wrong(ans, x):
        d[x] = d[ans] * 3.0 * x * x * 1.001  # 0.1 % too large

    try:
        yield _wrongly_differentiated
    finally:
        del ADJOINTS[_wrongly_differentiated]


@pytest.mark.parametrize("arg", [0.7, np.array([0.5, -1.0, 1.5])], ids=["float", "array"])
def test_check_grad_rejects_a_wrong_rule(wrong_rule, arg):
    f = make("def f(a):\n    return np.sum(cube(a))\n", cube=wrong_rule)
    with pytest.raises(AssertionError, match="gradient mismatch"):
        check_grad(f, arg)
    with pytest.raises(AssertionError, match="gradient mismatch"):
        check_grad(f, arg, optimize=False)
