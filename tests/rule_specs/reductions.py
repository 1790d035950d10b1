"""Specs of the reductions rules: reductions, cumulative and statistical functions."""

from __future__ import annotations

import numpy as np

from tests.rule_specs.common import AWAY, POS, REDUCE_IN, UNARY, OpSpec, newer

# functions of a newer Python or NumPy than the oldest supported (None where absent)
np_trapezoid = newer(np, "trapezoid")
linalg_matrix_norm = newer(np.linalg, "matrix_norm")
linalg_vector_norm = newer(np.linalg, "vector_norm")

ALL = UNARY + REDUCE_IN  # a Python float, then arrays of 1-3 dims
V4, M34, M43 = (((4,),),), (((3, 4),),), (((4, 3),),)
ZERO = (0.0, 0.0)  # an argument drawn as exact zeros
TIE = (1.5, 1.5)  # an argument whose elements are all equal
# NaN entries, at most one in each row and column of a (3, 4) array
NAN34 = "np.array([[0.0, np.nan, 0.0, 0.0], [0.0, 0.0, 0.0, np.nan], [np.nan, 0.0, 0.0, 0.0]])"
XP = "np.array([-1.5, -0.5, 0.2, 1.0, 1.5])"  # sample points of np.interp
AXIS_FORMS = ("axis=1", "0", "axis=-1", "axis=(0, 2)", "axis=(-1, 0)", "axis=1, keepdims=True",
              "axis=(0, 2), keepdims=True", "keepdims=True", "axis=None")


def reduction(key, name, domain=(-2.0, 2.0), extra="", float_ok=True, **kw) -> list[OpSpec]:
    """``name(a)`` on a float (when NumPy and smoothness allow) and arrays of 1-3 dims, then
    every axis form (int, negative, tuple, None, keepdims) on a (2, 3, 4) array."""
    specs = [OpSpec(key, f"{name}(a{extra})", 1, domain, ALL if float_ok else ALL[1:], **kw)]
    return specs + [OpSpec(key, f"{name}(a, {form}{extra})", 1, domain, REDUCE_IN, **kw)
                    for form in AXIS_FORMS]


