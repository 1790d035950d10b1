"""Adjoints of NumPy linear algebra: products, contractions, decompositions and solvers.

``np.dot`` and ``np.matmul`` live in numpy_rules and operator_rules. Matrices may be stacked
(leading batch axes) wherever NumPy allows it. Functions that read one triangle of a symmetric
matrix (cholesky, eigh, eigvalsh) get the gradient of that triangle: the other one is unread.
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d, since, tangent

# --- products and contractions ------------------------------------------------------------------

@adjoint(np.vdot)
def adj_vdot(ans, a, b, /):
    d[a] = np.reshape(d[ans] * b, np.shape(a))
    d[b] = np.reshape(d[ans] * a, np.shape(b))


@tangent(np.vdot)
def tan_vdot(ans, a, b, /):
    d[ans] = np.vdot(d[a], b)
    d[ans] = np.vdot(a, d[b])


@adjoint(np.inner)
def adj_inner(ans, a, b, /):
    d[a] = rt.inner_adjoint(d[ans], a, b, 0)
    d[b] = rt.inner_adjoint(d[ans], a, b, 1)


@tangent(np.inner)
def tan_inner(ans, a, b, /):
    d[ans] = np.inner(d[a], b)
    d[ans] = np.inner(a, d[b])


@adjoint(np.outer)
def adj_outer(ans, a, b, out=None):
    d[a] = np.reshape(d[ans] @ np.ravel(b), np.shape(a))
    d[b] = np.reshape(np.ravel(a) @ d[ans], np.shape(b))


@tangent(np.outer)
def tan_outer(ans, a, b, out=None):
    d[ans] = np.outer(d[a], b)
    d[ans] = np.outer(a, d[b])


@adjoint(since(np.linalg, "outer", "NumPy 2.0"))
def adj_linalg_outer(ans, x1, x2, /):
    d[x1] = d[ans] @ x2
    d[x2] = x1 @ d[ans]


@tangent(since(np.linalg, "outer", "NumPy 2.0"))
def tan_linalg_outer(ans, x1, x2, /):
    d[ans] = np.linalg.outer(d[x1], x2)
    d[ans] = np.linalg.outer(x1, d[x2])


@adjoint(np.tensordot)
def adj_tensordot(ans, a, b, axes=2):
    d[a] = rt.tensordot_adjoint(d[ans], a, b, axes, 0)
    d[b] = rt.tensordot_adjoint(d[ans], a, b, axes, 1)


@tangent(np.tensordot)
def tan_tensordot(ans, a, b, axes=2):
    d[ans] = np.tensordot(d[a], b, axes)
    d[ans] = np.tensordot(a, d[b], axes)


@adjoint(since(np.linalg, "tensordot", "NumPy 2.0"))
def adj_linalg_tensordot(ans, x1, x2, /, *, axes=2):
    d[x1] = rt.tensordot_adjoint(d[ans], x1, x2, axes, 0)
    d[x2] = rt.tensordot_adjoint(d[ans], x1, x2, axes, 1)


@tangent(since(np.linalg, "tensordot", "NumPy 2.0"))
def tan_linalg_tensordot(ans, x1, x2, /, *, axes=2):
    d[ans] = np.linalg.tensordot(d[x1], x2, axes=axes)
    d[ans] = np.linalg.tensordot(x1, d[x2], axes=axes)


@adjoint(since(np.linalg, "matmul", "NumPy 2.0"))
def adj_linalg_matmul(ans, x1, x2, /):
    d[x1] = rt.matmul_adjoint_a(d[ans], x1, x2)
    d[x2] = rt.matmul_adjoint_b(d[ans], x1, x2)


@tangent(since(np.linalg, "matmul", "NumPy 2.0"))
def tan_linalg_matmul(ans, x1, x2, /):
    d[ans] = np.linalg.matmul(d[x1], x2)
    d[ans] = np.linalg.matmul(x1, d[x2])


@adjoint(since(np.linalg, "vecdot", "NumPy 2.0"))
def adj_linalg_vecdot(ans, x1, x2, /, *, axis=-1):
    d[x1] = rt.vecdot_adjoint(d[ans], x1, x2, 0, axis)
    d[x2] = rt.vecdot_adjoint(d[ans], x1, x2, 1, axis)


@tangent(since(np.linalg, "vecdot", "NumPy 2.0"))
def tan_linalg_vecdot(ans, x1, x2, /, *, axis=-1):
    d[ans] = np.linalg.vecdot(d[x1], x2, axis=axis)
    d[ans] = np.linalg.vecdot(x1, d[x2], axis=axis)


@adjoint(since(np, "vecdot", "NumPy 2.0"))
def adj_vecdot(ans, x1, x2, /, out=None, *, axes=None, axis=None, keepdims=False,
               casting="same_kind", order="K", dtype=None, subok=True, signature=None):
    d[x1] = rt.vecdot_adjoint(d[ans], x1, x2, 0, axis, keepdims, axes)
    d[x2] = rt.vecdot_adjoint(d[ans], x1, x2, 1, axis, keepdims, axes)


@tangent(since(np, "vecdot", "NumPy 2.0"))
def tan_vecdot(ans, x1, x2, /, out=None, *, axes=None, axis=None, keepdims=False,
               casting="same_kind", order="K", dtype=None, subok=True, signature=None):
    d[ans] = rt.vecdot_tangent(d[x1], x2, axis, keepdims, axes, dtype)
    d[ans] = rt.vecdot_tangent(x1, d[x2], axis, keepdims, axes, dtype)


@adjoint(since(np.linalg, "cross", "NumPy 2.0"))
def adj_linalg_cross(ans, x1, x2, /, *, axis=-1):
    # g . (x1 x x2) = x1 . (x2 x g) = x2 . (g x x1)
    d[x1] = rt.unbroadcast(np.linalg.cross(x2, d[ans], axis=axis), x1)
    d[x2] = rt.unbroadcast(np.linalg.cross(d[ans], x1, axis=axis), x2)


@tangent(since(np.linalg, "cross", "NumPy 2.0"))
def tan_linalg_cross(ans, x1, x2, /, *, axis=-1):
    d[ans] = np.linalg.cross(d[x1], x2, axis=axis)
    d[ans] = np.linalg.cross(x1, d[x2], axis=axis)


@adjoint(np.kron)
def adj_kron(ans, a, b):
    d[a] = rt.kron_adjoint(d[ans], a, b, 0)
    d[b] = rt.kron_adjoint(d[ans], a, b, 1)


@tangent(np.kron)
def tan_kron(ans, a, b):
    d[ans] = np.kron(d[a], b)
    d[ans] = np.kron(a, d[b])


@adjoint(np.linalg.multi_dot)
def adj_multi_dot(ans, arrays, *, out=None):
    d[arrays] = rt.multi_dot_adjoint(d[ans], arrays)


@tangent(np.linalg.multi_dot)
def tan_multi_dot(ans, arrays, *, out=None):
    d[ans] = rt.multi_dot_tangent(d[arrays], arrays, ans)


# np.einsum(*operands) as fixed slots: a rule cannot take *args. The first slot is the subscripts
# string (or, in the interleaved form, the first operand).
@adjoint(np.einsum)
def adj_einsum(ans, subscripts, x0=None, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
               x7=None, x8=None, x9=None, x10=None, x11=None, *, out=None, optimize=False,
               dtype=None, order="K", casting="safe"):
    # the adjoint of each operand is an einsum of d[ans] with the others
    args = (subscripts, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)
    d[subscripts] = rt.einsum_adjoint(d[ans], 0, args, optimize)
    d[x0] = rt.einsum_adjoint(d[ans], 1, args, optimize)
    d[x1] = rt.einsum_adjoint(d[ans], 2, args, optimize)
    d[x2] = rt.einsum_adjoint(d[ans], 3, args, optimize)
    d[x3] = rt.einsum_adjoint(d[ans], 4, args, optimize)
    d[x4] = rt.einsum_adjoint(d[ans], 5, args, optimize)
    d[x5] = rt.einsum_adjoint(d[ans], 6, args, optimize)
    d[x6] = rt.einsum_adjoint(d[ans], 7, args, optimize)
    d[x7] = rt.einsum_adjoint(d[ans], 8, args, optimize)
    d[x8] = rt.einsum_adjoint(d[ans], 9, args, optimize)
    d[x9] = rt.einsum_adjoint(d[ans], 10, args, optimize)
    d[x10] = rt.einsum_adjoint(d[ans], 11, args, optimize)
    d[x11] = rt.einsum_adjoint(d[ans], 12, args, optimize)


@tangent(np.einsum)
def tan_einsum(ans, subscripts, x0=None, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
               x7=None, x8=None, x9=None, x10=None, x11=None, *, out=None, optimize=False,
               dtype=None, order="K", casting="safe"):
    # one term per operand: the einsum with that operand replaced by its tangent
    args = (subscripts, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)
    d[ans] = rt.einsum_tangent(d[subscripts], 0, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x0], 1, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x1], 2, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x2], 3, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x3], 4, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x4], 5, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x5], 6, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x6], 7, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x7], 8, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x8], 9, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x9], 10, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x10], 11, args, optimize, dtype)
    d[ans] = rt.einsum_tangent(d[x11], 12, args, optimize, dtype)


# --- diagonals, traces, triangles, transposes ---------------------------------------------------

@adjoint(np.trace)
def adj_trace(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = rt.untrace(d[ans], a, offset, axis1, axis2)


@tangent(np.trace)
def tan_trace(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[ans] = np.trace(d[a], offset, axis1, axis2, dtype)


@adjoint(since(np.linalg, "trace", "NumPy 2.0"))
def adj_linalg_trace(ans, x, /, *, offset=0, dtype=None):
    d[x] = rt.untrace(d[ans], x, offset, -2, -1)


@tangent(since(np.linalg, "trace", "NumPy 2.0"))
def tan_linalg_trace(ans, x, /, *, offset=0, dtype=None):
    d[ans] = np.linalg.trace(d[x], offset=offset, dtype=dtype)


@adjoint(np.diagonal)
def adj_diagonal(ans, a, offset=0, axis1=0, axis2=1):
    d[a] = rt.undiagonal(d[ans], a, offset, axis1, axis2)


@tangent(np.diagonal)
def tan_diagonal(ans, a, offset=0, axis1=0, axis2=1):
    d[ans] = np.diagonal(d[a], offset, axis1, axis2)


@adjoint(since(np.linalg, "diagonal", "NumPy 2.0"))
def adj_linalg_diagonal(ans, x, /, *, offset=0):
    d[x] = rt.undiagonal(d[ans], x, offset, -2, -1)


@tangent(since(np.linalg, "diagonal", "NumPy 2.0"))
def tan_linalg_diagonal(ans, x, /, *, offset=0):
    d[ans] = np.linalg.diagonal(d[x], offset=offset)


@adjoint(np.diag)
def adj_diag(ans, v, k=0):
    d[v] = rt.diag_adjoint(d[ans], v, k)


@tangent(np.diag)
def tan_diag(ans, v, k=0):
    d[ans] = np.diag(d[v], k)


@adjoint(np.tril)
def adj_tril(ans, m, k=0):
    d[m] = rt.unbroadcast(np.tril(d[ans], k), m)  # a 1-D m is broadcast to rows


@tangent(np.tril)
def tan_tril(ans, m, k=0):
    d[ans] = np.tril(d[m], k)  # a 1-D m gives the same rows as its tangent


@adjoint(np.triu)
def adj_triu(ans, m, k=0):
    d[m] = rt.unbroadcast(np.triu(d[ans], k), m)


@tangent(np.triu)
def tan_triu(ans, m, k=0):
    d[ans] = np.triu(d[m], k)


@adjoint(since(np.linalg, "matrix_transpose", "NumPy 2.0"),
         since(np, "matrix_transpose", "NumPy 2.0"))
def adj_matrix_transpose(ans, x, /):
    d[x] = np.swapaxes(d[ans], -1, -2)


@tangent(since(np.linalg, "matrix_transpose", "NumPy 2.0"),
         since(np, "matrix_transpose", "NumPy 2.0"))
def tan_matrix_transpose(ans, x, /):
    d[ans] = np.swapaxes(d[x], -1, -2)


# --- solvers, inverses, determinants, powers ----------------------------------------------------

@adjoint(np.linalg.solve)
def adj_solve(ans, a, b):
    ga, gb = rt.solve_adjoint(d[ans], a, b, ans)
    d[a] = ga
    d[b] = gb


@tangent(np.linalg.solve)
def tan_solve(ans, a, b):
    # dx = a^-1 (db - da x)
    d[ans] = rt.solve_tangent_a(d[a], a, b, ans)
    d[ans] = np.linalg.solve(a, d[b])


@adjoint(np.linalg.inv)
def adj_inv(ans, a):
    d[a] = -np.swapaxes(ans, -1, -2) @ d[ans] @ np.swapaxes(ans, -1, -2)


@tangent(np.linalg.inv)
def tan_inv(ans, a):
    d[ans] = -ans @ d[a] @ ans


@adjoint(np.linalg.det)
def adj_det(ans, a):
    d[a] = rt.det_adjoint(d[ans], a, ans)


@tangent(np.linalg.det)
def tan_det(ans, a):
    d[ans] = rt.det_tangent(d[a], a, ans)


@adjoint(np.linalg.slogdet)
def adj_slogdet(ans, a):
    d[a] = rt.slogdet_adjoint(d[ans], a)


@tangent(np.linalg.slogdet)
def tan_slogdet(ans, a):
    d[ans] = rt.slogdet_tangent(d[a], a, ans)


@adjoint(np.linalg.matrix_power)
def adj_matrix_power(ans, a, n):
    d[a] = rt.matrix_power_adjoint(d[ans], a, n)


@tangent(np.linalg.matrix_power)
def tan_matrix_power(ans, a, n):
    d[ans] = rt.matrix_power_tangent(d[a], a, n, ans)


@adjoint(np.linalg.pinv)
def adj_pinv(ans, a, rcond=None, hermitian=False, *, rtol=None):
    d[a] = rt.pinv_adjoint(d[ans], a, ans, hermitian, rcond, rtol)


@tangent(np.linalg.pinv)
def tan_pinv(ans, a, rcond=None, hermitian=False, *, rtol=None):
    d[ans] = rt.pinv_tangent(d[a], a, ans, hermitian, rcond, rtol)


@adjoint(np.linalg.lstsq)
def adj_lstsq(ans, a, b, rcond=None):
    d[a] = rt.lstsq_adjoint(d[ans], a, b, ans, 0)
    d[b] = rt.lstsq_adjoint(d[ans], a, b, ans, 1)


@tangent(np.linalg.lstsq)
def tan_lstsq(ans, a, b, rcond=None):
    # one term for both arguments: the result is a tuple
    d[ans] = rt.lstsq_tangent(d[a], d[b], a, b, ans)


# --- decompositions -----------------------------------------------------------------------------

@adjoint(np.linalg.cholesky)
def adj_cholesky(ans, a, /, *, upper=False):
    d[a] = rt.cholesky_adjoint(d[ans], ans, upper)


@tangent(np.linalg.cholesky)
def tan_cholesky(ans, a, /, *, upper=False):
    d[ans] = rt.cholesky_tangent(d[a], ans, upper)


@adjoint(np.linalg.eigh)
def adj_eigh(ans, a, UPLO="L"):
    d[a] = rt.eigh_adjoint(d[ans], ans, UPLO)


@tangent(np.linalg.eigh)
def tan_eigh(ans, a, UPLO="L"):
    d[ans] = rt.eigh_tangent(d[a], ans, UPLO)


@adjoint(np.linalg.eigvalsh)
def adj_eigvalsh(ans, a, UPLO="L"):
    d[a] = rt.eigvalsh_adjoint(d[ans], a, UPLO)


@tangent(np.linalg.eigvalsh)
def tan_eigvalsh(ans, a, UPLO="L"):
    d[ans] = rt.eigvalsh_tangent(d[a], a, UPLO)


@adjoint(np.linalg.qr)
def adj_qr(ans, a, mode="reduced"):
    d[a] = rt.qr_adjoint(d[ans], ans, a, mode)


@tangent(np.linalg.qr)
def tan_qr(ans, a, mode="reduced"):
    d[ans] = rt.qr_tangent(d[a], ans, a, mode)


@adjoint(np.linalg.svd)
def adj_svd(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] = rt.svd_adjoint(d[ans], ans, a, full_matrices, compute_uv, hermitian)


@tangent(np.linalg.svd)
def tan_svd(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[ans] = rt.svd_tangent(d[a], ans, a, full_matrices, compute_uv, hermitian)


@adjoint(since(np.linalg, "svdvals", "NumPy 2.0"))
def adj_svdvals(ans, x, /):
    d[x] = rt.svdvals_adjoint(d[ans], x)


@tangent(since(np.linalg, "svdvals", "NumPy 2.0"))
def tan_svdvals(ans, x, /):
    d[ans] = rt.svdvals_tangent(d[x], x)
