"""Adjoints of the runtime helpers generated gradients call, so that a generated gradient can
itself be differentiated (``hvp``, ``hessian``: reverse over reverse). Each helper is linear in
its first argument; its adjoint is the transposed map.

Their tangents (forward over reverse) apply the same helper to the tangent; the helpers whose
other arguments are only read for their shape (``like``, ``index``, ...) have one term. Some
helpers have a tangent but no adjoint (yet): ``rt.unindex``, ``rt.add_into``, the container
helpers. ``rt.seed`` and ``rt.zeros_like_grad`` are constants (nondiff.py)."""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(rt.unbroadcast)  # sums over broadcast axes: the transpose broadcasts back
def adj_unbroadcast(ans, g, like):
    d[g] = rt.broadcast_like(d[ans], g)


@tangent(rt.unbroadcast)
def tan_unbroadcast(ans, g, like):
    d[ans] = rt.unbroadcast(d[g], like)


@adjoint(rt.unreduce)  # spreads over the reduced axes: the transpose sums them again
def adj_unreduce(ans, g, like, axis=None, keepdims=False):
    d[g] = rt.reduce_like(d[ans], g, axis, keepdims)


@tangent(rt.unreduce)
def tan_unreduce(ans, g, like, axis=None, keepdims=False):
    d[ans] = rt.unreduce(d[g], like, axis, keepdims)


@adjoint(rt.grad_like)  # reshapes and casts g like x
def adj_grad_like(ans, g, x):
    d[g] = rt.unbroadcast(d[ans], g)


@tangent(rt.grad_like)
def tan_grad_like(ans, g, x):
    d[ans] = rt.grad_like(d[g], x)


@adjoint(rt.copied)  # the same values
def adj_copied(ans, g):
    d[g] = d[ans]


@tangent(rt.copied)
def tan_copied(ans, g):
    d[ans] = rt.copied(d[g])


@adjoint(rt.distinct)  # the same values (a copy where two gradients were one array)
def adj_distinct(ans, grads):
    d[grads] = d[ans]


@tangent(rt.distinct)
def tan_distinct(ans, grads):
    d[ans] = rt.distinct(d[grads])


@adjoint(rt.zero_index)  # g with g[index] = 0
def adj_zero_index(ans, g, index):
    d[g] = rt.zero_index(d[ans], index)


@tangent(rt.zero_index)
def tan_zero_index(ans, g, index):
    d[ans] = rt.zero_index(d[g], index)


@adjoint(rt.written)  # g[index], each element from its last write: linear in g
def adj_written(ans, g, index):
    d[g] = rt.unwritten(d[ans], g, index)


@tangent(rt.written)
def tan_written(ans, g, index):
    d[ans] = rt.written(d[g], index)


@adjoint(rt.unwritten)  # its transpose
def adj_unwritten(ans, d, like, index):
    d[d] = rt.written(d[ans], index)


@tangent(rt.unwritten)
def tan_unwritten(ans, d, like, index):
    d[ans] = rt.unwritten(d[d], like, index)


# The product adjoints are bilinear: <u, Ma(g, b)> = <g, u @ b> gives both partials.
@adjoint(rt.matmul_adjoint_a)
def adj_matmul_adjoint_a(ans, g, a, b):
    d[g] = np.matmul(d[ans], b)
    d[b] = rt.matmul_adjoint_b(g, d[ans], b)


@tangent(rt.matmul_adjoint_a)  # a is only read for its shape
def tan_matmul_adjoint_a(ans, g, a, b):
    d[ans] = rt.matmul_adjoint_a(d[g], a, b)
    d[ans] = rt.matmul_adjoint_a(g, a, d[b])


@adjoint(rt.matmul_adjoint_b)
def adj_matmul_adjoint_b(ans, g, a, b):
    d[g] = np.matmul(a, d[ans])
    d[a] = rt.matmul_adjoint_a(g, a, d[ans])


@tangent(rt.matmul_adjoint_b)  # b is only read for its shape
def tan_matmul_adjoint_b(ans, g, a, b):
    d[ans] = rt.matmul_adjoint_b(d[g], a, b)
    d[ans] = rt.matmul_adjoint_b(g, d[a], b)


@adjoint(rt.dot_adjoint_a)
def adj_dot_adjoint_a(ans, g, a, b):
    d[g] = np.dot(d[ans], b)
    d[b] = rt.dot_adjoint_b(g, d[ans], b)


@tangent(rt.dot_adjoint_a)
def tan_dot_adjoint_a(ans, g, a, b):
    d[ans] = rt.dot_adjoint_a(d[g], a, b)
    d[ans] = rt.dot_adjoint_a(g, a, d[b])


@adjoint(rt.dot_adjoint_b)
def adj_dot_adjoint_b(ans, g, a, b):
    d[g] = np.dot(a, d[ans])
    d[a] = rt.dot_adjoint_a(g, a, d[ans])


@tangent(rt.dot_adjoint_b)
def tan_dot_adjoint_b(ans, g, a, b):
    d[ans] = rt.dot_adjoint_b(d[g], a, b)
    d[ans] = rt.dot_adjoint_b(g, d[a], b)


