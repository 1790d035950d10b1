"""Adjoints and tangents of ``scipy.linalg`` (real matrices), registered only when SciPy is
importable; their formulas are runtime/linalg.py's (a solve's adjoint is one more solve with the
same matrix, transposed; ``cho_solve``'s reuses the factor, and ``cho_factor``'s takes the
factor's gradient back to the matrix). Their calls with complex values are refused at the line
(not in ``COMPLEX_READY``), and with Dask arrays when run (SciPy would compute them).
"""

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent

try:
    import scipy.linalg as sla
except ImportError:  # no SciPy: no rules
    sla = None

if sla is not None:

    @adjoint(sla.solve)
    def adj_sla_solve(ans, a, b, lower=False, overwrite_a=False, overwrite_b=False,
                      check_finite=True, assume_a=None, transposed=False):
        ga, gb = rt.scipy_solve_adjoint(d[ans], a, b, ans, lower, assume_a, transposed)
        d[a] = ga
        d[b] = gb

    @tangent(sla.solve)
    def tan_sla_solve(ans, a, b, lower=False, overwrite_a=False, overwrite_b=False,
                      check_finite=True, assume_a=None, transposed=False):
        d[ans] = rt.scipy_solve_tangent(d[a], d[b], a, b, ans, lower, assume_a, transposed)

    @adjoint(sla.solve_triangular)
    def adj_solve_triangular(ans, a, b, trans=0, lower=False, unit_diagonal=False,
                             overwrite_b=False, check_finite=True):
        ga, gb = rt.solve_triangular_adjoint(d[ans], a, b, ans, trans, lower, unit_diagonal)
        d[a] = ga
        d[b] = gb

    @tangent(sla.solve_triangular)
    def tan_solve_triangular(ans, a, b, trans=0, lower=False, unit_diagonal=False,
                             overwrite_b=False, check_finite=True):
        d[ans] = rt.solve_triangular_tangent(d[a], d[b], a, b, ans, trans, lower,
                                             unit_diagonal)

    @adjoint(sla.cholesky)
    def adj_sla_cholesky(ans, a, lower=False, overwrite_a=False, check_finite=True):
        d[a] = rt.scipy_cholesky_adjoint(d[ans], ans, a, lower)

    @tangent(sla.cholesky)
    def tan_sla_cholesky(ans, a, lower=False, overwrite_a=False, check_finite=True):
        d[ans] = rt.scipy_cholesky_tangent(d[a], ans, a, lower)

    @adjoint(sla.cho_factor)
    def adj_cho_factor(ans, a, lower=False, overwrite_a=False, check_finite=True):
        d[a] = rt.cho_factor_adjoint(d[ans], ans, a)

    @tangent(sla.cho_factor)
    def tan_cho_factor(ans, a, lower=False, overwrite_a=False, check_finite=True):
        d[ans] = rt.cho_factor_tangent(d[a], ans, a)

    @adjoint(sla.cho_solve)
    def adj_cho_solve(ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        gc, gb = rt.cho_solve_adjoint(d[ans], c_and_lower, b, ans)
        d[c_and_lower] = gc
        d[b] = gb

    @tangent(sla.cho_solve)
    def tan_cho_solve(ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        d[ans] = rt.cho_solve_tangent(d[c_and_lower], d[b], c_and_lower, b, ans)

    @adjoint(sla.inv)
    def adj_sla_inv(ans, a, overwrite_a=False, check_finite=True, *, assume_a=None,
                    lower=False):
        d[a] = rt.scipy_inv_adjoint(d[ans], ans, a, assume_a)

    @tangent(sla.inv)
    def tan_sla_inv(ans, a, overwrite_a=False, check_finite=True, *, assume_a=None,
                    lower=False):
        d[ans] = rt.scipy_inv_tangent(d[a], ans, a, assume_a)

    @adjoint(sla.lu_factor)
    def adj_lu_factor(ans, a, overwrite_a=False, check_finite=True):
        d[a] = rt.lu_factor_adjoint(d[ans], ans, a)

    @tangent(sla.lu_factor)
    def tan_lu_factor(ans, a, overwrite_a=False, check_finite=True):
        d[ans] = rt.lu_factor_tangent(d[a], ans, a)

    @adjoint(sla.lu_solve)
    def adj_lu_solve(ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
        glu, gb = rt.lu_solve_adjoint(d[ans], lu_and_piv, b, ans, trans)
        d[lu_and_piv] = glu
        d[b] = gb

    @tangent(sla.lu_solve)
    def tan_lu_solve(ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
        d[ans] = rt.lu_solve_tangent(d[lu_and_piv], d[b], lu_and_piv, b, ans, trans)

    @adjoint(sla.expm)
    def adj_expm(ans, A):
        d[A] = rt.expm_adjoint(d[ans], A)

    @tangent(sla.expm)
    def tan_expm(ans, A):
        d[ans] = rt.expm_tangent(d[A], A)

    @adjoint(sla.det)
    def adj_sla_det(ans, a, overwrite_a=False, check_finite=True):
        d[a] = rt.scipy_det_adjoint(d[ans], a, ans)

    @tangent(sla.det)
    def tan_sla_det(ans, a, overwrite_a=False, check_finite=True):
        d[ans] = rt.scipy_det_tangent(d[a], a, ans)
