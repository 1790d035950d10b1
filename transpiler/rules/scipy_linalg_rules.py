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

    # the matrix functions: Fréchet derivatives by blocks of the function of a block matrix
    @adjoint(sla.expm)
    def adj_expm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "expm")

    @tangent(sla.expm)
    def tan_expm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "expm")

    @adjoint(sla.logm)
    def adj_logm(ans, A, disp=None):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "logm")

    @tangent(sla.logm)
    def tan_logm(ans, A, disp=None):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "logm")

    @adjoint(sla.sqrtm)
    def adj_sqrtm(ans, A, disp=None, blocksize=None):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "sqrtm")

    @tangent(sla.sqrtm)
    def tan_sqrtm(ans, A, disp=None, blocksize=None):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "sqrtm")

    @adjoint(sla.cosm)
    def adj_cosm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "cosm")

    @tangent(sla.cosm)
    def tan_cosm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "cosm")

    @adjoint(sla.sinm)
    def adj_sinm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "sinm")

    @tangent(sla.sinm)
    def tan_sinm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "sinm")

    @adjoint(sla.tanm)
    def adj_tanm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "tanm")

    @tangent(sla.tanm)
    def tan_tanm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "tanm")

    @adjoint(sla.coshm)
    def adj_coshm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "coshm")

    @tangent(sla.coshm)
    def tan_coshm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "coshm")

    @adjoint(sla.sinhm)
    def adj_sinhm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "sinhm")

    @tangent(sla.sinhm)
    def tan_sinhm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "sinhm")

    @adjoint(sla.tanhm)
    def adj_tanhm(ans, A):
        d[A] = rt.matrix_function_adjoint(d[ans], ans, A, "tanhm")

    @tangent(sla.tanhm)
    def tan_tanhm(ans, A):
        d[ans] = rt.matrix_function_tangent(d[A], ans, A, "tanhm")

    @adjoint(sla.det)
    def adj_sla_det(ans, a, overwrite_a=False, check_finite=True):
        d[a] = rt.scipy_det_adjoint(d[ans], a, ans)

    @tangent(sla.det)
    def tan_sla_det(ans, a, overwrite_a=False, check_finite=True):
        d[ans] = rt.scipy_det_tangent(d[a], a, ans)

    # banded solves: the matrix stays in its band storage
    @adjoint(sla.solve_banded)
    def adj_solve_banded(ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                         check_finite=True):
        gab, gb = rt.solve_banded_adjoint(d[ans], l_and_u, ab, b, ans)
        d[ab] = gab
        d[b] = gb

    @tangent(sla.solve_banded)
    def tan_solve_banded(ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                         check_finite=True):
        d[ans] = rt.solve_banded_tangent(d[ab], d[b], l_and_u, ab, b, ans)

    @adjoint(sla.solveh_banded)
    def adj_solveh_banded(ans, ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                          check_finite=True):
        gab, gb = rt.solveh_banded_adjoint(d[ans], ab, b, ans, lower)
        d[ab] = gab
        d[b] = gb

    @tangent(sla.solveh_banded)
    def tan_solveh_banded(ans, ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                          check_finite=True):
        d[ans] = rt.solveh_banded_tangent(d[ab], d[b], ab, b, ans, lower)

    # decompositions: NumPy's formulas (runtime/linalg.py), in SciPy's terms
    @adjoint(sla.eigh)
    def adj_sla_eigh(ans, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
                     overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
                     subset_by_value=None, driver=None):
        d[a] = rt.scipy_eigh_adjoint(d[ans], ans, a, b, lower, eigvals_only, subset_by_index,
                                     subset_by_value)

    @tangent(sla.eigh)
    def tan_sla_eigh(ans, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
                     overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
                     subset_by_value=None, driver=None):
        d[ans] = rt.scipy_eigh_tangent(d[a], ans, a, b, lower, eigvals_only, subset_by_index,
                                       subset_by_value)

    @adjoint(sla.eigvalsh)
    def adj_sla_eigvalsh(ans, a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False,
                         type=1, check_finite=True, subset_by_index=None,
                         subset_by_value=None, driver=None):
        d[a] = rt.scipy_eigh_adjoint(d[ans], ans, a, b, lower, True, subset_by_index,
                                     subset_by_value)

    @tangent(sla.eigvalsh)
    def tan_sla_eigvalsh(ans, a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False,
                         type=1, check_finite=True, subset_by_index=None,
                         subset_by_value=None, driver=None):
        d[ans] = rt.scipy_eigh_tangent(d[a], ans, a, b, lower, True, subset_by_index,
                                       subset_by_value)

    @adjoint(sla.svd)
    def adj_sla_svd(ans, a, full_matrices=True, compute_uv=True, overwrite_a=False,
                    check_finite=True, lapack_driver="gesdd"):
        d[a] = rt.svd_adjoint(d[ans], ans, a, full_matrices, compute_uv)

    @tangent(sla.svd)
    def tan_sla_svd(ans, a, full_matrices=True, compute_uv=True, overwrite_a=False,
                    check_finite=True, lapack_driver="gesdd"):
        d[ans] = rt.svd_tangent(d[a], ans, a, full_matrices, compute_uv)

    @adjoint(sla.svdvals)
    def adj_sla_svdvals(ans, a, overwrite_a=False, check_finite=True):
        d[a] = rt.svdvals_adjoint(d[ans], a)

    @tangent(sla.svdvals)
    def tan_sla_svdvals(ans, a, overwrite_a=False, check_finite=True):
        d[ans] = rt.svdvals_tangent(d[a], a)

    @adjoint(sla.qr)
    def adj_sla_qr(ans, a, overwrite_a=False, lwork=None, mode="full", pivoting=False,
                   check_finite=True):
        d[a] = rt.scipy_qr_adjoint(d[ans], ans, a, mode, pivoting)

    @tangent(sla.qr)
    def tan_sla_qr(ans, a, overwrite_a=False, lwork=None, mode="full", pivoting=False,
                   check_finite=True):
        d[ans] = rt.scipy_qr_tangent(d[a], ans, a, mode, pivoting)

    @adjoint(sla.lstsq)
    def adj_sla_lstsq(ans, a, b, cond=None, overwrite_a=False, overwrite_b=False,
                      check_finite=True, lapack_driver=None):
        d[a] = rt.lstsq_adjoint(d[ans], a, b, ans, 0)
        d[b] = rt.lstsq_adjoint(d[ans], a, b, ans, 1)

    @tangent(sla.lstsq)
    def tan_sla_lstsq(ans, a, b, cond=None, overwrite_a=False, overwrite_b=False,
                      check_finite=True, lapack_driver=None):
        d[ans] = rt.lstsq_tangent(d[a], d[b], a, b, ans)

    # special matrices: constructions, their gradients gathers
    @adjoint(sla.block_diag)  # *arrs: up to six blocks
    def adj_block_diag(ans, arr1, arr2=None, arr3=None, arr4=None, arr5=None, arr6=None):
        d[arr1] = rt.unblock_diag(d[ans], 0, arr1, arr2, arr3, arr4, arr5, arr6)
        d[arr2] = rt.unblock_diag(d[ans], 1, arr1, arr2, arr3, arr4, arr5, arr6)
        d[arr3] = rt.unblock_diag(d[ans], 2, arr1, arr2, arr3, arr4, arr5, arr6)
        d[arr4] = rt.unblock_diag(d[ans], 3, arr1, arr2, arr3, arr4, arr5, arr6)
        d[arr5] = rt.unblock_diag(d[ans], 4, arr1, arr2, arr3, arr4, arr5, arr6)
        d[arr6] = rt.unblock_diag(d[ans], 5, arr1, arr2, arr3, arr4, arr5, arr6)

    @tangent(sla.block_diag)
    def tan_block_diag(ans, arr1, arr2=None, arr3=None, arr4=None, arr5=None, arr6=None):
        d[ans] = rt.into_block_diag(ans, 0, d[arr1], arr1, arr2, arr3, arr4, arr5, arr6)
        d[ans] = rt.into_block_diag(ans, 1, d[arr2], arr1, arr2, arr3, arr4, arr5, arr6)
        d[ans] = rt.into_block_diag(ans, 2, d[arr3], arr1, arr2, arr3, arr4, arr5, arr6)
        d[ans] = rt.into_block_diag(ans, 3, d[arr4], arr1, arr2, arr3, arr4, arr5, arr6)
        d[ans] = rt.into_block_diag(ans, 4, d[arr5], arr1, arr2, arr3, arr4, arr5, arr6)
        d[ans] = rt.into_block_diag(ans, 5, d[arr6], arr1, arr2, arr3, arr4, arr5, arr6)

    @adjoint(sla.toeplitz)
    def adj_toeplitz(ans, c, r=None):
        d[c] = rt.toeplitz_adjoint(d[ans], c, r, 0)
        d[r] = rt.toeplitz_adjoint(d[ans], c, r, 1)

    @tangent(sla.toeplitz)
    def tan_toeplitz(ans, c, r=None):
        if r is None:
            d[ans] = sla.toeplitz(d[c])
        else:
            d[ans] = sla.toeplitz(d[c], d[r])

    @adjoint(sla.circulant)
    def adj_circulant(ans, c):
        d[c] = rt.circulant_adjoint(d[ans], c)

    @tangent(sla.circulant)
    def tan_circulant(ans, c):
        d[ans] = sla.circulant(d[c])