# --- tangents of the other helpers generated gradients call (all linear in their first
# argument; the others are only read for their shape, an index or the structure of a container)

@tangent(rt.unindex)
def tan_unindex(ans, g, like, index):
    d[ans] = rt.unindex(d[g], like, index)


# rt.add_into(g, index, part) is g + rt.unindex(part, g, index), computed in place in g; the
# tangent is the sum, a new value (the tangent of g is not touched). g is only read for its shape.
@tangent(rt.add_into)
def tan_add_into(ans, g, index, part):
    d[ans] = d[g]
    d[ans] = rt.unindex(d[part], g, index)


# broadcast_like(d, g) and reduce_like(d, g, ...): their first parameter is renamed (d is the
# template's placeholder); generated code passes it by position.
@tangent(rt.broadcast_like)
def tan_broadcast_like(ans, v, g):
    d[ans] = rt.broadcast_like(d[v], g)


@tangent(rt.reduce_like)
def tan_reduce_like(ans, v, g, axis=None, keepdims=False):
    d[ans] = rt.reduce_like(d[v], g, axis, keepdims)


@tangent(rt.cotangent)
def tan_cotangent(ans, ct, value):
    d[ans] = rt.cotangent(d[ct], value)


@tangent(rt.unconcatenate)
def tan_unconcatenate(ans, g, arrays, axis=0):
    d[ans] = rt.unconcatenate(d[g], arrays, axis)


@tangent(rt.unstack)
def tan_unstack(ans, g, arrays, axis=0):
    d[ans] = rt.unstack(d[g], arrays, axis)


@tangent(rt.unsorted)  # (linear in the gradient: the order is the items')
def tan_unsorted(ans, g, items, key=None, reverse=False):
    d[ans] = rt.unsorted(d[g], items, key, reverse)


@tangent(rt.unpermuted)  # (linear in the gradient: the order is the elements')
def tan_unpermuted(ans, g, a, permuted, axis=-1):
    d[ans] = rt.unpermuted(d[g], a, permuted, axis)


@tangent(rt.unappend)
def tan_unappend(ans, g, n=1):
    d[ans] = rt.unappend(d[g], n)


@tangent(rt.last)
def tan_last(ans, g, n):
    d[ans] = rt.last(d[g], n)


@tangent(rt.unsum)
def tan_unsum(ans, g, items):
    d[ans] = rt.unsum(d[g], items)


@tangent(rt.unget)
def tan_unget(ans, g, mapping, key):
    d[ans] = rt.unget(d[g], mapping, key)


@tangent(rt.unget_default)
def tan_unget_default(ans, g, mapping, key):
    d[ans] = rt.unget_default(d[g], mapping, key)


@tangent(rt.unitems)
def tan_unitems(ans, g, mapping):
    d[ans] = rt.unitems(d[g], mapping)


@tangent(rt.unvalues)
def tan_unvalues(ans, g, mapping):
    d[ans] = rt.unvalues(d[g], mapping)


@tangent(rt.unsequence)
def tan_unsequence(ans, g, items):
    d[ans] = rt.unsequence(d[g], items)


# --- tangents of the adjoint helpers of runtime/linalg.py (forward over reverse through linear
# algebra). Each is linear in g (the first term applies the helper to g's tangent); the other
# terms are those of the primal values it reads (rt.<helper>_tangent, next to the helper).
# Arguments only read for their shape (like, and the operand a product's adjoint does not read)
# have none.

@tangent(rt.untrace)
def tan_untrace(ans, g, like, offset=0, axis1=0, axis2=1):
    d[ans] = rt.untrace(d[g], like, offset, axis1, axis2)


@tangent(rt.undiagonal)
def tan_undiagonal(ans, g, like, offset=0, axis1=0, axis2=1):
    d[ans] = rt.undiagonal(d[g], like, offset, axis1, axis2)


@tangent(rt.diag_adjoint)
def tan_diag_adjoint(ans, g, v, k=0):
    d[ans] = rt.diag_adjoint(d[g], v, k)


@tangent(rt.tensordot_adjoint)
def tan_tensordot_adjoint(ans, g, a, b, axes=2, wrt=0):
    d[ans] = rt.tensordot_adjoint(d[g], a, b, axes, wrt)
    d[ans] = rt.tensordot_adjoint_tangent(g, d[a], d[b], a, b, axes, wrt)


@tangent(rt.inner_adjoint)
def tan_inner_adjoint(ans, g, a, b, wrt=0):
    d[ans] = rt.inner_adjoint(d[g], a, b, wrt)
    d[ans] = rt.inner_adjoint_tangent(g, d[a], d[b], a, b, wrt)


@tangent(rt.kron_adjoint)
def tan_kron_adjoint(ans, g, a, b, wrt=0):
    d[ans] = rt.kron_adjoint(d[g], a, b, wrt)
    d[ans] = rt.kron_adjoint_tangent(g, d[a], d[b], a, b, wrt)


@tangent(rt.vecdot_adjoint)
def tan_vecdot_adjoint(ans, g, x1, x2, wrt=0, axis=-1, keepdims=False, axes=None):
    d[ans] = rt.vecdot_adjoint(d[g], x1, x2, wrt, axis, keepdims, axes)
    d[ans] = rt.vecdot_adjoint_tangent(g, d[x1], d[x2], x1, x2, wrt, axis, keepdims,
                                       axes)


