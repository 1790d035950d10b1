"""Specs of the linalg rules.

Decompositions get well-conditioned inputs built in the expression: ``a @ a.T + 3.0 * I`` is
symmetric positive definite, ``a + 3.0 * I`` (entries in (-1, 1)) is invertible. Eigen- and
singular vectors are only defined up to sign (NumPy fixes the phase of a complex one: ``eig``'s
largest component and ``eigh``'s first are real, and the rules follow it), so the specs contract
real ones into sign-invariant quantities (``v * v``, ``w[:, :1] @ vh[:1]`` ...; never name a
variable ``u``: the harness contracts array results with a covector of that name). Specs that
feed a matrix whose upper triangle differs from its lower one check that cholesky/eigh
differentiate the triangle NumPy reads.
"""

import numpy as np

from tests.rule_specs.common import OpSpec, newer

# functions of a newer Python or NumPy than the oldest supported (None where absent)
np_matrix_transpose = newer(np, "matrix_transpose")
np_vecdot = newer(np, "vecdot")
linalg_cross = newer(np.linalg, "cross")
linalg_diagonal = newer(np.linalg, "diagonal")
linalg_matmul = newer(np.linalg, "matmul")
linalg_matrix_transpose = newer(np.linalg, "matrix_transpose")
linalg_outer = newer(np.linalg, "outer")
linalg_svdvals = newer(np.linalg, "svdvals")
linalg_tensordot = newer(np.linalg, "tensordot")
linalg_trace = newer(np.linalg, "trace")
linalg_vecdot = newer(np.linalg, "vecdot")

UNIT = (-1.0, 1.0)
SPD = "s = a @ np.swapaxes(a, -1, -2) + 3.0 * np.eye(a.shape[-1]); "
# an SPD lower triangle under an unrelated upper one (NumPy reads only one triangle)
SPD_LOW = SPD + "s = np.tril(s) + np.triu(b, 1); "
SPD_UP = SPD + "s = np.triu(s) + np.tril(b, -1); "
# distinct, well separated eigenvalues (1, 3, 5, ...) in a random orthogonal basis
SPREAD = ("q = np.linalg.qr(b)[0]; s = q @ np.diag(2.0 * np.arange(3.0) + 1.0) "
          "@ np.swapaxes(q, -1, -2) + 0.1 * (a + np.swapaxes(a, -1, -2)); ")
INV = "m = a + 3.0 * np.eye(a.shape[-1]); "
W = "(0.6 - 0.8j)"  # a complex result is read as np.real(result * W)
# real eigenvalues near 0, 3 and 6 (Gershgorin discs apart), or a pair near +-2i
APART = "m = a + np.diag(3.0 * np.arange(a.shape[-1])); "
TURN = "m = 0.3 * a + np.array([[0.5, -2.0], [2.0, 0.0]]); "
# a Hermitian matrix with eigenvalues near 1, 3 and 5, and a Hermitian positive definite one
HERM = ("z = a + 1j * b; h = np.diag(2.0 * np.arange(3.0) + 1.0) "
        "+ 0.15 * (z + np.conj(np.swapaxes(z, -1, -2))); ")
HPD = "z = a + 1j * b; p = z @ np.conj(np.swapaxes(z, -1, -2)) + 3.0 * np.eye(3); "