SPECS: list[OpSpec] = [
    # --- products ------------------------------------------------------------------------------
    *reduction(np.prod, "np.prod"),
    # exact zeros in the input: one per lane, then two (every gradient but b's is 0)
    OpSpec(np.prod, "np.prod(np.concatenate((a, b)))", 2, ((-2.0, 2.0), ZERO),
           (((3,), (1,)), ((3,), (2,)))),
    OpSpec(np.prod, "np.prod(np.concatenate((a, b), axis=1), axis=1)", 2, ((-2.0, 2.0), ZERO),
           (((2, 3), (2, 1)), ((2, 3), (2, 2)))),
    OpSpec(np.prod, "np.prod(np.concatenate((a, b), axis=1), axis=(0, 1), keepdims=True)", 2,
           ((-2.0, 2.0), ZERO), (((2, 3), (2, 1)),)),
    OpSpec(np.prod, "a.prod(axis=0)", 1, shapes=M34),
    OpSpec(np.prod, "np.prod((a, b, a), axis=0)", 2, shapes=(((), ()), ((3,), (3,)))),
    OpSpec(np.nanprod, f"np.nanprod(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nanprod, f"np.nanprod(a + {NAN34}, axis=0)", 1, shapes=M34),
    OpSpec(np.nanprod, f"np.nanprod(a + {NAN34}, axis=-1, keepdims=True)", 1, shapes=M34),
    OpSpec(np.nanprod, "np.nanprod(a, axis=(0, 2))", 1, shapes=REDUCE_IN),
    OpSpec(np.nanprod, "np.nanprod(np.concatenate((a, b)))", 2, ((-2.0, 2.0), ZERO),
           (((3,), (1,)),)),

    # --- extrema -------------------------------------------------------------------------------
    *reduction(np.max, "np.max"),
    *reduction(np.min, "np.min"),
    OpSpec(np.amax, "np.amax(a)", 1, shapes=ALL),
    OpSpec(np.amax, "np.amax(a, axis=(0, -1), keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.amin, "np.amin(a)", 1, shapes=ALL),
    OpSpec(np.amin, "np.amin(a, -2)", 1, shapes=REDUCE_IN),
    OpSpec(np.max, "a.max(axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.max, "np.max([a, b])", 2, shapes=(((), ()), ((2,), (2,)))),
    OpSpec(np.median, "np.median([a, b, 1.0])", 2, shapes=(((), ()),)),
    OpSpec(np.max, "a.max()", 1, shapes=M34),
    OpSpec(np.max, "a.max(0, keepdims=True)", 1, shapes=M34),
    OpSpec(np.min, "a.min(axis=-1)", 1, shapes=M34),
    OpSpec(np.min, "a.min()", 1, shapes=REDUCE_IN),
    # exact two-way ties between different elements: central differences see 1/2 for each
    OpSpec(np.max, "np.max(np.concatenate((a, b)))", 2, (TIE, (-1.0, 1.0)), (((2,), (1,)),)),
    OpSpec(np.min, "np.min(np.concatenate((b, a)), axis=0)", 2, (TIE, (2.0, 3.0)),
           (((2, 3), (1, 3)),)),
    OpSpec(np.nanmin, "np.nanmin(np.concatenate((a, b)))", 2, (TIE, (2.0, 3.0)),
           (((2,), (2,)),)),
    OpSpec(np.ptp, "np.ptp(np.concatenate((a, b)), axis=0)", 2, (TIE, (-1.0, 1.0)),
           (((2, 2), (1, 2)),)),
    OpSpec(np.linalg.norm, "np.linalg.norm(np.concatenate((a, b)), -np.inf)", 2,
           (TIE, (2.0, 3.0)), (((2,), (1,)),)),
    # ties on purpose (a smooth function of a): each copy gets half of the gradient
    OpSpec(np.max, "np.max(np.stack((a, a)), axis=0)", 1, shapes=(((3,),), ((2, 3),))),
    OpSpec(np.min, "np.min(np.stack((a, a, a)))", 1, shapes=(((3,),),)),
    OpSpec(np.amax, "np.amax(np.stack((a, a)), axis=(0, 2))", 1, shapes=(((2, 3),),)),
    OpSpec(np.nanmax, "np.nanmax(np.stack((a, a)), axis=0)", 1, shapes=(((2, 3),),)),
    OpSpec(np.ptp, "np.ptp(np.stack((a, a)), axis=0)", 1, shapes=(((2, 3),),)),
    *reduction(np.nanmax, "np.nanmax"),
    *reduction(np.nanmin, "np.nanmin"),
    OpSpec(np.nanmax, f"np.nanmax(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nanmax, f"np.nanmax(a + {NAN34}, axis=0)", 1, shapes=M34),
    OpSpec(np.nanmin, f"np.nanmin(a + {NAN34}, axis=1, keepdims=True)", 1, shapes=M34),
    *reduction(np.ptp, "np.ptp"),

    # --- NaN-ignoring sums and moments ---------------------------------------------------------
    *reduction(np.nansum, "np.nansum"),
    OpSpec(np.nansum, f"np.nansum(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nansum, f"np.nansum(a + {NAN34}, axis=0, keepdims=True)", 1, shapes=M34),
    *reduction(np.nanmean, "np.nanmean"),
    OpSpec(np.nanmean, f"np.nanmean(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nanmean, f"np.nanmean(a + {NAN34}, axis=-1)", 1, shapes=M34),
    *reduction(np.var, "np.var"),
    *reduction(np.var, "np.var", extra=", ddof=1", float_ok=False),
    OpSpec(np.var, "a.var()", 1, shapes=M34),
    OpSpec(np.var, "a.var(axis=0, ddof=1)", 1, shapes=M34),
    *reduction(np.std, "np.std"),  # of one element (a float): constant 0, gradient 0
    # all entries equal (a kink): gradient 0, as np.linalg.norm's at 0
    OpSpec(np.std, "np.std(np.ones(3) * a)", 1, shapes=(((),), ((1,),))),
    OpSpec(np.std, "np.std(a, axis=1)", 1, shapes=(((3, 1),),)),
    OpSpec(np.std, "np.std(np.concatenate((a, a * 0.0 + 1.0), axis=1), axis=1)", 1,
           shapes=(((2, 3),),)),
    *reduction(np.std, "np.std", extra=", ddof=1", float_ok=False),
    OpSpec(np.std, "np.std(a, ddof=2)", 1, shapes=M34),
    OpSpec(np.std, "a.std()", 1, shapes=M34),
    OpSpec(np.std, "a.std(axis=(0, 2), ddof=1, keepdims=True)", 1, shapes=REDUCE_IN),
    *reduction(np.nanvar, "np.nanvar"),
    OpSpec(np.nanvar, f"np.nanvar(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nanvar, f"np.nanvar(a + {NAN34}, axis=0, ddof=1)", 1, shapes=M34),
    OpSpec(np.nanvar, f"np.nanvar(a + {NAN34}, axis=1, keepdims=True)", 1, shapes=M34),
    *reduction(np.nanstd, "np.nanstd"),
    OpSpec(np.nanstd, f"np.nanstd(np.ones((3, 4)) * a + {NAN34})", 1, shapes=(((),),)),
    OpSpec(np.nanstd, f"np.nanstd(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nanstd, f"np.nanstd(a + {NAN34}, axis=0, ddof=1)", 1, shapes=M34),
    OpSpec(np.nanstd, f"np.nanstd(a + {NAN34}, axis=-1, keepdims=True)", 1, shapes=M34),

    # --- weighted average ---------------------------------------------------------------------
    *reduction(np.average, "np.average"),
    OpSpec(np.average, "np.average(a, weights=b)", 2, ((-2.0, 2.0), POS),
           (((3,), (3,)), ((2, 3), (2, 3)))),
    OpSpec(np.average, "np.average(a, 1, b)", 2, ((-2.0, 2.0), POS), (((2, 3, 4), (3,)),)),
    OpSpec(np.average, "np.average(a, axis=(2, 0), weights=b)", 2, ((-2.0, 2.0), POS),
           (((2, 3, 4), (4, 2)),), numpy="2.0.0"),
    OpSpec(np.average, "np.average(a, axis=-1, weights=b, keepdims=True)", 2,
           ((-2.0, 2.0), POS), (((3, 4), (4,)),)),
    OpSpec(np.average, "np.average(a, axis=0, weights=b * b + 0.5)", 2, shapes=(((3, 4), (3, 4)),)),
    OpSpec(np.average, "np.average(a, axis=0, weights=np.array([1.0, 2.0, 0.5]))", 1,
           shapes=M34),

    # --- cumulative ---------------------------------------------------------------------------
    OpSpec(np.cumsum, "np.cumsum(a)", 1, shapes=ALL),
    OpSpec(np.cumsum, "np.cumsum(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.cumsum, "np.cumsum(a, -1)", 1, shapes=REDUCE_IN),
    OpSpec(np.cumsum, "np.cumsum(a, axis=0)", 1, shapes=M34),
    OpSpec(np.cumsum, "a.cumsum(axis=1)", 1, shapes=M34),
    OpSpec(np.cumsum, "a.cumsum()", 1, shapes=M34),
    # grouped sums: bincount's weights (assembly by bins) and the ufunc methods that sum
    OpSpec(np.bincount, "np.bincount(np.array([0, 2, 2, 1, 4, 2]), a)", 1, shapes=(((6,),),)),
    OpSpec(np.bincount, "np.bincount(np.array([3, 0, 3]), weights=a * b, minlength=6)", 2,
           shapes=(((3,), (3,)), ((3,), ()))),
    # np.histogram's weights (constant edges: the samples' gradient is zero between them)
    OpSpec(np.histogram, "np.histogram(np.array([-1.0, 0.1, 0.2, 1.5, -0.7, 3.0]), "
           "bins=[-2.0, -0.5, 0.3, 2.0], weights=a)[0]", 1, shapes=(((6,),),)),
    OpSpec(np.histogram, "np.histogram(np.array([-1.0, 0.1, 0.2, 1.5, -0.7, 3.0]), bins=3, "
           "range=(-2.0, 2.0), weights=a * b, density=True)[0]", 2,
           shapes=(((6,), ()), ((6,), (6,)))),
    OpSpec(np.histogram, "h, e = np.histogram(np.array([-1.0, 0.1, 0.2, 1.5, -0.7]), "
           "bins=np.array([-2.0, -0.5, 0.3, 2.0]) + a, weights=b, density=True); "
           "h + np.sum(e ** 2)", 2, domain=((-0.05, 0.05), (0.5, 2.0)),
           shapes=(((4,), (5,)),)),
    OpSpec(np.add.reduce, "np.add.reduce(a)", 1, shapes=((((4,),),) + REDUCE_IN)),
    OpSpec(np.add.reduce, "np.add.reduce(a, axis=1, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.add.reduce, "np.add.reduce(a, axis=None, initial=b)", 2, shapes=(
        ((2, 3), ()),)),
    OpSpec(np.add.accumulate, "np.add.accumulate(a)", 1, shapes=((((4,),),) + REDUCE_IN)),
    OpSpec(np.add.accumulate, "np.add.accumulate(a, axis=-1)", 1, shapes=REDUCE_IN),
    OpSpec(np.add.reduceat, "np.add.reduceat(a, [0, 2, 2, 5, 1])", 1, shapes=(((6,),),)),
    OpSpec(np.add.reduceat, "np.add.reduceat(a, np.array([1, 3]), axis=2)", 1,
           shapes=REDUCE_IN),
    OpSpec(np.multiply.outer, "np.multiply.outer(a, b)", 2, shapes=(
        ((3,), (2,)), ((2, 2), (3,)), ((), (3,)))),
    OpSpec(np.add.outer, "np.add.outer(a, b)", 2, shapes=(((3,), (2,)), ((2, 2), (3,)))),
    OpSpec(np.subtract.outer, "np.subtract.outer(a, b)", 2, shapes=(((3,), (2, 2)),)),
    OpSpec(np.cumprod, "np.cumprod(a)", 1, shapes=ALL),
    OpSpec(np.cumprod, "np.cumprod(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.cumprod, "np.cumprod(a, -1)", 1, shapes=REDUCE_IN),
    OpSpec(np.cumprod, "np.cumprod(a, axis=0)", 1, shapes=M34),
    OpSpec(np.cumprod, "a.cumprod(axis=1)", 1, shapes=M34),
    OpSpec(np.cumprod, "a.cumprod()", 1, shapes=M34),
    # exact zeros: one, two in a row, then one in each lane of an axis
    OpSpec(np.cumprod, "np.cumprod(np.concatenate((a, b, a)))", 2, ((-2.0, 2.0), ZERO),
           (((3,), (1,)), ((3,), (2,)))),
    OpSpec(np.cumprod, "np.cumprod(np.concatenate((a, b, a), axis=1), axis=1)", 2,
           ((-2.0, 2.0), ZERO), (((2, 3), (2, 1)),)),
    OpSpec(np.cumprod, "np.cumprod(np.concatenate((a, b, a), axis=0), axis=0)", 2,
           ((-2.0, 2.0), ZERO), (((2, 3), (1, 3)),)),
    OpSpec(np.nancumsum, "np.nancumsum(a)", 1, shapes=ALL),
    OpSpec(np.nancumsum, f"np.nancumsum(a + {NAN34}, axis=0)", 1, shapes=M34),
    OpSpec(np.nancumsum, f"np.nancumsum(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nancumsum, "np.nancumsum(a, -1)", 1, shapes=REDUCE_IN),
    OpSpec(np.nancumprod, "np.nancumprod(a)", 1, shapes=ALL),
    OpSpec(np.nancumprod, f"np.nancumprod(a + {NAN34}, axis=1)", 1, shapes=M34),
    OpSpec(np.nancumprod, f"np.nancumprod(a + {NAN34})", 1, shapes=M34),
    OpSpec(np.nancumprod, "np.nancumprod(np.concatenate((a, b, a)))", 2, ((-2.0, 2.0), ZERO),
           (((3,), (1,)),)),

    # --- differences --------------------------------------------------------------------------
    OpSpec(np.diff, "np.diff(a)", 1, shapes=(((4,),), ((3, 4),), ((2, 3, 4),))),
    OpSpec(np.diff, "np.diff(a, n=2)", 1, shapes=(((5,),), ((3, 4),))),
    OpSpec(np.diff, "np.diff(a, 3, 0)", 1, shapes=(((5, 2),),)),
    OpSpec(np.diff, "np.diff(a, axis=-2)", 1, shapes=REDUCE_IN),
    OpSpec(np.diff, "np.diff(a, n=0)", 1, shapes=V4),
    OpSpec(np.diff, "np.diff(a, prepend=1.0)", 1, shapes=(((4,),), ((3, 4),))),
    OpSpec(np.diff, "np.diff(a, prepend=b, append=c)", 3,
           shapes=(((4,), (), ()), ((3, 4), (3, 1), (3, 2)), ((3, 4), (), (3, 1)))),
    OpSpec(np.diff, "np.diff(a, n=2, axis=0, append=b)", 2, shapes=(((3, 4), (1, 4)),)),
    OpSpec(np.diff, "np.diff(a, prepend=[b, 2.0 * b])", 2, shapes=(((4,), ()),)),
    OpSpec(np.ediff1d, "np.ediff1d(a)", 1, shapes=(((4,),), ((2, 3),))),
    OpSpec(np.ediff1d, "np.ediff1d(a, to_end=b, to_begin=c)", 3,
           shapes=(((4,), (2,), ()), ((2, 3), (), (2, 2)))),
    OpSpec(np.ediff1d, "np.ediff1d(a, to_begin=1.5)", 1, shapes=V4),
    OpSpec(np.ediff1d, "np.ediff1d(a, b)", 2, shapes=(((4,), (2,)),)),
    OpSpec(np.gradient, "np.gradient(a)", 1, shapes=(((2,),), ((5,),))),
    OpSpec(np.gradient, "np.gradient(a, 0.5)", 1, shapes=(((5,),),)),
    OpSpec(np.gradient, "np.gradient(a, edge_order=2)", 1, shapes=(((3,),), ((5,),))),
    OpSpec(np.gradient, "np.gradient(a, 0.5, edge_order=2)", 1, shapes=(((6,),),)),
    OpSpec(np.gradient, "np.gradient(a, np.array([0.0, 0.5, 1.5, 2.0, 3.5]))", 1,
           shapes=(((5,),),)),
    OpSpec(np.gradient, "np.gradient(a, np.array([0.0, 0.5, 1.5, 2.0, 3.5]), edge_order=2)",
           1, shapes=(((5,),),)),
    OpSpec(np.gradient, "p, q = np.gradient(a); p + 2.0 * q", 1, shapes=(((3, 4),),)),
    OpSpec(np.gradient, "np.gradient(a, 0.5, 2.0)[1]", 1, shapes=(((3, 4),),)),
    OpSpec(np.gradient, "np.gradient(a, axis=1)", 1, shapes=(((3, 4),),)),
    OpSpec(np.gradient, "np.gradient(a, 2.0, axis=-1, edge_order=2)", 1, shapes=(((2, 4),),)),
    OpSpec(np.gradient, "p, q = np.gradient(a, 1.5, np.array([0.0, 1.0, 1.5]), "
           "axis=(2, 0), edge_order=2); p * q", 1, shapes=(((3, 2, 4),),)),

    # --- norms --------------------------------------------------------------------------------
    OpSpec(np.linalg.norm, "np.linalg.norm(a)", 1, shapes=ALL),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, axis=-1, keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, keepdims=True)", 1, shapes=M34),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, None, (0, 2))", 1, shapes=REDUCE_IN),
    *[OpSpec(np.linalg.norm, f"np.linalg.norm(a, {o})", 1, AWAY, (((5,),),), signed=(0,))
      for o in ("1", "2", "np.inf", "-np.inf", "3", "0.5", "-1.5", "0")],
    OpSpec(np.linalg.norm, "np.linalg.norm(a, np.inf, axis=0)", 1, AWAY, M34, signed=(0,)),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, ord=-np.inf, axis=-1, keepdims=True)", 1, AWAY,
           M34, signed=(0,)),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, 3, 1)", 1, AWAY, REDUCE_IN, signed=(0,)),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, ord=1, axis=-2)", 1, AWAY, M34, signed=(0,)),
    OpSpec(np.linalg.norm, "np.linalg.norm(np.concatenate((a, a)), np.inf)", 1, AWAY,
           (((2,),),), signed=(0,)),
    *[OpSpec(np.linalg.norm, f"np.linalg.norm(a, {o})", 1, AWAY, M34 + M43, signed=(0,))
      for o in ("'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf")],
    *[OpSpec(np.linalg.norm, f"np.linalg.norm(a, {o}, axis=(2, 0))", 1, AWAY, REDUCE_IN,
             signed=(0,)) for o in ("'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf")],
    OpSpec(np.linalg.norm, "np.linalg.norm(a, -np.inf, (-1, -2), True)", 1, AWAY, REDUCE_IN,
           signed=(0,)),
    OpSpec(np.linalg.norm, "np.linalg.norm(a, 'nuc', axis=(0, 1), keepdims=True)", 1,
           shapes=REDUCE_IN),
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a)", 1, shapes=ALL),
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a, axis=(0, 2), keepdims=True)", 1,
           shapes=REDUCE_IN),
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a, axis=-1)", 1, shapes=REDUCE_IN),
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a, keepdims=True)", 1, shapes=M34),
    *[OpSpec(linalg_vector_norm, f"np.linalg.vector_norm(a, ord={o})", 1, AWAY,
             (((5,),), ((3, 4),)), signed=(0,))
      for o in ("1", "np.inf", "-np.inf", "3", "-2", "0")],
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a, axis=(1, 2), ord=np.inf)", 1,
           AWAY, REDUCE_IN, signed=(0,)),
    OpSpec(linalg_vector_norm, "np.linalg.vector_norm(a, axis=0, ord=1, keepdims=True)",
           1, AWAY, M34, signed=(0,)),
    OpSpec(linalg_matrix_norm, "np.linalg.matrix_norm(a)", 1, shapes=M34 + REDUCE_IN),
    OpSpec(linalg_matrix_norm, "np.linalg.matrix_norm(a, keepdims=True)", 1,
           shapes=REDUCE_IN),
    *[OpSpec(linalg_matrix_norm, f"np.linalg.matrix_norm(a, ord={o})", 1, AWAY,
             M43 + REDUCE_IN, signed=(0,))
      for o in ("'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf")],
    OpSpec(linalg_matrix_norm, "np.linalg.matrix_norm(a, ord='nuc', keepdims=True)", 1,
           shapes=REDUCE_IN),

    # --- integration --------------------------------------------------------------------------
    OpSpec(np_trapezoid, "np.trapezoid(a)", 1, shapes=(((4,),), ((3, 4),), ((2, 3, 4),))),
    OpSpec(np_trapezoid, "np.trapezoid(a, axis=0)", 1, shapes=M34),
    OpSpec(np_trapezoid, "np.trapezoid(a, dx=0.5, axis=-2)", 1, shapes=REDUCE_IN),
    OpSpec(np_trapezoid, "np.trapezoid(a, dx=b)", 2, shapes=(((4,), ()), ((3, 4), ()))),
    OpSpec(np_trapezoid, "np.trapezoid(a, b)", 2, shapes=(((4,), (4,)), ((3, 4), (4,)),
                                                          ((3, 4), (3, 4)))),
    OpSpec(np_trapezoid, "np.trapezoid(a, b, axis=0)", 2, shapes=(((3, 4), (3,)),
                                                                  ((3, 4), (3, 4)))),
    OpSpec(np_trapezoid, "np.trapezoid(a, x=b, axis=1)", 2, shapes=(((2, 3, 4), (3,)),)),
    OpSpec(np_trapezoid, "np.trapezoid(a, np.array([0.0, 0.3, 1.0, 1.2]), 5.0)", 1,
           shapes=M34),

    # --- order statistics ---------------------------------------------------------------------
    OpSpec(np.median, "np.median(a)", 1, shapes=ALL + (((4,),), ((5,),))),
    OpSpec(np.median, "np.median(a, axis=1)", 1, shapes=REDUCE_IN),
    OpSpec(np.median, "np.median(a, -1)", 1, shapes=REDUCE_IN),
    OpSpec(np.median, "np.median(a, axis=(0, 2), keepdims=True)", 1, shapes=REDUCE_IN),
    OpSpec(np.median, "np.median(a, axis=0, keepdims=True)", 1, shapes=M34),
    # ties: the two middle values are the same element of a, twice
    OpSpec(np.median, "np.median(np.concatenate((a, a)))", 1, shapes=(((3,),),)),
    OpSpec(np.median, "np.median(np.stack((a, a, a)), axis=0)", 1, shapes=(((2, 3),),)),
    OpSpec(np.median, "np.median(np.concatenate((a, b)))", 2, (TIE, (2.0, 3.0)),
           (((2,), (1,)), ((2,), (2,)))),
    OpSpec(np.quantile, "np.quantile(a, 0.3)", 1, shapes=ALL),
    OpSpec(np.quantile, "np.quantile(np.concatenate((a, b)), 0.3)", 2, (TIE, (2.0, 3.0)),
           (((2,), (1,)),)),
    OpSpec(np.quantile, "np.quantile(a, 1.0)", 1, shapes=(((5,),),)),
    OpSpec(np.quantile, "np.quantile(a, 0.0, axis=0)", 1, shapes=M34),
    OpSpec(np.quantile, "np.quantile(a, b)", 2, ((-2.0, 2.0), (0.05, 0.95)),
           (((5,), ()), ((3, 4), ()))),
    OpSpec(np.quantile, "np.quantile(a, b, axis=-1)", 2, ((-2.0, 2.0), (0.05, 0.95)),
           (((3, 4), (2,)), ((2, 3, 4), (2, 2)))),
    OpSpec(np.quantile, "np.quantile(a, [0.25, 0.8], axis=(0, 2), keepdims=True)", 1,
           shapes=REDUCE_IN),
    OpSpec(np.quantile, "np.quantile(a, np.array([0.1, 0.5]), 1, method='linear')", 1,
           shapes=REDUCE_IN),
    OpSpec(np.quantile, "np.quantile(np.concatenate((a, a, a)), 0.4)", 1, shapes=(((4,),),)),
    OpSpec(np.quantile, "np.quantile(a, [0.25, b])", 2, ((-2.0, 2.0), (0.05, 0.95)),
           (((5,), ()),)),
    OpSpec(np.percentile, "np.percentile(a, 30.0)", 1, shapes=ALL),
    OpSpec(np.percentile, "np.percentile(a, b, axis=0)", 2, ((-2.0, 2.0), (5.0, 95.0)),
           (((5,), ()), ((3, 4), (3,)))),
    OpSpec(np.percentile, "np.percentile(a, [10.0, 90.0], axis=(-1, 0), keepdims=True)", 1,
           shapes=REDUCE_IN),

    # --- covariance, correlation --------------------------------------------------------------
    OpSpec(np.cov, "np.cov(a)", 1, shapes=(((5,),), ((3, 5),))),
    OpSpec(np.cov, "np.cov(a, b)", 2, shapes=(((5,), (5,)), ((2, 5), (5,)), ((2, 5), (3, 5)))),
    OpSpec(np.cov, "np.cov(a, rowvar=False)", 1, shapes=(((5, 3),), ((5,),))),
    OpSpec(np.cov, "np.cov(a, b, False)", 2, shapes=(((5, 2), (5,)), ((5, 2), (5, 3)))),
    OpSpec(np.cov, "np.cov(a, ddof=0)", 1, shapes=(((3, 5),),)),
    OpSpec(np.cov, "np.cov([a, b * a])", 2, shapes=(((5,), (5,)),)),
    OpSpec(np.cov, "np.cov(a, bias=True)", 1, shapes=(((3, 5),),)),
    OpSpec(np.cov, "np.cov(a, b, ddof=2)", 2, shapes=(((5,), (5,)),)),
    OpSpec(np.corrcoef, "np.corrcoef(a)", 1, shapes=(((3, 5),), ((5,),))),
    OpSpec(np.corrcoef, "np.corrcoef(a, b)", 2, shapes=(((5,), (5,)), ((2, 5), (3, 5)))),
    OpSpec(np.corrcoef, "np.corrcoef(a, rowvar=False)", 1, shapes=(((5, 3),),)),
    OpSpec(np.corrcoef, "np.corrcoef(a, b, rowvar=False)", 2, shapes=(((5, 2), (5,)),)),

    # --- signals ------------------------------------------------------------------------------
    *[OpSpec(key, f"np.{key.__name__}(a, b{mode})", 2, shapes=(
        ((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((4,), (2,)), ((2,), (5,)), ((1,), (3,))))
      for key in (np.convolve, np.correlate)
      for mode in ("", ", mode='full'", ", 'same'", ", mode='valid'")],
    OpSpec(np.convolve, "np.convolve(a, b, 'full')", 2, shapes=(((), ()), ((3,), ()))),
    OpSpec(np.correlate, "np.correlate(a, np.array([1.0, -2.0, 0.5]), 'same')", 1,
           shapes=(((6,),),)),

    # --- interpolation, polynomials, cross products -------------------------------------------
    OpSpec(np.interp, f"np.interp(a, {XP}, b)", 2, ((-2.0, 2.0), (-2.0, 2.0)),
           (((), (5,)), ((6,), (5,)), ((2, 3), (5,)))),
    OpSpec(np.interp, f"np.interp(a, {XP}, b, left=c, right=0.5)", 3, shapes=(
        ((6,), (5,), ()),)),
    OpSpec(np.interp, f"np.interp(a, {XP}, b, -1.0, c)", 3, shapes=(((2, 4), (5,), ()),)),
    OpSpec(np.interp, "np.interp(a, [0.0, 1.0, 3.0], [1.0, -1.0, 2.0])", 1, (-0.5, 3.5),
           (((), ), ((7,),))),
    OpSpec(np.polyval, "np.polyval(a, b)", 2, shapes=(
        ((3,), ()), ((4,), (5,)), ((4,), (2, 3)), ((1,), (3,)), ((3, 2), (4, 2)))),
    OpSpec(np.polyval, "np.polyval(a, 0.7)", 1, shapes=(((3,),),)),
    OpSpec(np.polyval, "np.polyval([1.0, b, 0.5], a)", 2, shapes=(((4,), ()),)),
    OpSpec(np.polyval, "np.polyval([1.0, -2.0, 0.5], a)", 1, shapes=UNARY),
    OpSpec(np.cross, "np.cross(a, b)", 2, shapes=(
        ((3,), (3,)), ((4, 3), (3,)), ((2, 1, 3), (4, 3)))),
    OpSpec(np.cross, "np.cross(a, b, axis=0)", 2, shapes=(((3, 4), (3, 4)), ((3, 1), (3, 2)))),
    OpSpec(np.cross, "np.cross(a, b, axisa=0, axisb=1, axisc=0)", 2,
           shapes=(((3, 4), (4, 3)),)),
    OpSpec(np.cross, "np.cross(a, b, -2, -1, -1)", 2, shapes=(((2, 3, 4), (4, 3)),)),
]

FLOAT32: list = [
    ("np.prod(a, axis=1)", ((3, 4),)),
    ("np.prod(np.concatenate((a, a - a[1:2])), axis=0)", ((3,),)),
    ("np.max(a, axis=(0, 2), keepdims=True)", ((2, 3, 4),)),
    ("np.amin(np.stack((a, a)), axis=0)", ((3, 4),)),
    ("np.ptp(a, axis=-1)", ((3, 4),)),
    ("np.nanmax(a, axis=0)", ((3, 4),)),
    (f"np.nansum(a + {NAN34}, axis=0)", ((3, 4),)),
    (f"np.nanmean(a + {NAN34})", ((3, 4),)),
    (f"np.nanvar(a + {NAN34}, axis=1)", ((3, 4),)),
    (f"np.nanstd(a + {NAN34}, axis=0, ddof=1)", ((3, 4),)),
    (f"np.nanprod(a + {NAN34}, axis=1)", ((3, 4),)),
    ("np.var(a, axis=1, ddof=1)", ((2, 3, 4),)),
    ("np.std(a, axis=(0, 2))", ((2, 3, 4),)),
    ("a.std(axis=0, keepdims=True)", ((3, 4),)),
    ("np.average(a, axis=1, weights=b)", ((3, 4), (4,))),
    ("np.cumsum(a, axis=0)", ((3, 4),)),
    ("np.cumprod(a)", ((2, 3),)),
    (f"np.nancumsum(a + {NAN34}, axis=1)", ((3, 4),)),
    (f"np.nancumprod(a + {NAN34}, axis=0)", ((3, 4),)),
    ("np.diff(a, n=2, axis=0, prepend=b)", ((3, 4), (1, 4))),
    ("np.ediff1d(a, to_begin=b)", ((4,), (2,))),
    ("np.gradient(a, 0.5, axis=1, edge_order=2)", ((3, 4),)),
    ("np.linalg.norm(a)", ((3, 4),)),
    ("np.linalg.norm(a, 3, axis=0)", ((3, 4),)),
    ("np.linalg.norm(a, 'nuc')", ((3, 4),)),
    ("np.linalg.norm(a, np.inf)", ((3, 4),)),
    ("np.linalg.vector_norm(a, axis=(0, 1), ord=1)", ((2, 3, 4),)),
    ("np.linalg.matrix_norm(a, ord=2)", ((2, 3, 4),)),
    ("np.trapezoid(a, b)", ((3, 4), (4,))),
    ("np.trapezoid(a, dx=b)", ((3, 4), (1,))),
    ("np.median(a, axis=0)", ((3, 4),)),
    ("np.quantile(a, b * 0.4, axis=1)", ((3, 4), (2,))),
    ("np.percentile(a, 40.0)", ((5,),)),
    ("np.cov(a, b)", ((2, 5), (5,))),
    ("np.corrcoef(a)", ((3, 5),)),
    ("np.convolve(a, b, 'same')", ((5,), (3,))),
    ("np.correlate(a, b, 'full')", ((3,), (5,))),
    (f"np.interp(a - 1.0, {XP}, b)", ((6,), (5,))),
    ("np.polyval(a, b)", ((3,), (4,))),
    ("np.cross(a, b)", ((4, 3), (4, 3))),
]