@tangent(rt.einsum_adjoint)
def tan_einsum_adjoint(ans, g, position, args, optimize=False):
    d[ans] = rt.einsum_adjoint(d[g], position, args, optimize)
    d[ans] = rt.einsum_adjoint_tangent(g, position, args, d[args], optimize)


@tangent(rt.multi_dot_adjoint)
def tan_multi_dot_adjoint(ans, g, arrays):
    d[ans] = rt.multi_dot_adjoint(d[g], arrays)
    d[ans] = rt.multi_dot_adjoint_tangent(g, arrays, d[arrays])


@tangent(rt.det_adjoint)
def tan_det_adjoint(ans, g, a, det):
    d[ans] = rt.det_adjoint(d[g], a, det)
    d[ans] = rt.det_adjoint_tangent(g, d[a], d[det], a, det)


@tangent(rt.slogdet_adjoint)
def tan_slogdet_adjoint(ans, g, a):
    d[ans] = rt.slogdet_adjoint(d[g], a)
    d[ans] = rt.slogdet_adjoint_tangent(g, d[a], a)


@tangent(rt.solve_adjoint)  # a tuple (ga, gb): one term; b is only read for its shape
def tan_solve_adjoint(ans, g, a, b, x):
    d[ans] = rt.solve_adjoint_tangent(d[g], d[a], d[x], g, a, b, x)


@tangent(rt.matrix_power_adjoint)
def tan_matrix_power_adjoint(ans, g, a, n):
    d[ans] = rt.matrix_power_adjoint(d[g], a, n)
    d[ans] = rt.matrix_power_adjoint_tangent(g, d[a], a, n)


@tangent(rt.pinv_adjoint)
def tan_pinv_adjoint(ans, g, a, p, hermitian=False, rcond=None, rtol=None):
    d[ans] = rt.pinv_adjoint_tangent(d[g], d[a], d[p], g, a, p, hermitian, rcond, rtol)


# the partials of scipy.stats methods (their primal result, ``ans``, renamed ``value`` here)
@tangent(rt.stats_partial)
def tan_stats_partial(ans, g, dist, method, wrt, value, x, shapes, loc=0.0, scale=1.0):
    d[ans] = rt.stats_partial_tangent(d[g], (d[x], d[shapes], d[loc], d[scale]), g, dist,
                                      method, wrt, value, x, shapes, loc, scale)


@tangent(rt.mvn_partial)
def tan_mvn_partial(ans, g, method, wrt, value, x, mean=None, cov=1.0):
    d[ans] = rt.mvn_partial_tangent(d[g], (d[x], d[mean], d[cov]), g, method, wrt, value, x,
                                    mean, cov)


@tangent(rt.cholesky_adjoint)
def tan_cholesky_adjoint(ans, g, factor, upper=False):
    d[ans] = rt.cholesky_adjoint_tangent(d[g], d[factor], g, factor, upper)


# eigh_adjoint(g, ans, uplo): its second parameter (the primal's result) is renamed here
@tangent(rt.eigh_adjoint)
def tan_eigh_adjoint(ans, g, res, uplo="L"):
    d[ans] = rt.eigh_adjoint_tangent(d[g], d[res], g, res, uplo)


@tangent(rt.eigvalsh_adjoint)
def tan_eigvalsh_adjoint(ans, g, a, uplo="L"):
    d[ans] = rt.eigvalsh_adjoint(d[g], a, uplo)
    d[ans] = rt.eigvalsh_adjoint_tangent(g, d[a], a, uplo)


# eig's and the complex decompositions' adjoints (runtime/linalg.py): through eigen- and singular
# values; their vectors' second derivatives are refused when run
@tangent(rt.eigvals_adjoint)
def tan_eigvals_adjoint(ans, g, a, w):
    d[ans] = rt.eigvals_adjoint(d[g], a, w)
    d[ans] = rt.eigvals_adjoint_tangent(g, d[a], a, w)


@tangent(rt.eig_adjoint)
def tan_eig_adjoint(ans, g, res):
    d[ans] = rt.eig_adjoint_tangent(d[g], d[res], g, res)


@tangent(rt.eigh_complex_adjoint)
def tan_eigh_complex_adjoint(ans, g, res, uplo="L"):
    d[ans] = rt.eigh_complex_adjoint_tangent(d[g], d[res], g, res, uplo)


@tangent(rt.eigvalsh_complex_adjoint)
def tan_eigvalsh_complex_adjoint(ans, g, a, uplo="L"):
    d[ans] = rt.eigvalsh_complex_adjoint(d[g], a, uplo)
    d[ans] = rt.eigvalsh_complex_adjoint_tangent(g, d[a], a, uplo)


@tangent(rt.slogdet_complex_adjoint)
def tan_slogdet_complex_adjoint(ans, g, a, res):
    d[ans] = rt.slogdet_complex_adjoint_tangent(g, d[g], d[a], d[res], a, res)


@tangent(rt.svdvals_complex_adjoint)
def tan_svdvals_complex_adjoint(ans, g, a):
    d[ans] = rt.svdvals_complex_adjoint(d[g], a)
    d[ans] = rt.svdvals_complex_adjoint_tangent(g, d[a], a)