SPECS: list = [
    # --- products and contractions ---------------------------------------------------------------
    OpSpec(np.vdot, "np.vdot(a, b)", 2, shapes=(
        ((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (6,)))),
    OpSpec(np.inner, "np.inner(a, b)", 2, shapes=(
        ((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (4, 3)),
        ((2, 3), (4, 3)), ((2, 4, 3), (5, 3)))),
    OpSpec(np.outer, "np.outer(a, b)", 2, shapes=(
        ((3,), (4,)), ((2, 3), (4,)), ((), (3,)), ((3,), (2, 2)))),
    OpSpec(linalg_outer, "np.linalg.outer(a, b)", 2, shapes=(((3,), (4,)),)),
    OpSpec(np.tensordot, "np.tensordot(a, b)", 2, shapes=(((4, 2, 3), (2, 3, 5)),)),
    OpSpec(np.tensordot, "np.tensordot(a, b, 1)", 2, shapes=(((2, 3), (3, 4)),)),
    OpSpec(np.tensordot, "np.tensordot(a, b, axes=0)", 2, shapes=(((2,), (3,)), ((), (3,)))),
    OpSpec(np.tensordot, "np.tensordot(a, b, axes=([1, 0], [0, 2]))", 2, shapes=(
        ((3, 2, 4), (2, 5, 3)),)),
    OpSpec(np.tensordot, "np.tensordot(a, b, axes=(-1, 1))", 2, shapes=(((2, 3), (4, 3)),)),
    OpSpec(np.tensordot, "np.tensordot(a, b, axes=[[2], [0]])", 2, shapes=(
        ((2, 3, 4), (4, 5)),)),
    OpSpec(linalg_tensordot, "np.linalg.tensordot(a, b)", 2, shapes=(
        ((4, 2, 3), (2, 3, 5)),)),
    OpSpec(linalg_tensordot, "np.linalg.tensordot(a, b, axes=((0,), (1,)))", 2, shapes=(
        ((3, 2), (4, 3)),)),
    OpSpec(linalg_matmul, "np.linalg.matmul(a, b)", 2, shapes=(
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
        ((2, 1, 2, 3), (3, 3, 4)))),
    OpSpec(linalg_vecdot, "np.linalg.vecdot(a, b)", 2, shapes=(
        ((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3)))),
    OpSpec(linalg_vecdot, "np.linalg.vecdot(a, b, axis=0)", 2, shapes=(
        ((3, 2), (3, 2)), ((3, 2), (3, 1)))),
    OpSpec(linalg_vecdot, "np.linalg.vecdot(a, b, axis=-2)", 2, shapes=(
        ((2, 4, 3), (4, 3)),)),
    OpSpec(np_vecdot, "np.vecdot(a, b)", 2, shapes=(((3,), (3,)), ((2, 3), (3,)))),
    OpSpec(np_vecdot, "np.vecdot(a, b, axis=0)", 2, shapes=(((3, 2), (3, 2)),)),
    OpSpec(np_vecdot, "np.vecdot(a, b, axis=-2, keepdims=True)", 2, shapes=(
        ((2, 4, 3), (4, 3)),)),
    OpSpec(np_vecdot, "np.vecdot(a, b, axes=[(0,), (1,)])", 2, shapes=(((3, 2), (2, 3)),)),
    OpSpec(linalg_cross, "np.linalg.cross(a, b)", 2, shapes=(
        ((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3)))),
    OpSpec(linalg_cross, "np.linalg.cross(a, b, axis=0)", 2, shapes=(((3, 2), (3, 2)),)),
    OpSpec(np.kron, "np.kron(a, b)", 2, shapes=(
        ((2,), (3,)), ((2, 3), (3, 2)), ((2, 3), (4,)), ((3,), (2, 2)), ((), (2, 3)),
        ((2, 1, 3), (2, 2)))),
    OpSpec(np.linalg.multi_dot, "np.linalg.multi_dot([a, b])", 2, shapes=(
        ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)))),
    OpSpec(np.linalg.multi_dot, "np.linalg.multi_dot([a, b, c, a.T])", 3, shapes=(
        ((2, 3), (3, 4), (4, 3)),)),
    OpSpec(np.linalg.multi_dot, "np.linalg.multi_dot((c, a, b, c))", 3, shapes=(
        ((3, 4), (4, 3), (3,)),)),
    OpSpec(np.linalg.multi_dot, "np.linalg.multi_dot(a)", 1, shapes=(((3, 2, 2),),)),

    # --- einsum ----------------------------------------------------------------------------------
    OpSpec(np.einsum, "np.einsum('ij,jk->ik', a, b)", 2, shapes=(((2, 3), (3, 4)),)),
    OpSpec(np.einsum, "np.einsum('ij,jk', a, b)", 2, shapes=(((2, 3), (3, 4)),)),
    OpSpec(np.einsum, "np.einsum('ba,ac', a, b)", 2, shapes=(((2, 3), (3, 4)),)),
    OpSpec(np.einsum, "np.einsum('aB', a)", 1, shapes=(((2, 3),),)),  # implicit order: 'Ba'
    OpSpec(np.einsum, "np.einsum('ij->ji', a)", 1, shapes=(((2, 3),),)),
    OpSpec(np.einsum, "np.einsum('ij->i', a)", 1, shapes=(((2, 3),),)),
    OpSpec(np.einsum, "np.einsum('ij->', a)", 1, shapes=(((2, 3),),)),
    OpSpec(np.einsum, "np.einsum('i,j->ij', a, b)", 2, shapes=(((2,), (3,)),)),
    OpSpec(np.einsum, "np.einsum('i,i', a, b)", 2, shapes=(((3,), (3,)), ((1,), (3,)))),
    OpSpec(np.einsum, "np.einsum('ij,ij->ij', a, b)", 2, shapes=(((1, 3), (2, 3)),)),
    OpSpec(np.einsum, "np.einsum('ii->', a)", 1, shapes=(((3, 3),),)),
    OpSpec(np.einsum, "np.einsum('ii', a)", 1, shapes=(((3, 3),),)),
    OpSpec(np.einsum, "np.einsum('ii->i', a)", 1, shapes=(((3, 3),),)),
    OpSpec(np.einsum, "np.einsum('iij->j', a)", 1, shapes=(((3, 3, 2),),)),
    OpSpec(np.einsum, "np.einsum('iji,j->ij', a, b)", 2, shapes=(((3, 2, 3), (2,)),)),
    OpSpec(np.einsum, "np.einsum('ii,i->i', a, b)", 2, shapes=(((3, 3), (3,)),)),
    OpSpec(np.einsum, "np.einsum('ij,jk,kl->il', a, b, c)", 3, shapes=(
        ((2, 3), (3, 4), (4, 2)),)),
    OpSpec(np.einsum, "np.einsum('ij,jk,kl->il', a, b, c, optimize=True)", 3, shapes=(
        ((2, 3), (3, 4), (4, 2)),)),
    OpSpec(np.einsum, "np.einsum('i,i,i', a, b, a)", 2, shapes=(((3,), (3,)),)),
    OpSpec(np.einsum, "np.einsum('i,j,k,i,j,k->', a, b, c, a, b, c)", 3, shapes=(
        ((2,), (3,), (2,)),)),
    OpSpec(np.einsum, "np.einsum('...ij,...jk->...ik', a, b)", 2, shapes=(
        ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)), ((2, 1, 2, 3),
                                                                           (3, 3, 4)))),
    OpSpec(np.einsum, "np.einsum('...ii->...i', a)", 1, shapes=(((2, 3, 3),),)),
    OpSpec(np.einsum, "np.einsum('i...,i->...', a, b)", 2, shapes=(((3, 2, 4), (3,)),)),
    OpSpec(np.einsum, "np.einsum('...i,...i', a, b)", 2, shapes=(((4, 1, 3), (2, 3)),)),
    OpSpec(np.einsum, "np.einsum('ij, j -> i', a, b)", 2, shapes=(((2, 3), (3,)),)),
    OpSpec(np.einsum, "np.einsum(',i->i', a, b)", 2, shapes=(((), (3,)),)),
    OpSpec(np.einsum, "np.einsum(a, [0, 1], b, [1, 2], [0, 2])", 2, shapes=(
        ((2, 3), (3, 4)),)),
    OpSpec(np.einsum, "np.einsum(a, [1, 30], b, [30, 0])", 2, shapes=(((2, 3), (3, 4)),)),
    OpSpec(np.einsum, "np.einsum(a, [Ellipsis, 0, 0], [Ellipsis, 0])", 1, shapes=(
        ((2, 3, 3),),)),

    # --- diagonals, traces, triangles, transposes ------------------------------------------------
    OpSpec(np.trace, "np.trace(a)", 1, shapes=(((3, 3),), ((2, 4),), ((3, 2, 4),))),
    OpSpec(np.trace, "np.trace(a, 1)", 1, shapes=(((3, 4),),)),
    OpSpec(np.trace, "np.trace(a, offset=-1, axis1=1, axis2=2)", 1, shapes=(((2, 3, 4),),)),
    OpSpec(np.trace, "np.trace(a, axis1=-1, axis2=0)", 1, shapes=(((3, 2, 4),),)),
    OpSpec(np.trace, "a.trace()", 1, shapes=(((3, 3),),)),
    OpSpec(linalg_trace, "np.linalg.trace(a)", 1, shapes=(((3, 3),), ((2, 3, 4),))),
    OpSpec(linalg_trace, "np.linalg.trace(a, offset=1)", 1, shapes=(((2, 3, 4),),)),
    OpSpec(np.diagonal, "np.diagonal(a)", 1, shapes=(((3, 3),), ((2, 4),), ((3, 2, 4),))),
    OpSpec(np.diagonal, "np.diagonal(a, -1)", 1, shapes=(((4, 3),),)),
    OpSpec(np.diagonal, "np.diagonal(a, offset=1, axis1=2, axis2=0)", 1, shapes=(
        ((3, 2, 4),),)),
    OpSpec(np.diagonal, "a.diagonal(1)", 1, shapes=(((3, 3),),)),
    OpSpec(linalg_diagonal, "np.linalg.diagonal(a)", 1, shapes=(((3, 3),), ((2, 3, 4),))),
    OpSpec(linalg_diagonal, "np.linalg.diagonal(a, offset=-1)", 1, shapes=(((2, 4, 3),),)),
    OpSpec(np.diag, "np.diag(a)", 1, shapes=(((3,),), ((3, 3),), ((2, 4),), ((4, 2),))),
    OpSpec(np.diag, "np.diag(a, 1)", 1, shapes=(((3,),), ((3, 4),))),
    OpSpec(np.diag, "np.diag(a, k=-2)", 1, shapes=(((2,),), ((4, 3),))),
    OpSpec(np.tril, "np.tril(a)", 1, shapes=(((3, 3),), ((2, 4),), ((2, 3, 3),), ((3,),))),
    OpSpec(np.tril, "np.tril(a, -1)", 1, shapes=(((3, 4),),)),
    OpSpec(np.tril, "np.tril(a, k=1)", 1, shapes=(((2, 4, 3),),)),
    OpSpec(np.triu, "np.triu(a)", 1, shapes=(((3, 3),), ((4, 2),), ((2, 3, 3),), ((3,),))),
    OpSpec(np.triu, "np.triu(a, 1)", 1, shapes=(((3, 4),),)),
    OpSpec(np.triu, "np.triu(a, k=-1)", 1, shapes=(((2, 4, 3),),)),
    OpSpec(linalg_matrix_transpose, "np.linalg.matrix_transpose(a)", 1, shapes=(
        ((2, 3),), ((4, 2, 3),))),
    OpSpec(np_matrix_transpose, "np.matrix_transpose(a)", 1, shapes=(((2, 3),), ((4, 2, 3),))),

    # --- solvers, inverses, determinants, powers -------------------------------------------------
    OpSpec(np.linalg.solve, INV + "np.linalg.solve(m, b)", 2, UNIT, shapes=(
        ((3, 3), (3,)), ((3, 3), (3, 2)), ((4, 3, 3), (4, 3, 2)),
        ((3, 3), (4, 3, 2)), ((2, 3, 3), (4, 1, 3, 2)))),
    OpSpec(np.linalg.solve, INV + "np.linalg.solve(m, b)", 2, UNIT, shapes=(  # a vector b
        ((4, 3, 3), (3,)),), numpy="2.0.0"),  # against a stack of matrices: NumPy 2's rule
    OpSpec(np.linalg.inv, INV + "np.linalg.inv(m)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.det, INV + "np.linalg.det(m)", 1, UNIT, shapes=(((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.det, "np.linalg.det(a)", 1, UNIT, shapes=(((1, 1),), ((2, 2),))),
    OpSpec(np.linalg.slogdet, INV + "sign, logdet = np.linalg.slogdet(m); logdet", 1, UNIT,
           shapes=(((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.slogdet, INV + "np.linalg.slogdet(-m)[1] * np.linalg.slogdet(m)[0]", 1,
           UNIT, shapes=(((3, 3),),)),
    OpSpec(np.linalg.matrix_power, "np.linalg.matrix_power(a, 3)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.matrix_power, "np.linalg.matrix_power(a, 1) + np.linalg.matrix_power(a, 0)",
           1, UNIT, shapes=(((3, 3),),)),
    OpSpec(np.linalg.matrix_power, INV + "np.linalg.matrix_power(m, -2)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.matrix_power, INV + "np.linalg.matrix_power(m, n=-1)", 1, UNIT, shapes=(
        ((3, 3),),)),
    OpSpec(np.linalg.pinv, "np.linalg.pinv(a)", 1, UNIT, shapes=(
        ((4, 3),), ((3, 4),), ((2, 4, 3),))),
    OpSpec(np.linalg.pinv, INV + "np.linalg.pinv(m)", 1, UNIT, shapes=(((3, 3),),)),
    OpSpec(np.linalg.pinv, "np.linalg.pinv(a, rtol=1e-10)", 1, UNIT, shapes=(((4, 3),),),
           numpy="2.0.0"),
    OpSpec(np.linalg.pinv, SPD_LOW + "np.linalg.pinv(s, hermitian=True)", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),)),
    OpSpec(np.linalg.lstsq, "np.linalg.lstsq(a, b)[0]", 2, UNIT, shapes=(
        ((4, 3), (4,)), ((4, 3), (4, 2)), ((3, 3), (3,)), ((2, 4), (2,)))),
    OpSpec(np.linalg.lstsq, "x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None); x", 2,
           UNIT, shapes=(((4, 3), (4, 2)),)),
    OpSpec(np.linalg.lstsq, "x, res, rank, sv = np.linalg.lstsq(a, b); res + np.sum(sv)", 2,
           UNIT, shapes=(((4, 3), (4, 2)), ((4, 3), (4,)))),

    # --- decompositions --------------------------------------------------------------------------
    OpSpec(np.linalg.cholesky, SPD + "np.linalg.cholesky(s)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.cholesky, SPD + "np.linalg.cholesky(s, upper=True)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),)), numpy="2.0.0"),
    OpSpec(np.linalg.cholesky, SPD_LOW + "np.linalg.cholesky(s)", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),)),
    OpSpec(np.linalg.cholesky, SPD_UP + "np.linalg.cholesky(s, upper=True)", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),), numpy="2.0.0"),
    OpSpec(np.linalg.eigh, SPREAD + "w, v = np.linalg.eigh(s); w", 2, UNIT, shapes=(
        ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.eigh, SPREAD + "w, v = np.linalg.eigh(s); v * v", 2, UNIT, shapes=(
        ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.eigh, SPREAD + "w, v = np.linalg.eigh(s); (v * w) @ v[:1].T", 2, UNIT,
           shapes=(((3, 3), (3, 3)),)),
    OpSpec(np.linalg.eigh, SPREAD + "w, v = np.linalg.eigh(s + np.triu(c, 1)); v * v + w", 3,
           UNIT, shapes=(((3, 3), (3, 3), (3, 3)),)),
    OpSpec(np.linalg.eigh, SPREAD + "w, v = np.linalg.eigh(s + np.tril(c, -1), UPLO='U'); "
           "v * v + w", 3, UNIT, shapes=(((3, 3), (3, 3), (3, 3)),)),
    OpSpec(np.linalg.eigh, SPD + "w, v = np.linalg.eigh(s + np.diag(np.arange(3.0) * 3.0)); "
           "np.abs(v) + w", 1, UNIT, shapes=(((3, 3),),)),
    OpSpec(np.linalg.eigh, SPD + "np.linalg.eigh(s + 4.0 * np.diag(np.arange(3.0)))[1] ** 2", 1,
           UNIT, shapes=(((2, 3, 3),),)),
    # equal eigenvalues: fine while only the values are used
    OpSpec(np.linalg.eigh, "np.linalg.eigh(np.sum(a) * np.eye(3))[0] * np.arange(3.0)", 1,
           shapes=(((2, 2),),)),
    OpSpec(np.linalg.eigvalsh, "np.linalg.eigvalsh(np.sum(a) * np.eye(3)) * np.arange(3.0)", 1,
           shapes=(((2, 2),),)),
    OpSpec(np.linalg.eigvalsh, SPD + "np.linalg.eigvalsh(s)", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.eigvalsh, SPD_LOW + "np.linalg.eigvalsh(s)", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),)),
    OpSpec(np.linalg.eigvalsh, SPD_UP + "np.linalg.eigvalsh(s, UPLO='U')", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),)),
    OpSpec(np.linalg.qr, "q, r = np.linalg.qr(a); q @ r", 1, UNIT, shapes=(
        ((3, 3),), ((4, 3),), ((2, 4, 3),), ((3, 4),), ((2, 3, 4),))),
    OpSpec(np.linalg.qr, "q, r = np.linalg.qr(a); (q * np.diag(r)) @ q.T + np.sum(r * r)", 1, UNIT,
           shapes=(((3, 3),), ((4, 3),))),
    OpSpec(np.linalg.qr, "q, r = np.linalg.qr(a); r[..., :2, :] * r[..., :2, :1] "
           "+ (q[..., :, :1] @ r[..., :1, :])[..., :2, :]", 1, UNIT, shapes=(
               ((2, 4, 3),), ((3, 4),))),
    OpSpec(np.linalg.qr, "np.linalg.qr(a, mode='r') ** 2", 1, UNIT, shapes=(
        ((4, 3),), ((3, 4),), ((2, 3, 3),))),
    OpSpec(np.linalg.qr, "q, r = np.linalg.qr(a, mode='complete'); (q * q) @ (r * r)", 1, UNIT,
           shapes=(((3, 3),), ((3, 4),))),
    OpSpec(np.linalg.svd, "np.linalg.svd(a, compute_uv=False)", 1, UNIT, shapes=(
        ((3, 3),), ((4, 3),), ((3, 4),), ((2, 4, 3),))),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a, full_matrices=False); "
           "w[..., :, :1] @ vh[..., :1, :] + w[..., :, 1:2] @ vh[..., 1:2, :] * 2.0", 1, UNIT,
           shapes=(((3, 3),), ((4, 3),), ((3, 4),), ((2, 4, 3),), ((2, 3, 4),))),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a); w[:, :1] @ vh[:1] + (w * w) @ s", 1,
           UNIT, shapes=(((3, 3),),)),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a, full_matrices=False); "
           "w * w @ s", 1, UNIT, shapes=(((4, 3),), ((3, 4),))),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a, full_matrices=False); "
           "s @ (vh * vh)", 1, UNIT, shapes=(((4, 3),), ((3, 4),))),
    OpSpec(np.linalg.svd, SPREAD + "np.linalg.svd(s - 3.5 * np.eye(3), compute_uv=False, "
           "hermitian=True)", 2, UNIT, shapes=(((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.svd, SPREAD + "np.linalg.svd(s + np.triu(c, 1) - 3.5 * np.eye(3), "
           "compute_uv=False, hermitian=True)", 3, UNIT, shapes=(((3, 3), (3, 3), (3, 3)),)),
    OpSpec(np.linalg.svd, "np.linalg.svd(np.sum(a) * np.eye(3, 4))[1] * np.arange(3.0)", 1,
           (0.5, 1.0), shapes=(((2, 2),),)),
    OpSpec(linalg_svdvals, "np.linalg.svdvals(a)", 1, UNIT, shapes=(
        ((3, 3),), ((4, 3),), ((3, 4),), ((2, 4, 3),))),

    # --- eig: complex results of a real matrix (read as np.real(result * W)) ------------------
    OpSpec(np.linalg.eigvals, APART + f"np.real(np.linalg.eigvals(m) * {W})", 1, UNIT, shapes=(
        ((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.eigvals, TURN + f"np.real(np.linalg.eigvals(m) * {W})", 1, UNIT, shapes=(
        ((2, 2),), ((3, 2, 2),))),
    OpSpec(np.linalg.eig, APART + "w, v = np.linalg.eig(m); "
           f"np.real(w[..., None, :] * {W} + v * v)", 1, UNIT, shapes=(((3, 3),), ((2, 3, 3),))),
    OpSpec(np.linalg.eig, TURN + "w, v = np.linalg.eig(m); "
           f"np.real(v * {W}) + np.imag(w)[..., None]", 1, UNIT, shapes=(((2, 2),), ((3, 2, 2),))),
    OpSpec(np.linalg.eig, TURN + "np.abs(np.linalg.eig(m)[1]) ** 2", 1, UNIT, shapes=(
        ((2, 2),),)),

    # --- complex matrices (z = a + 1j b: both directions of each element) ---------------------
    OpSpec(np.linalg.eigh, HERM + "w, v = np.linalg.eigh(h); w", 2, UNIT, shapes=(
        ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.eigh, HERM + f"w, v = np.linalg.eigh(h); np.real(v * {W}) "
           "+ np.abs(v) * w[..., None, :]", 2, UNIT, shapes=(
               ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.eigh, HERM + "w, v = np.linalg.eigh(h + 1j * np.tril(a, -1), UPLO='U'); "
           f"np.real(v * {W}) + w", 2, UNIT, shapes=(((3, 3), (3, 3)),)),
    OpSpec(np.linalg.eigvalsh, HERM + "np.linalg.eigvalsh(h + 1j * np.triu(b, 1))", 2, UNIT,
           shapes=(((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.eigvalsh, HERM + "np.linalg.eigvalsh(h, UPLO='U')", 2, UNIT, shapes=(
        ((3, 3), (3, 3)),)),
    OpSpec(np.linalg.cholesky, HPD + f"np.real(np.linalg.cholesky(p + 1j * np.triu(a, 1)) * {W})",
           2, UNIT, shapes=(((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.cholesky, HPD + f"np.real(np.linalg.cholesky(p, upper=True) * {W})", 2,
           UNIT, shapes=(((3, 3), (3, 3)),), numpy="2.0.0"),
    OpSpec(np.linalg.slogdet, "z = a + 1j * b + 3.0 * np.eye(3); sign, logdet = "
           f"np.linalg.slogdet(z); np.real(sign * {W}) + logdet", 2, UNIT, shapes=(
               ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.svd, "np.linalg.svd(a + 1j * b, compute_uv=False)", 2, UNIT, shapes=(
        ((3, 3), (3, 3)), ((4, 3), (4, 3)), ((2, 3, 4), (2, 3, 4)))),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a + 1j * b, full_matrices=False); "
           f"np.real((w[..., :, :1] @ vh[..., :1, :]) * {W}) + np.abs(w[..., :1, :]) ** 2 "
           "@ np.abs(vh) + s[..., :1, None]", 2, UNIT, shapes=(
               ((4, 3), (4, 3)), ((3, 4), (3, 4)), ((2, 4, 3), (2, 4, 3)))),
    OpSpec(np.linalg.svd, "w, s, vh = np.linalg.svd(a + 1j * b); "
           f"np.real((w * s) @ vh * {W})", 2, UNIT, shapes=(((3, 3), (3, 3)),)),
    OpSpec(linalg_svdvals, "np.linalg.svdvals(a + 1j * b)", 2, UNIT, shapes=(
        ((4, 3), (4, 3)),)),
    # (hermitian=True reads the lower triangle and the diagonal's real part: an unrelated upper
    # triangle and an imaginary diagonal are there to be ignored)
    OpSpec(np.linalg.svd, HERM + "np.linalg.svd(h - 2.5 * np.eye(3) + np.triu(a, 1) "
           "+ 1j * np.triu(b, 1) + 1j * a * np.eye(3), compute_uv=False, hermitian=True)", 2,
           UNIT, shapes=(
               ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.pinv, HPD + "np.real(np.linalg.pinv(p + np.triu(b, 1) - 1j * np.triu(a, 1), "
           f"hermitian=True) * {W})", 2, UNIT, shapes=(((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
    OpSpec(np.linalg.qr, f"q, r = np.linalg.qr(a + 1j * b); np.real(q * {W}) @ np.abs(r)", 2,
           UNIT, shapes=(((3, 3), (3, 3)), ((4, 3), (4, 3)), ((2, 4, 3), (2, 4, 3)))),
    OpSpec(np.linalg.qr, f"q, r = np.linalg.qr(a + 1j * b); np.real(r * {W}) + np.abs(q) @ "
           "np.abs(r)", 2, UNIT, shapes=(((3, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)))),
    OpSpec(np.linalg.qr, f"np.real(np.linalg.qr(a * np.exp(1j * b), mode='r') * {W})", 2, UNIT,
           shapes=(((4, 3), (4, 3)), ((3, 4), (3, 4)))),
    OpSpec(np.linalg.pinv, f"np.real(np.linalg.pinv(a + 1j * b) * {W})", 2, UNIT, shapes=(
        ((4, 3), (4, 3)), ((3, 4), (3, 4)), ((2, 4, 3), (2, 4, 3)))),
    OpSpec(np.linalg.lstsq, f"np.real(np.linalg.lstsq(a + 1j * b, b[:, 0] * 1j)[0] * {W})", 2,
           UNIT, shapes=(((4, 3), (4, 3)), ((3, 3), (3, 3)), ((2, 4), (2, 4)))),
    OpSpec(np.linalg.lstsq, "x, res, rank, sv = np.linalg.lstsq(a + 1j * b, b * np.exp(1j * a)); "
           f"np.real(x * {W}) + res + np.sum(sv)", 2, UNIT, shapes=(((4, 3), (4, 3)),)),
    OpSpec(np.linalg.lstsq, f"np.real(np.linalg.lstsq(a, np.exp(1j * b))[0] * {W})", 2, UNIT,
           shapes=(((4, 3), (4, 2)),)),
    OpSpec(np.linalg.eigvals, "z = a + 1j * b + np.diag(3.0 * np.arange(3.0)); "
           f"np.real(np.linalg.eigvals(z) * {W})", 2, UNIT, shapes=(((3, 3), (3, 3)),)),
    OpSpec(np.linalg.eig, "z = a + 1j * b + np.diag(3.0 * np.arange(3.0)); "
           f"w, v = np.linalg.eig(z); np.real((v + w[..., None, :]) * {W})", 2, UNIT, shapes=(
               ((3, 3), (3, 3)), ((2, 3, 3), (2, 3, 3)))),
]

FLOAT32: list = [
    ("np.einsum('ij,jk->ik', a, b)", ((2, 3), (3, 4))),
    ("np.einsum('ii->i', a)", ((3, 3),)),
    ("np.tensordot(a, b, axes=([1, 0], [0, 2]))", ((3, 2, 4), (2, 5, 3))),
    ("np.inner(a, b) + np.outer(a, b)", ((3,), (3,))),
    ("np.kron(a, b)", ((2, 3), (3, 2))),
    ("np.trace(a) + np.sum(np.diag(a)) + np.sum(np.tril(a) * np.triu(a))", ((3, 3),)),
    ("np.linalg.solve(a + 3.0 * np.eye(3, dtype=a.dtype), b)", ((3, 3), (3, 2))),
    ("np.linalg.inv(a + 3.0 * np.eye(3, dtype=a.dtype))", ((3, 3),)),
    ("np.linalg.det(a + 3.0 * np.eye(3, dtype=a.dtype))", ((2, 3, 3),)),
    ("np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3, dtype=a.dtype))", ((3, 3),)),
    ("np.linalg.eigvalsh(a @ a.T)", ((3, 3),)),
    ("np.linalg.svd(a, compute_uv=False)", ((4, 3),)),
    ("np.linalg.matrix_power(a, 3)", ((3, 3),)),
    ("np.linalg.multi_dot([a, b, a.T])", ((2, 3), (3, 3))),
    ("np.linalg.vecdot(a, b) + np.linalg.trace(a * b)", ((3, 3), (3, 3))),
    ("np.linalg.slogdet(a + 3.0 * np.eye(3, dtype=a.dtype))[1]", ((3, 3),)),
    ("w, v = np.linalg.eigh(a + a.T + np.diag(np.arange(3, dtype=a.dtype) * 3.0)); v * v + w",
     ((3, 3),)),
    ("q, r = np.linalg.qr(a); q @ r + r[0, 0]", ((4, 3),)),
    ("w, s, vh = np.linalg.svd(a, full_matrices=False); w[:, :1] @ vh[:1] + s[0]", ((4, 3),)),
    ("np.linalg.pinv(a)", ((4, 3),)),
    ("np.linalg.lstsq(a, b)[0]", ((4, 3), (4,))),
    ("np.einsum('ij,jk,kl->il', a, b, a)", ((2, 3), (3, 2))),
]
