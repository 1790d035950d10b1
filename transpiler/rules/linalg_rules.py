"""Adjoints of NumPy linear algebra: products, contractions, decompositions and solvers.

``np.dot`` and ``np.matmul`` live in numpy_rules and operator_rules. Matrices may be stacked
(leading batch axes) wherever NumPy allows it. Functions that read one triangle of a symmetric
matrix (cholesky, eigh, eigvalsh) get the gradient of that triangle: the other one is unread.
"""

import numpy as np

import runtime as rt
from transpiler.rules.registry import adjoint, d

# --- products and contractions ------------------------------------------------------------------

@adjoint(np.vdot)
def adj_vdot(ans, a, b, /):
    d[a] = np.reshape(d[ans] * b, np.shape(a))
    d[b] = np.reshape(d[ans] * a, np.shape(b))


@adjoint(np.inner)
def adj_inner(ans, a, b, /):
    d[a] = rt.linalg.inner_adjoint(d[ans], a, b, 0)
    d[b] = rt.linalg.inner_adjoint(d[ans], a, b, 1)


@adjoint(np.outer)
def adj_outer(ans, a, b, out=None):
    d[a] = np.reshape(d[ans] @ np.ravel(b), np.shape(a))
    d[b] = np.reshape(np.ravel(a) @ d[ans], np.shape(b))


@adjoint(np.linalg.outer)
def adj_linalg_outer(ans, x1, x2, /):
    d[x1] = d[ans] @ x2
    d[x2] = x1 @ d[ans]


@adjoint(np.tensordot)
def adj_tensordot(ans, a, b, axes=2):
    d[a] = rt.linalg.tensordot_adjoint(d[ans], a, b, axes, 0)
    d[b] = rt.linalg.tensordot_adjoint(d[ans], a, b, axes, 1)


@adjoint(np.linalg.tensordot)
def adj_linalg_tensordot(ans, x1, x2, /, *, axes=2):
    d[x1] = rt.linalg.tensordot_adjoint(d[ans], x1, x2, axes, 0)
    d[x2] = rt.linalg.tensordot_adjoint(d[ans], x1, x2, axes, 1)


@adjoint(np.linalg.matmul)
def adj_linalg_matmul(ans, x1, x2, /):
    d[x1] = rt.matmul_adjoint_a(d[ans], x1, x2)
    d[x2] = rt.matmul_adjoint_b(d[ans], x1, x2)


@adjoint(np.linalg.vecdot)
def adj_linalg_vecdot(ans, x1, x2, /, *, axis=-1):
    d[x1] = rt.linalg.vecdot_adjoint(d[ans], x1, x2, 0, axis)
    d[x2] = rt.linalg.vecdot_adjoint(d[ans], x1, x2, 1, axis)


@adjoint(np.vecdot)
def adj_vecdot(ans, x1, x2, /, out=None, *, axes=None, axis=None, keepdims=False,
               casting="same_kind", order="K", dtype=None, subok=True, signature=None):
    d[x1] = rt.linalg.vecdot_adjoint(d[ans], x1, x2, 0, axis, keepdims, axes)
    d[x2] = rt.linalg.vecdot_adjoint(d[ans], x1, x2, 1, axis, keepdims, axes)


@adjoint(np.linalg.cross)
def adj_linalg_cross(ans, x1, x2, /, *, axis=-1):
    # g . (x1 x x2) = x1 . (x2 x g) = x2 . (g x x1)
    d[x1] = rt.unbroadcast(np.linalg.cross(x2, d[ans], axis=axis), x1)
    d[x2] = rt.unbroadcast(np.linalg.cross(d[ans], x1, axis=axis), x2)


@adjoint(np.kron)
def adj_kron(ans, a, b):
    d[a] = rt.linalg.kron_adjoint(d[ans], a, b, 0)
    d[b] = rt.linalg.kron_adjoint(d[ans], a, b, 1)


@adjoint(np.linalg.multi_dot)
def adj_multi_dot(ans, arrays, *, out=None):
    d[arrays] = rt.linalg.multi_dot_adjoint(d[ans], arrays)


# np.einsum(*operands) as fixed slots: a rule cannot take *args. The first slot is the subscripts
# string (or, in the interleaved form, the first operand).
@adjoint(np.einsum)
def adj_einsum(ans, subscripts, x0=None, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
               x7=None, x8=None, x9=None, x10=None, x11=None, *, out=None, optimize=False,
               dtype=None, order="K", casting="safe"):
    # the adjoint of each operand is an einsum of d[ans] with the others
    args = (subscripts, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)
    d[subscripts] = rt.linalg.einsum_adjoint(d[ans], 0, args, optimize)
    d[x0] = rt.linalg.einsum_adjoint(d[ans], 1, args, optimize)
    d[x1] = rt.linalg.einsum_adjoint(d[ans], 2, args, optimize)
    d[x2] = rt.linalg.einsum_adjoint(d[ans], 3, args, optimize)
    d[x3] = rt.linalg.einsum_adjoint(d[ans], 4, args, optimize)
    d[x4] = rt.linalg.einsum_adjoint(d[ans], 5, args, optimize)
    d[x5] = rt.linalg.einsum_adjoint(d[ans], 6, args, optimize)
    d[x6] = rt.linalg.einsum_adjoint(d[ans], 7, args, optimize)
    d[x7] = rt.linalg.einsum_adjoint(d[ans], 8, args, optimize)
    d[x8] = rt.linalg.einsum_adjoint(d[ans], 9, args, optimize)
    d[x9] = rt.linalg.einsum_adjoint(d[ans], 10, args, optimize)
    d[x10] = rt.linalg.einsum_adjoint(d[ans], 11, args, optimize)
    d[x11] = rt.linalg.einsum_adjoint(d[ans], 12, args, optimize)