@tangent(rt.svd_complex_adjoint)
def tan_svd_complex_adjoint(ans, g, res, a, full_matrices=True, compute_uv=True,
                            hermitian=False):
    d[ans] = rt.svd_complex_adjoint_tangent(g, d[g], res, d[res], a, d[a], full_matrices,
                                            compute_uv, hermitian)


@tangent(rt.cholesky_complex_adjoint)
def tan_cholesky_complex_adjoint(ans, g, factor, upper=False):
    d[ans] = rt.cholesky_complex_adjoint_tangent(d[g], d[factor], g, factor, upper)


# scipy.linalg's adjoints (runtime/linalg.py): a tuple (ga, gb) is one term
@tangent(rt.scipy_solve_adjoint)
def tan_scipy_solve_adjoint(ans, g, a, b, x, lower=False, assume_a=None, transposed=False):
    d[ans] = rt.scipy_solve_adjoint_tangent(d[g], d[a], d[x], g, a, b, x, lower, assume_a,
                                            transposed)


@tangent(rt.solve_triangular_adjoint)
def tan_solve_triangular_adjoint(ans, g, a, b, x, trans=0, lower=False, unit_diagonal=False):
    d[ans] = rt.solve_triangular_adjoint_tangent(d[g], d[a], d[x], g, a, b, x, trans, lower,
                                                 unit_diagonal)


@tangent(rt.lu_factor_adjoint)  # (its primal's result, ``ans``, renamed ``res``)
def tan_lu_factor_adjoint(ans, g, res, a):
    d[ans] = rt.lu_factor_adjoint_tangent(d[g], d[res], g, res, a)


@tangent(rt.lu_solve_adjoint)  # a tuple ((glu, 0), gb): one term
def tan_lu_solve_adjoint(ans, g, lu_and_piv, b, x, trans=0):
    d[ans] = rt.lu_solve_adjoint_tangent(d[g], d[lu_and_piv], d[x], g, lu_and_piv, b, x, trans)


@tangent(rt.scipy_cholesky_adjoint)
def tan_scipy_cholesky_adjoint(ans, g, factor, a, lower=False):
    d[ans] = rt.scipy_cholesky_adjoint_tangent(d[g], d[factor], g, factor, a, lower)


@tangent(rt.cho_factor_adjoint)
def tan_cho_factor_adjoint(ans, g, res, a):
    d[ans] = rt.cho_factor_adjoint_tangent(d[g], d[res], g, res, a)


@tangent(rt.cho_solve_adjoint)
def tan_cho_solve_adjoint(ans, g, c_and_lower, b, x):
    d[ans] = rt.cho_solve_adjoint_tangent(d[g], d[c_and_lower], d[x], g, c_and_lower, b, x)


@tangent(rt.scipy_inv_adjoint)
def tan_scipy_inv_adjoint(ans, g, res, a, assume_a=None):
    d[ans] = rt.scipy_inv_adjoint_tangent(d[g], d[res], g, res, a, assume_a)


@tangent(rt.matrix_function_adjoint)
def tan_matrix_function_adjoint(ans, g, res, a, name):
    d[ans] = rt.matrix_function_adjoint_tangent(d[g], d[a], g, res, a, name)


@tangent(rt.solve_banded_adjoint)
def tan_solve_banded_adjoint(ans, g, l_and_u, ab, b, x):
    d[ans] = rt.solve_banded_adjoint_tangent(d[g], d[ab], d[x], g, l_and_u, ab, b, x)


@tangent(rt.solveh_banded_adjoint)
def tan_solveh_banded_adjoint(ans, g, ab, b, x, lower=False):
    d[ans] = rt.solveh_banded_adjoint_tangent(d[g], d[ab], d[x], g, ab, b, x, lower)


@tangent(rt.scipy_eigh_adjoint)
def tan_scipy_eigh_adjoint(ans, g, res, a, b=None, lower=True, eigvals_only=False,
                           subset_by_index=None, subset_by_value=None):
    d[ans] = rt.scipy_eigh_adjoint_tangent(d[g], d[res], d[a], g, res, a, b, lower, eigvals_only,
                                           subset_by_index, subset_by_value)


@tangent(rt.scipy_qr_adjoint)
def tan_scipy_qr_adjoint(ans, g, res, a, mode="full", pivoting=False):
    d[ans] = rt.scipy_qr_adjoint_tangent(g, d[g], res, d[res], a, d[a], mode, pivoting)


@tangent(rt.unblock_diag)  # a gather: linear in g
def tan_unblock_diag(ans, g, index, arr1, arr2=None, arr3=None, arr4=None, arr5=None,
                     arr6=None):
    d[ans] = rt.unblock_diag(d[g], index, arr1, arr2, arr3, arr4, arr5, arr6)


@tangent(rt.toeplitz_adjoint)
def tan_toeplitz_adjoint(ans, g, c, r=None, wrt=0):
    d[ans] = rt.toeplitz_adjoint(d[g], c, r, wrt)


@tangent(rt.circulant_adjoint)
def tan_circulant_adjoint(ans, g, c):
    d[ans] = rt.circulant_adjoint(d[g], c)


