"""Specs of the scipy.linalg rules (none without SciPy: its rules are not registered either).

Matrices are made well conditioned in the expression (``a + 3 I``, ``a a^T + 3 I``); the specs
that add an unrelated triangle check that a rule differentiates only what SciPy reads.
"""

from __future__ import annotations

from tests.rule_specs.common import OpSpec

try:
    import scipy.linalg as sla
except ImportError:
    sla = None

UNIT = (-1.0, 1.0)
INV = "m = a + 3.0 * np.eye(a.shape[-1]); "
SPD = "s = a @ a.T + 3.0 * np.eye(a.shape[-1]); "
SQ_VEC = (((3, 3), (3,)), ((3, 3), (3, 2)))

SPECS: list = []

if sla is not None:
    SPECS = [
        OpSpec(sla.solve, INV + "sla.solve(m, b)", 2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.solve, INV + "sla.solve(m, b, transposed=True)", 2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.solve, SPD + "sla.solve(s + np.tril(a, -1), b, assume_a='sym')", 2, UNIT,
               shapes=SQ_VEC),
        OpSpec(sla.solve, SPD + "sla.solve(s + np.triu(a, 1), b, lower=True, assume_a='pos')",
               2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.solve_triangular, INV + "sla.solve_triangular(m, b)", 2, UNIT,
               shapes=SQ_VEC),
        OpSpec(sla.solve_triangular, INV + "sla.solve_triangular(m, b, trans=1, lower=True)",
               2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.solve_triangular, INV + "sla.solve_triangular(m, b, trans='T', "
               "unit_diagonal=True)", 2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.cholesky, SPD + "sla.cholesky(s + np.tril(a, -1))", 1, UNIT,
               shapes=(((3, 3),),)),
        OpSpec(sla.cholesky, SPD + "sla.cholesky(s + np.triu(a, 1), lower=True)", 1, UNIT,
               shapes=(((3, 3),),)),
        OpSpec(sla.cho_factor, SPD + "c, low = sla.cho_factor(s); c", 1, UNIT,
               shapes=(((3, 3),),)),
        OpSpec(sla.cho_factor, SPD + "sla.cho_factor(s, lower=True)[0] * 2.0", 1, UNIT,
               shapes=(((3, 3),),)),
        OpSpec(sla.cho_solve, SPD + "sla.cho_solve(sla.cho_factor(s), b)", 2, UNIT,
               shapes=SQ_VEC),
        OpSpec(sla.cho_solve, SPD + "f = sla.cho_factor(s, lower=True); sla.cho_solve(f, b)",
               2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.lu_factor, "lu, piv = sla.lu_factor(a); lu", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.lu_solve, "sla.lu_solve(sla.lu_factor(a), b)", 2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.lu_solve, "f = sla.lu_factor(a); sla.lu_solve(f, b, trans=1) + "
               "sla.lu_solve(f, b * b)", 2, UNIT, shapes=SQ_VEC),
        OpSpec(sla.inv, INV + "sla.inv(m)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.det, INV + "sla.det(m)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.expm, "sla.expm(a)", 1, UNIT, shapes=(((3, 3),), ((2, 3, 3),))),
        OpSpec(sla.expm, "sla.expm(a * b) @ np.ones(3)", 2, UNIT, shapes=(((3, 3), ()),)),
        OpSpec(sla.expm, "np.real(sla.expm(a + 1j * b) * (0.6 - 0.8j))", 2, UNIT, shapes=(
            ((3, 3), (3, 3)),)),
    ]
