"""Specs of the scipy.integrate rules on samples (none without SciPy: its rules are not
registered either). Sample points ``x`` are made increasing in the expression (a cumulative sum
of spacings away from 0); Simpson's cases cover an odd and an even number of samples (its last
interval then has Cartwright's correction) and two samples."""

from __future__ import annotations

from tests.rule_specs.common import OpSpec

try:
    import scipy
    import scipy.integrate as si
except ImportError:
    si = None

SPACING = (0.3, 1.0)  # an argument drawn as positive spacings
XS = "np.cumsum(b, axis=-1)"  # increasing sample points from spacings b

SPECS: list = []

if si is not None:
    simpson = si.simpson if tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 11) \
        else None
    SAMPLES = (((5,),), ((3, 6),), ((2, 3, 5),), ((2,),), ((3, 4),))
    SPECS = [
        OpSpec(si.trapezoid, "si.trapezoid(a)", 1, shapes=(((4,),), ((3, 4),))),
        OpSpec(si.trapezoid, f"si.trapezoid(a, {XS})", 2, ((-2.0, 2.0), SPACING),
               shapes=(((4,), (4,)), ((3, 4), (4,)), ((3, 4), (3, 4)))),
        OpSpec(si.trapezoid, "si.trapezoid(a, dx=b, axis=0)", 2, ((-2.0, 2.0), SPACING),
               shapes=(((3, 4), ()),)),
        OpSpec(simpson, "si.simpson(a)", 1, shapes=SAMPLES),
        OpSpec(simpson, "si.simpson(a, axis=0)", 1, shapes=(((5, 2),), ((4, 3),), ((2, 2),))),
        OpSpec(simpson, "si.simpson(a, dx=b)", 2, ((-2.0, 2.0), SPACING),
               shapes=(((5,), ()), ((3, 6), ()), ((2,), ()))),
        OpSpec(simpson, f"si.simpson(a, x={XS})", 2, ((-2.0, 2.0), SPACING),
               shapes=(((5,), (5,)), ((6,), (6,)), ((3, 7), (7,)), ((3, 4), (3, 4)),
                       ((2,), (2,)), ((3,), (3,)), ((4,), (4,)))),
        OpSpec(simpson, "si.simpson(a, x=np.cumsum(b), axis=0)", 2, ((-2.0, 2.0), SPACING),
               shapes=(((4, 2), (4,)), ((5, 3), (5,)))),
        OpSpec(si.romb, "si.romb(a)", 1, shapes=(((5,),), ((3, 9),), ((2,),), ((3,),))),
        OpSpec(si.romb, "si.romb(a, dx=b, axis=0)", 2, ((-2.0, 2.0), SPACING),
               shapes=(((5, 3), ()), ((17,), ()))),
        OpSpec(si.cumulative_trapezoid, "si.cumulative_trapezoid(a)", 1,
               shapes=(((5,),), ((3, 4),))),
        OpSpec(si.cumulative_trapezoid, "si.cumulative_trapezoid(a, initial=0, axis=0)", 1,
               shapes=(((4, 3),),)),
        OpSpec(si.cumulative_trapezoid, f"si.cumulative_trapezoid(a, {XS}, initial=0)", 2,
               ((-2.0, 2.0), SPACING), shapes=(((5,), (5,)), ((3, 4), (4,)), ((3, 4), (3, 4)))),
        OpSpec(si.cumulative_trapezoid, "si.cumulative_trapezoid(a, dx=b)", 2,
               ((-2.0, 2.0), SPACING), shapes=(((5,), ()), ((2, 4), ()))),
    ]