@tangent(rt.scipy_det_adjoint)
def tan_scipy_det_adjoint(ans, g, a, res):
    d[ans] = rt.scipy_det_adjoint_tangent(g, d[g], d[a], d[res], a, res)


# --- tangents of the helpers of the reductions, shapes and special rules' adjoints (forward over
# reverse: hvp, hessian). A helper linear in g and reading its other arguments only for their
# shape, a mask, an index or a tie pattern (piecewise constant) has one term: itself on d[g].
# One that also reads primal values nonlinearly has a second term (rt.<helper>_tangent, next to it),
# or one term for everything when it returns a tuple (tuples of terms would not add up). A
# parameter named ``ans`` in the helper (its primal's result) is renamed ``res``: generated code
# passes it by position.

@tangent(rt.ungrouped)  # a gather: linear in g
def tan_ungrouped(ans, g, x):
    d[ans] = rt.ungrouped(d[g], x)


@tangent(rt.reduceat_grad)
def tan_reduceat_grad(ans, g, a, indices, axis=0):
    d[ans] = rt.reduceat_grad(d[g], a, indices, axis)


@tangent(rt.outer_grad)
def tan_outer_grad(ans, g, a, b, wrt=0, op="multiply"):
    d[ans] = rt.outer_grad(d[g], a, b, wrt, op)
    d[ans] = rt.outer_grad_tangent(g, d[a], d[b], a, b, wrt, op)


@tangent(rt.prod_grad)
def tan_prod_grad(ans, g, a, axis=None, keepdims=False):
    d[ans] = rt.prod_grad(d[g], a, axis, keepdims)
    d[ans] = rt.prod_grad_tangent(g, d[a], a, axis, keepdims)


@tangent(rt.nanprod_grad)
def tan_nanprod_grad(ans, g, a, axis=None, keepdims=False):
    d[ans] = rt.nanprod_grad(d[g], a, axis, keepdims)
    d[ans] = rt.nanprod_grad_tangent(g, d[a], a, axis, keepdims)


@tangent(rt.extremum_grad)  # a tie mask of a and res
def tan_extremum_grad(ans, g, a, res, axis=None, keepdims=False):
    d[ans] = rt.extremum_grad(d[g], a, res, axis, keepdims)


@tangent(rt.ptp_grad)
def tan_ptp_grad(ans, g, a, axis=None, keepdims=False):
    d[ans] = rt.ptp_grad(d[g], a, axis, keepdims)


@tangent(rt.nanmean_grad)
def tan_nanmean_grad(ans, g, a, axis=None, keepdims=False):
    d[ans] = rt.nanmean_grad(d[g], a, axis, keepdims)


@tangent(rt.var_grad)  # bilinear in g and a (centred)
def tan_var_grad(ans, g, a, axis=None, ddof=0, keepdims=False):
    d[ans] = rt.var_grad(d[g], a, axis, ddof, keepdims)
    d[ans] = rt.var_grad(g, d[a], axis, ddof, keepdims)


@tangent(rt.nanvar_grad)
def tan_nanvar_grad(ans, g, a, axis=None, ddof=0, keepdims=False):
    d[ans] = rt.nanvar_grad(d[g], a, axis, ddof, keepdims)
    d[ans] = rt.nanvar_grad_tangent(g, d[a], a, axis, ddof, keepdims)


@tangent(rt.average_grads)
def tan_average_grads(ans, g, a, res, axis=None, weights=None, returned=False, keepdims=False):
    d[ans] = rt.average_grads_tangent(g, d[g], a, d[a], res, d[res], axis, weights,
                                      d[weights], returned, keepdims)


@tangent(rt.cumsum_grad)
def tan_cumsum_grad(ans, g, a, axis=None):
    d[ans] = rt.cumsum_grad(d[g], a, axis)


@tangent(rt.cumprod_grad)
def tan_cumprod_grad(ans, g, a, res, axis=None):
    d[ans] = rt.cumprod_grad(d[g], a, res, axis)
    d[ans] = rt.cumprod_grad_tangent(g, d[a], d[res], a, res, axis)


@tangent(rt.nancumprod_grad)
def tan_nancumprod_grad(ans, g, a, res, axis=None):
    d[ans] = rt.nancumprod_grad(d[g], a, res, axis)
    d[ans] = rt.nancumprod_grad_tangent(g, d[a], d[res], a, res, axis)


@tangent(rt.diff_grads)
def tan_diff_grads(ans, g, a, n=1, axis=-1, prepend=None, append=None):
    d[ans] = rt.diff_grads(d[g], a, n, axis, prepend, append)


@tangent(rt.ediff1d_grads)
def tan_ediff1d_grads(ans, g, ary, to_end=None, to_begin=None):
    d[ans] = rt.ediff1d_grads(d[g], ary, to_end, to_begin)


@tangent(rt.gradient_grad)  # the spacing is constant (or refused)
def tan_gradient_grad(ans, g, f, spacing=(), axis=None, edge_order=1):
    d[ans] = rt.gradient_grad(d[g], f, spacing, axis, edge_order)


