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
# distinct, well separated eigenvalues (1, 3, 5) in a random orthogonal basis
SPREAD = ("q = np.linalg.qr(b)[0]; s = q @ np.diag(2.0 * np.arange(3.0) + 1.0) @ q.T "
          "+ 0.1 * (a + a.T); ")
BAND = (((3, 5), (5,)), ((3, 5), (5, 2)))  # one diagonal each side, five unknowns


def _diagonal_row(row: int, rows: int) -> str:
    """``a`` with 4 added to its band storage's diagonal row (diagonally dominant)."""
    return f"a + 4.0 * (np.arange({rows}) == {row})[:, np.newaxis]"

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
            OpSpec(sla.logm, SPD + "sla.logm(s)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.logm, INV + "sla.logm(m)", 1, UNIT, shapes=(((3, 3),), ((2, 3, 3),))),
        OpSpec(sla.sqrtm, INV + "sla.sqrtm(m)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.sqrtm, SPD + "sla.sqrtm(s) * b", 2, UNIT, shapes=(((3, 3), (3,)),)),
        OpSpec(sla.logm, INV + "np.real(sla.logm(m + 0.5j * b) * (0.6 - 0.8j))", 2, UNIT,
               shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.sqrtm, INV + "np.imag(sla.sqrtm(m * (1.0 + 0.3j) + b) * (0.6 - 0.8j))", 2,
               UNIT, shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.cosm, "sla.cosm(a)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.sinm, "sla.sinm(a * b)", 2, UNIT, shapes=(((3, 3), ()),)),
        OpSpec(sla.tanm, "sla.tanm(0.3 * a)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.coshm, "sla.coshm(a)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.sinhm, "sla.sinhm(a)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.tanhm, "sla.tanhm(a)", 1, UNIT, shapes=(((3, 3),),)),
        OpSpec(sla.solve_banded, "sla.solve_banded((1, 1), " + _diagonal_row(1, 3) + ", b)", 2,
               UNIT, shapes=BAND),
        OpSpec(sla.solve_banded, "sla.solve_banded((2, 0), " + _diagonal_row(0, 3) + ", b)", 2,
               UNIT, shapes=BAND),
        OpSpec(sla.solve_banded, "sla.solve_banded((0, 1), " + _diagonal_row(1, 2) + ", b)", 2,
               UNIT, shapes=(((2, 4), (4,)),)),
        OpSpec(sla.solveh_banded, "sla.solveh_banded(" + _diagonal_row(2, 3) + ", b)", 2, UNIT,
               shapes=BAND),
        OpSpec(sla.solveh_banded, "sla.solveh_banded(" + _diagonal_row(0, 2) + ", b, "
               "lower=True)", 2, UNIT, shapes=(((2, 5), (5,)), ((2, 5), (5, 2)))),
        OpSpec(sla.eigh, SPREAD + "w, v = sla.eigh(s); v * v + w", 2, UNIT,
               shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.eigh, SPREAD + "w, v = sla.eigh(s + np.tril(c, -1), lower=False); "
               "(v * w) @ v[:1].T", 3, UNIT, shapes=(((3, 3), (3, 3), (3, 3)),)),
        OpSpec(sla.eigh, SPREAD + "sla.eigh(s, eigvals_only=True)", 2, UNIT,
               shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.eigh, SPREAD + "w, v = sla.eigh(s, subset_by_index=[1, 2]); v * v + w", 2,
               UNIT, shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.eigvalsh, SPREAD + "sla.eigvalsh(s + np.triu(c, 1))", 3, UNIT,
               shapes=(((3, 3), (3, 3), (3, 3)),)),
        OpSpec(sla.eigvalsh, SPREAD + "sla.eigvalsh(s, subset_by_value=(2.0, 6.0))", 2, UNIT,
               shapes=(((3, 3), (3, 3)),)),
        OpSpec(sla.svd, "w, s, vh = sla.svd(a, full_matrices=False); "
               "w[:, :1] @ vh[:1] + w[:, 1:2] @ vh[1:2] * 2.0 + np.sum(s)", 1, UNIT,
               shapes=(((4, 3),), ((3, 4),))),
        OpSpec(sla.svd, "sla.svd(a, compute_uv=False)", 1, UNIT, shapes=(((4, 3),),)),
        OpSpec(sla.svdvals, "sla.svdvals(a)", 1, UNIT, shapes=(((3, 4),), ((3, 3),))),
        OpSpec(sla.qr, "q, r = sla.qr(a); q @ r", 1, UNIT, shapes=(((3, 3),), ((3, 4),))),
        OpSpec(sla.qr, "q, r = sla.qr(a, mode='economic'); (q * np.diag(r)) @ q.T + "
               "np.sum(r * r)", 1, UNIT, shapes=(((4, 3),),)),
        # (the default mode='full' of a tall matrix: reverse mode, while q's extra columns get
        # no gradient)
        OpSpec(sla.qr, "q, r = sla.qr(a); r * r + q[:, :3] @ r[:3]", 1, UNIT, shapes=(((4, 3),),)),
        OpSpec(sla.qr, "sla.qr(a, mode='r')[0] ** 2", 1, UNIT, shapes=(((3, 3),), ((3, 4),))),
        OpSpec(sla.qr, "q, r, p = sla.qr(a, mode='economic', pivoting=True); q @ r + r[0]", 1,
               UNIT, shapes=(((4, 3),), ((3, 3),))),
        OpSpec(sla.lstsq, "sla.lstsq(a, b)[0]", 2, UNIT, shapes=(
            ((4, 3), (4,)), ((4, 3), (4, 2)), ((2, 4), (2,)))),
        OpSpec(sla.lstsq, "x, res, rank, sv = sla.lstsq(a, b); res + np.sum(sv)", 2, UNIT,
               shapes=(((4, 3), (4, 2)), ((4, 3), (4,)))),
        OpSpec(sla.block_diag, "sla.block_diag(a, b)", 2, UNIT, shapes=(
            ((2, 2), (3,)), ((2, 3), (2, 1)))),
        OpSpec(sla.block_diag, "sla.block_diag(a, 2.0 * a, b, a * b)", 2, UNIT, shapes=(
            ((2, 3), ()),)),
        OpSpec(sla.toeplitz, "sla.toeplitz(a, b)", 2, UNIT, shapes=(((3,), (4,)), ((4,), (2,)))),
        OpSpec(sla.toeplitz, "sla.toeplitz(a)", 1, UNIT, shapes=(((3,),),)),
        OpSpec(sla.circulant, "sla.circulant(a) @ b", 2, UNIT, shapes=(((4,), (4,)),)),
    ]