# --- diagonals, traces, triangles, transposes ---------------------------------------------------

@adjoint(np.trace)
def adj_trace(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = rt.linalg.untrace(d[ans], a, offset, axis1, axis2)


@adjoint(np.linalg.trace)
def adj_linalg_trace(ans, x, /, *, offset=0, dtype=None):
    d[x] = rt.linalg.untrace(d[ans], x, offset, -2, -1)


@adjoint(np.diagonal)
def adj_diagonal(ans, a, offset=0, axis1=0, axis2=1):
    d[a] = rt.linalg.undiagonal(d[ans], a, offset, axis1, axis2)


@adjoint(np.linalg.diagonal)
def adj_linalg_diagonal(ans, x, /, *, offset=0):
    d[x] = rt.linalg.undiagonal(d[ans], x, offset, -2, -1)


@adjoint(np.diag)
def adj_diag(ans, v, k=0):
    d[v] = rt.linalg.diag_adjoint(d[ans], v, k)


@adjoint(np.tril)
def adj_tril(ans, m, k=0):
    d[m] = rt.unbroadcast(np.tril(d[ans], k), m)  # a 1-D m is broadcast to rows


@adjoint(np.triu)
def adj_triu(ans, m, k=0):
    d[m] = rt.unbroadcast(np.triu(d[ans], k), m)


@adjoint(np.linalg.matrix_transpose, np.matrix_transpose)
def adj_matrix_transpose(ans, x, /):
    d[x] = np.swapaxes(d[ans], -1, -2)


# --- solvers, inverses, determinants, powers ----------------------------------------------------

@adjoint(np.linalg.solve)
def adj_solve(ans, a, b):
    ga, gb = rt.linalg.solve_adjoint(d[ans], a, b, ans)
    d[a] = ga
    d[b] = gb


@adjoint(np.linalg.inv)
def adj_inv(ans, a):
    d[a] = -np.swapaxes(ans, -1, -2) @ d[ans] @ np.swapaxes(ans, -1, -2)


@adjoint(np.linalg.det)
def adj_det(ans, a):
    d[a] = rt.linalg.det_adjoint(d[ans], a, ans)


@adjoint(np.linalg.slogdet)
def adj_slogdet(ans, a):
    d[a] = rt.linalg.slogdet_adjoint(d[ans], a)


@adjoint(np.linalg.matrix_power)
def adj_matrix_power(ans, a, n):
    d[a] = rt.linalg.matrix_power_adjoint(d[ans], a, n)


@adjoint(np.linalg.pinv)
def adj_pinv(ans, a, rcond=None, hermitian=False, *, rtol=None):
    d[a] = rt.linalg.pinv_adjoint(d[ans], a, ans, hermitian, rcond, rtol)


@adjoint(np.linalg.lstsq)
def adj_lstsq(ans, a, b, rcond=None):
    d[a] = rt.linalg.lstsq_adjoint(d[ans], a, b, ans, 0)
    d[b] = rt.linalg.lstsq_adjoint(d[ans], a, b, ans, 1)


# --- decompositions -----------------------------------------------------------------------------

@adjoint(np.linalg.cholesky)
def adj_cholesky(ans, a, /, *, upper=False):
    d[a] = rt.linalg.cholesky_adjoint(d[ans], ans, upper)


@adjoint(np.linalg.eigh)
def adj_eigh(ans, a, UPLO="L"):
    d[a] = rt.linalg.eigh_adjoint(d[ans], ans, UPLO)


@adjoint(np.linalg.eigvalsh)
def adj_eigvalsh(ans, a, UPLO="L"):
    d[a] = rt.linalg.eigvalsh_adjoint(d[ans], a, UPLO)


@adjoint(np.linalg.qr)
def adj_qr(ans, a, mode="reduced"):
    d[a] = rt.linalg.qr_adjoint(d[ans], ans, a, mode)


@adjoint(np.linalg.svd)
def adj_svd(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] = rt.linalg.svd_adjoint(d[ans], ans, a, full_matrices, compute_uv, hermitian)


@adjoint(np.linalg.svdvals)
def adj_svdvals(ans, x, /):
    d[x] = rt.linalg.svdvals_adjoint(d[ans], x)