@tangent(rt.norm_grad)
def tan_norm_grad(ans, g, x, res, ord=None, axis=None, keepdims=False):
    d[ans] = rt.norm_grad(d[g], x, res, ord, axis, keepdims)
    d[ans] = rt.norm_grad_tangent(g, d[x], d[res], x, res, ord, axis, keepdims)


@tangent(rt.vector_norm_grad)
def tan_vector_norm_grad(ans, g, x, res, axis=None, keepdims=False, ord=2):
    d[ans] = rt.vector_norm_grad(d[g], x, res, axis, keepdims, ord)
    d[ans] = rt.vector_norm_grad_tangent(g, d[x], d[res], x, res, axis, keepdims, ord)


@tangent(rt.trapezoid_grads)
def tan_trapezoid_grads(ans, g, y, x=None, dx=1.0, axis=-1):
    d[ans] = rt.trapezoid_grads_tangent(g, d[g], y, d[y], x, d[x], dx, d[dx], axis)


@tangent(rt.simpson_grads)
def tan_simpson_grads(ans, g, y, x=None, dx=1.0, axis=-1):
    d[ans] = rt.simpson_grads_tangent(g, d[g], y, d[y], x, d[x], dx, d[dx], axis)


@tangent(rt.romb_grads)
def tan_romb_grads(ans, g, y, dx=1.0, axis=-1):
    d[ans] = rt.romb_grads_tangent(g, d[g], y, d[y], dx, d[dx], axis)


@tangent(rt.cumulative_trapezoid_grads)
def tan_cumulative_trapezoid_grads(ans, g, y, x=None, dx=1.0, axis=-1, initial=None):
    d[ans] = rt.cumulative_trapezoid_grads_tangent(g, d[g], y, d[y], x, d[x], dx, d[dx], axis,
                                                   initial)


@tangent(rt.quantile_grads)
def tan_quantile_grads(ans, g, a, q, axis=None, method="linear", keepdims=False, scale=1.0):
    d[ans] = rt.quantile_grads_tangent(g, d[g], a, d[a], q, d[q], axis, method,
                                       keepdims, scale)


@tangent(rt.cov_grads)
def tan_cov_grads(ans, g, m, y=None, rowvar=True, bias=False, ddof=None):
    d[ans] = rt.cov_grads_tangent(g, d[g], m, d[m], y, d[y], rowvar, bias, ddof)


@tangent(rt.corrcoef_grads)
def tan_corrcoef_grads(ans, g, x, res, y=None, rowvar=True):
    d[ans] = rt.corrcoef_grads_tangent(g, d[g], x, d[x], res, d[res], y, d[y], rowvar)


@tangent(rt.convolve_grads)
def tan_convolve_grads(ans, g, a, v, mode="full"):
    d[ans] = rt.convolve_grads_tangent(g, d[g], a, d[a], v, d[v], mode)


@tangent(rt.correlate_grads)
def tan_correlate_grads(ans, g, a, v, mode="valid"):
    d[ans] = rt.correlate_grads_tangent(g, d[g], a, d[a], v, d[v], mode)


@tangent(rt.interp_grads)  # xp is constant (or refused)
def tan_interp_grads(ans, g, x, xp, fp, left=None, right=None, period=None):
    d[ans] = rt.interp_grads_tangent(g, d[g], x, d[x], xp, fp, d[fp], left, right,
                                     period)


@tangent(rt.polyval_grads)
def tan_polyval_grads(ans, g, p, x):
    d[ans] = rt.polyval_grads_tangent(g, d[g], p, d[p], x, d[x])


@tangent(rt.cross_grads)
def tan_cross_grads(ans, g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[ans] = rt.cross_grads_tangent(g, d[g], a, d[a], b, d[b], axisa, axisb, axisc,
                                    axis)


# shapes: every helper moves, sums or drops elements of g (linear in g alone)

@tangent(rt.ungather)
def tan_ungather(ans, g, like, picked):
    d[ans] = rt.ungather(d[g], like, picked)


@tangent(rt.pow_slope)  # y * x ** (y - 1)
def tan_pow_slope(ans, x, y):
    d[ans] = d[x] * y * rt.pow_slope(x, y - 1)
    d[ans] = d[y] * rt.pow_slope_dy(x, y)


@tangent(rt.over_twice)  # g / (2 s), 0 where s == 0
def tan_over_twice(ans, g, s):
    d[ans] = rt.over_twice(d[g], s)
    d[ans] = -2.0 * rt.over_twice(ans * d[s], s)


@tangent(rt.unview)
def tan_unview(ans, g, a, dtype=None):
    d[ans] = rt.unview(d[g], a, dtype)


@tangent(rt.unindex_join)
def tan_unindex_join(ans, g, maker, items):
    d[ans] = rt.unindex_join(d[g], maker, items)


@tangent(rt.reshape_like)
def tan_reshape_like(ans, g, x):
    d[ans] = rt.reshape_like(d[g], x)


@tangent(rt.uncast)
def tan_uncast(ans, g, x, dtype=None):
    d[ans] = rt.uncast(d[g], x, dtype)


@tangent(rt.unarray)
def tan_unarray(ans, g, obj):
    d[ans] = rt.unarray(d[g], obj)


@tangent(rt.unjoin)
def tan_unjoin(ans, g, arrays, how):
    d[ans] = rt.unjoin(d[g], arrays, how)


@tangent(rt.unsplit)
def tan_unsplit(ans, g, pieces, axis=0):
    d[ans] = rt.unsplit(d[g], pieces, axis)


@tangent(rt.unblock)
def tan_unblock(ans, g, arrays):
    d[ans] = rt.unblock(d[g], arrays)


@tangent(rt.untile)
def tan_untile(ans, g, like, reps):
    d[ans] = rt.untile(d[g], like, reps)


@tangent(rt.unrollaxis)
def tan_unrollaxis(ans, g, ndim, axis, start=0):
    d[ans] = rt.unrollaxis(d[g], ndim, axis, start)


@tangent(rt.unselect)
def tan_unselect(ans, g, condlist, choicelist, default):
    d[ans] = rt.unselect(d[g], condlist, choicelist, default)


@tangent(rt.unpad)
def tan_unpad(ans, g, array, pad_width, mode, constant_values):
    d[ans] = rt.unpad(d[g], array, pad_width, mode, constant_values)


@tangent(rt.unpiecewise)
def tan_unpiecewise(ans, g, x, funclist):
    d[ans] = rt.unpiecewise(d[g], x, funclist)


@tangent(rt.unbroadcast_item)
def tan_unbroadcast_item(ans, g, i, like):
    d[ans] = rt.unbroadcast_item(d[g], i, like)


@tangent(rt.unappend_array)
def tan_shapes_unappend(ans, g, arr, values, axis=None):
    d[ans] = rt.unappend_array(d[g], arr, values, axis)


@tangent(rt.uninsert)
def tan_uninsert(ans, g, arr, obj, values, axis=None):
    d[ans] = rt.uninsert(d[g], arr, obj, values, axis)


# special: clip's and min/max's partials are g times tie masks

@tangent(rt.clip_partials)
def tan_clip_partials(ans, g, a, a_min=None, a_max=None, min=None, max=None):
    d[ans] = rt.clip_partials(d[g], a, a_min, a_max, min, max)


@tangent(rt.tie_split)
def tan_tie_split(ans, g, res, items, key=None):
    d[ans] = rt.tie_split(d[g], res, items, key)


@tangent(rt.default_partial)
def tan_default_partial(ans, g, items, default):
    d[ans] = rt.default_partial(d[g], items, default)


@tangent(rt.math_prod_grad)  # math.prod: multilinear in the items and start
def tan_math_prod_grad(ans, g, items, start=1):
    d[ans] = rt.math_prod_grad(d[g], items, start)
    d[ans] = rt.math_prod_grad_tangent(g, items, d[items], start, d[start])


@tangent(rt.dist_grad)
def tan_dist_grad(ans, g, p, q, res):
    d[ans] = rt.dist_grad(d[g], p, q, res)
    d[ans] = rt.dist_grad_tangent(g, d[p], d[q], d[res], p, q, res)


@tangent(rt.digamma)
def tan_digamma(ans, x):
    d[ans] = d[x] * rt.trigamma(x)


@tangent(rt.sinc_grad)
def tan_sinc_grad(ans, x):
    d[ans] = d[x] * rt.sinc_second(x)


# linalg: the decompositions' adjoints read the factors (and a) nonlinearly

@tangent(rt.svdvals_adjoint)
def tan_svdvals_adjoint(ans, g, a, hermitian=False):
    d[ans] = rt.svdvals_adjoint(d[g], a, hermitian)
    d[ans] = rt.svdvals_adjoint_tangent(g, d[a], a, hermitian)


@tangent(rt.svd_adjoint)
def tan_svd_adjoint(ans, g, res, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[ans] = rt.svd_adjoint_tangent(g, d[g], res, d[res], a, d[a], full_matrices,
                                            compute_uv, hermitian)


@tangent(rt.qr_adjoint)
def tan_qr_adjoint(ans, g, res, a, mode="reduced"):
    d[ans] = rt.qr_adjoint_tangent(g, d[g], res, d[res], a, d[a], mode)


@tangent(rt.lstsq_adjoint)
def tan_lstsq_adjoint(ans, g, a, b, res, wrt=0):
    d[ans] = rt.lstsq_adjoint_tangent(g, d[g], a, d[a], b, d[b], res, d[res], wrt)


# scipy.special functions that only adjoint templates call (derivatives of i0, j0, gammaln ...):
# the derivative in the argument; the order (exponent) must be constant, or the call raises.
try:
    import scipy.special as special
except ImportError:  # no SciPy: the rules that call these are not registered either
    special = None

if special is not None:

    @tangent(special.iv)
    def tan_iv(ans, v, z):
        d[ans] = rt.constant_only_tangent(d[v], "the order of scipy.special.iv")
        d[ans] = d[z] * 0.5 * (special.iv(v - 1.0, z) + special.iv(v + 1.0, z))

    @tangent(special.ive)  # iv(v, z) exp(-|z|)
    def tan_ive(ans, v, z):
        d[ans] = rt.constant_only_tangent(d[v], "the order of scipy.special.ive")
        d[ans] = d[z] * (0.5 * (special.ive(v - 1.0, z) + special.ive(v + 1.0, z))
                         - np.sign(z) * ans)

    @tangent(special.jv)
    def tan_jv(ans, v, z):
        d[ans] = rt.constant_only_tangent(d[v], "the order of scipy.special.jv")
        d[ans] = d[z] * 0.5 * (special.jv(v - 1.0, z) - special.jv(v + 1.0, z))

    @tangent(special.yv)
    def tan_yv(ans, v, z):
        d[ans] = rt.constant_only_tangent(d[v], "the order of scipy.special.yv")
        d[ans] = d[z] * 0.5 * (special.yv(v - 1.0, z) - special.yv(v + 1.0, z))

    @tangent(special.kv)
    def tan_kv(ans, v, z):
        d[ans] = rt.constant_only_tangent(d[v], "the order of scipy.special.kv")
        d[ans] = -d[z] * 0.5 * (special.kv(v - 1.0, z) + special.kv(v + 1.0, z))

    @tangent(special.zeta)  # Hurwitz zeta(x, q): d/dq = -x zeta(x + 1, q)
    def tan_zeta(ans, x, q=None):
        d[ans] = rt.constant_only_tangent(d[x], "the exponent of scipy.special.zeta")
        if q is not None:
            d[ans] = -d[q] * x * special.zeta(x + 1.0, q)


@tangent(rt.unfill)
def tan_unfill(ans, g, fill_value, like):
    d[ans] = rt.unfill(d[g], fill_value, like)


@tangent(rt.unlinspace)
def tan_unlinspace(ans, g, start, stop, num, endpoint, retstep, axis, like):
    d[ans] = rt.unlinspace(d[g], start, stop, num, endpoint, retstep, axis, like)


@tangent(rt.unarange)
def tan_unarange(ans, g, start, step, like):
    d[ans] = rt.unarange(d[g], start, step, like)


# --- the FFT adjoints (runtime/spectral.py): each the transpose of the other ------------------

@adjoint(rt.fitted)  # crops or pads: the transpose pads or crops back
def adj_fitted(ans, t, like):
    d[t] = rt.fitted(d[ans], t)


@tangent(rt.fitted)
def tan_fitted(ans, t, like):
    d[ans] = rt.fitted(d[t], like)


@adjoint(rt.unrfftn)  # the transpose of rfftn's adjoint is rfftn (on a complex gradient too)
def adj_unrfftn(ans, g, a, s=None, axes=None, norm=None):
    d[g] = rt.fitted(np.fft.fftn(d[ans], s, axes, norm), g)


@tangent(rt.unrfftn)
def tan_unrfftn(ans, g, a, s=None, axes=None, norm=None):
    d[ans] = rt.unrfftn(d[g], a, s, axes, norm)


@adjoint(rt.unirfftn)  # the transpose of irfftn's adjoint is irfftn
def adj_unirfftn(ans, g, c, s=None, axes=None, norm=None):
    d[g] = np.fft.irfftn(d[ans], s, axes, norm)


@tangent(rt.unirfftn)
def tan_unirfftn(ans, g, c, s=None, axes=None, norm=None):
    d[ans] = rt.unirfftn(d[g], c, s, axes, norm)


@adjoint(rt.complex_moduli)  # |x| (complex_rules.py: the norm of a complex value)
@adjoint(rt.complex_moduli, of_complex=True)
def adj_complex_moduli(ans, x, ord=None, axis=None):
    d[x] = d[ans] * np.conjugate(x) / np.where(ans == 0.0, 1.0, ans)


@tangent(rt.complex_moduli)
@tangent(rt.complex_moduli, of_complex=True)
def tan_complex_moduli(ans, x, ord=None, axis=None):
    d[ans] = np.real(np.conjugate(x) * d[x]) / np.where(ans == 0.0, 1.0, ans)


@adjoint(rt.unreal)  # the transpose of SciPy's real transform is the transform
def adj_unreal(ans, g, x, kind, type=2, s=None, axes=None, norm=None):
    d[g] = rt.real_transform(d[ans], x, kind, type, s, axes, norm)


@tangent(rt.unreal)
def tan_unreal(ans, g, x, kind, type=2, s=None, axes=None, norm=None):
    d[ans] = rt.unreal(d[g], x, kind, type, s, axes, norm)


@adjoint(rt.real_transform)
def adj_real_transform(ans, g, x, kind, type=2, s=None, axes=None, norm=None):
    d[g] = rt.unreal(d[ans], g, kind, type, s, axes, norm)


@tangent(rt.real_transform)
def tan_real_transform(ans, g, x, kind, type=2, s=None, axes=None, norm=None):
    d[ans] = rt.real_transform(d[g], x, kind, type, s, axes, norm)


@tangent(rt.put_grad)  # (linear in g: the positions and the repetition are constant)
def tan_put_grad(ans, g, a, ind, v, mode="raise"):
    d[ans] = rt.put_grad_tangent(d[g], g, a, ind, v, mode)


@tangent(rt.histogram_grad)
def tan_histogram_grad(ans, g, a, bins, range_, density, weights, result):
    d[ans] = rt.histogram_grad_tangent(d[g], d[weights], d[bins], d[result], g, a, bins,
                                       range_, density, weights, result)

