"""Specs of the scipy.sparse rules (none without SciPy): ``SPARSE_SPECS``, a table of its own,
since these rules live in their own table (``SPARSE_ADJOINTS``, taken where a value may be
sparse). Every case makes its matrix from the dense arguments (its data) and returns a dense
value, so the finite differences move the data and the matrix with it.
"""

from __future__ import annotations

import operator

import gast

from tests.rule_specs.common import OpSpec
from transpiler.rules.registry import SparseMethod

try:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
except ImportError:
    sp = spla = None

UNIT = (-1.0, 1.0)
# a tridiagonal matrix of five unknowns from the data a (diagonally dominant)
TRI = "A = sp.diags([a[1:], a + 4.0, a[:-1]], [-1, 0, 1], format='csr'); "
TRI_VEC = (((5,), (5,)), ((5,), (5, 2)))
# symmetric: the same data on both off-diagonals
TRI_SYM = "A = sp.diags([a[1:], a + 4.0, a[1:]], [-1, 0, 1], format='csr'); "
SPD = "s = a @ a.T + 3.0 * np.eye(3); "
SHIFTED = "m = a + 3.0 * np.eye(3); "
SQ = (((3, 3), (3,)),)
# six entries at coordinates with a duplicate ((0, 0) twice) and an off-diagonal pair
COORDS = "([0, 1, 2, 3, 0, 2], [0, 1, 2, 3, 0, 3])"
DATA_VEC = (((6,), (4,)), ((6,), (4, 2)))

# a diagonal 3 x 3 block and a 3 x 2 one from two values
BLOCKS = "A = sp.diags(a, 0); B = sp.csr_matrix((b, ([0, 2], [1, 0])), shape=(3, 2)); "
BLOCK_ARGS = (((3,), (2,)),)

OPERATOR = ("op = spla.aslinearoperator(sp.diags([np.ones(2), np.arange(2.0, 5.0)], [1, 0])); ")

SPARSE_SPECS: list = []
SPECS: list = []

if sp is not None:
    SPARSE_SPECS = [
        # --- made from data ---
        OpSpec(sp.csr_matrix, f"sp.csr_matrix((a, {COORDS}), shape=(4, 4)) @ b", 2, UNIT,
               shapes=DATA_VEC),
        OpSpec(sp.csc_matrix, f"sp.csc_matrix((a, {COORDS}), shape=(4, 4)) @ b", 2, UNIT,
               shapes=DATA_VEC),
        OpSpec(sp.coo_matrix, f"sp.coo_matrix((a, {COORDS}), shape=(4, 4)) @ b", 2, UNIT,
               shapes=DATA_VEC),
        OpSpec(sp.csr_array, f"sp.csr_array((a, {COORDS}), shape=(4, 4)) @ b", 2, UNIT,
               shapes=DATA_VEC),
        OpSpec(sp.csc_array, f"sp.csc_array((a, {COORDS}), shape=(4, 4)) @ b", 2, UNIT,
               shapes=DATA_VEC),
        OpSpec(sp.coo_array, f"sp.coo_array((a, {COORDS})).toarray()", 1, UNIT,
               shapes=(((6,),),)),
        OpSpec(sp.csr_matrix, "sp.csr_matrix((a, [0, 2, 1, 0, 3], [0, 2, 3, 5]), "
               "shape=(3, 4)) @ b", 2, UNIT, shapes=(((5,), (4,)),)),
        OpSpec(sp.csc_matrix, "sp.csc_matrix((a, [0, 2, 1, 0, 2], [0, 2, 3, 5]), "
               "shape=(3, 3)) @ b", 2, UNIT, shapes=(((5,), (3,)),)),
        OpSpec(sp.csr_matrix, "sp.csr_matrix(a) @ b", 2, UNIT, shapes=(((3, 4), (4,)),)),
        OpSpec(sp.csr_matrix, "B = sp.csr_matrix(a); sp.csr_matrix(B).toarray()", 1, UNIT,
               shapes=(((3, 4),),)),
        OpSpec(sp.diags, TRI + "A @ b", 2, UNIT, shapes=TRI_VEC),
        OpSpec(sp.diags, "sp.diags(a, 1) @ b", 2, UNIT, shapes=(((3,), (4,)),)),
        OpSpec(sp.diags, "sp.diags((a, b), (0, -2)).toarray()", 2, UNIT,
               shapes=(((4,), (2,)),)),
        OpSpec(sp.diags, "sp.diags([a, 2.0 * a, b], [-1, 0, 1], shape=(3, 3)) @ np.ones(3)", 2,
               UNIT, shapes=(((), ()),)),
        OpSpec(sp.spdiags, "sp.spdiags(a, [0, -1, 2], 4, 4) @ b", 2, UNIT,
               shapes=(((3, 4), (4,)),)),
        # --- matrices made of matrices ---
        OpSpec(sp.hstack, BLOCKS + "sp.hstack([A, B]) @ np.arange(5.0)", 2, UNIT,
               shapes=BLOCK_ARGS),
        OpSpec(sp.hstack, BLOCKS + "sp.hstack((A, np.outer(a, b))).toarray()", 2, UNIT,
               shapes=BLOCK_ARGS),
        OpSpec(sp.vstack, BLOCKS + "sp.vstack([A, B.T]) @ np.arange(3.0)", 2, UNIT,
               shapes=BLOCK_ARGS),
        OpSpec(sp.bmat, BLOCKS + "sp.bmat([[A, None], [B.T, sp.diags(b, 0)]]) @ "
               "np.arange(5.0)", 2, UNIT, shapes=BLOCK_ARGS),
        OpSpec(sp.block_diag, BLOCKS + "sp.block_diag((A, sp.diags(b, 0))) @ np.arange(5.0)",
               2, UNIT, shapes=BLOCK_ARGS),
        OpSpec(sp.kron, "sp.kron(sp.diags(a, 0), sp.csr_matrix(np.outer(b, b) + 1.0)) @ "
               "np.arange(4.0)", 2, UNIT, shapes=(((2,), (2,)),)),
        OpSpec(sp.kron, "sp.kron(np.outer(a, a), sp.diags(b, 1), format='csr').toarray()", 2,
               UNIT, shapes=(((2,), (2,)),)),
        # --- products ---
        OpSpec(gast.MatMult, TRI + "b @ A", 2, UNIT,
               shapes=(((5,), (5,)), ((5,), (3, 5)))),
        OpSpec(SparseMethod("dot"), TRI + "A.dot(b)", 2, UNIT, shapes=TRI_VEC),
        # two sparse matrices: each factor's gradient read where the product may be nonzero
        OpSpec(gast.MatMult, TRI + "B = sp.csr_matrix((b, ([0, 1, 3, 4], [1, 0, 1, 0])), "
               "shape=(5, 2)); (A @ B).toarray() + (B.T @ A.T @ A).toarray().T", 2,
               UNIT, shapes=(((5,), (4,)),)),
        OpSpec(SparseMethod("dot"), TRI + "(A.dot(A.T) @ sp.diags(b, 0)) @ np.arange(5.0)", 2,
               UNIT, shapes=TRI_VEC[:1]),
        # a LinearOperator of constants: its products, not its entries, are differentiated
        OpSpec(SparseMethod("matvec"), OPERATOR + "op.matvec(a * b) + op @ a", 2,
               UNIT, shapes=(((3,), (3,)),)),
        OpSpec(SparseMethod("matmat"), OPERATOR + "op.matmat(np.outer(a, b)) + op.T @ "
               "np.outer(a, b)", 2, UNIT, shapes=(((3,), (2,)),)),
        OpSpec(gast.Mult, TRI + "(A * b) @ np.arange(5.0)", 2, UNIT,
               shapes=(((5,), ()),)),
        OpSpec(gast.Mult, TRI + "(b * A.T) @ np.arange(5.0)", 2, UNIT,
               shapes=(((5,), ()),)),
        OpSpec(gast.Mult, TRI + "(A * b).sum(axis=0)", 2, UNIT, shapes=(((5,), (5, 2)),)),
        OpSpec(gast.Mult, "A = sp.csr_array(sp.diags(a, 0)); (A * b).toarray()",
               2, UNIT, shapes=(((3,), (3, 3)), ((3,), (3,)))),
        OpSpec(gast.Div, TRI + "(A / b) @ np.arange(5.0)", 2, (UNIT, (0.5, 2.0)),
               shapes=(((5,), ()),)),
        OpSpec(gast.Add, TRI + "B = sp.diags(b, 1, shape=(5, 5)); (A + B) @ a",
               2, UNIT, shapes=(((5,), (4,)),)),
        OpSpec(gast.Sub, TRI + "B = sp.diags(b, 1, shape=(5, 5)); (A - B) @ a",
               2, UNIT, shapes=(((5,), (4,)),)),
        OpSpec(gast.USub, TRI + "(-A) @ b", 2, UNIT, shapes=(((5,), (5,)),)),
        # --- methods ---
        OpSpec(SparseMethod("T"), TRI + "A.T @ b", 2, UNIT, shapes=TRI_VEC),
        OpSpec(SparseMethod("transpose"), TRI + "A.transpose() @ b", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("toarray"), TRI + "A.toarray() * b", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("tocsr"), "A = sp.coo_matrix((a, ([0, 1, 0], [0, 1, 0]))); "
               "A.tocsr() @ b", 2, UNIT, shapes=(((3,), (2,)),)),
        OpSpec(SparseMethod("tocsc"), TRI + "A.tocsc() @ b", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("tocoo"), TRI + "A.tocoo() @ b", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("copy"), TRI + "A.copy() @ b", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("asformat"), TRI + "A.asformat('coo') @ b", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("multiply"), TRI + "A.multiply(b).toarray()", 2, UNIT,
               shapes=(((5,), (5,)), ((5,), (5, 5)), ((5,), (5, 1)))),
        OpSpec(SparseMethod("sum"), TRI + "A.sum() * b", 2, UNIT, shapes=(((5,), ()),)),
        OpSpec(SparseMethod("sum"), "A = sp.csr_array(sp.diags([a[1:], a], [1, 0])); "
               "A.sum(axis=0) * b", 2, UNIT, shapes=(((4,), (4,)),)),
        OpSpec(SparseMethod("sum"), "A = sp.csr_array(sp.diags([a[1:], a], [1, 0])); "
               "A.sum(axis=1) * b", 2, UNIT, shapes=(((4,), (4,)),)),
        OpSpec(SparseMethod("diagonal"), TRI + "A.diagonal() * b", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("diagonal"), TRI + "A.diagonal(1) * b + A.diagonal(-1)", 2, UNIT,
               shapes=(((5,), (4,)),)),
        OpSpec(operator.getitem, TRI + "A[1:-1, 1:4] @ b", 2, UNIT, shapes=(((5,), (3,)),)),
        OpSpec(operator.getitem, TRI + "A[::2] @ b", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(operator.getitem, TRI + "A[[0, 2, 2, 4]][:, [4, 1, 0]] @ b", 2, UNIT,
               shapes=(((5,), (3,)),)),
        OpSpec(operator.getitem, TRI + "A[:, np.array([True, False, True, True, False])] @ b",
               2, UNIT, shapes=(((5,), (3,)),)),
        # entries (numbers: an off-diagonal, a diagonal one twice, by a negative index, one
        # not stored), a row of a *_matrix (a 1 x n matrix)
        OpSpec(operator.getitem, TRI + "A[1, 2] * b + A[3, 3] * A[-2, 3] - A[0, 4]", 2, UNIT,
               shapes=(((5,), ()), ((5,), (3,)))),
        OpSpec(operator.getitem, f"A = sp.csc_array((a, {COORDS}), shape=(4, 4)); "
               "A[0, 0] * b + A[2, 3]", 2, UNIT, shapes=(((6,), (2,)),)),
        OpSpec(operator.getitem, TRI + "A[2, :] @ b + A[:, 1].sum()", 2, UNIT,
               shapes=(((5,), (5,)),)),
        # --- writes (an assembly): entries added to and overwritten, one written zero (stored
        # as nothing, yet its value has a gradient), a row and a column, paired integer arrays
        # with a repeated entry (its last write kept), a lil and dok matrix and array, a csr
        OpSpec(operator.setitem, "A = sp.lil_matrix(sp.diags(a + 4.0, 0)); A[0, 1] += a[2]; "
               "A[1, 0] = a[3] * b[0]; A[2, 3] = 0.0 * a[1] * b[1]; A[3, 3] += a[0] ** 2; "
               "A[1, 0] -= b[2]; spla.spsolve(A.tocsr(), b)", 2, UNIT, shapes=(((4,), (4,)),)),
        OpSpec(operator.setitem, "A = sp.dok_matrix((4, 4)); A[1, :] = a; "
               "A[:, 2] = b[:, None] * 2.0; A[3, 1] -= b[2]; A[0, 0] = 3.0; "
               "A[3, 3] = a[0] * b[1]; A.tocsr() @ b", 2, UNIT,
               shapes=(((4,), (4,)),)),
        OpSpec(operator.setitem, "A = sp.lil_array((3, 4)); "
               "A[[0, 0, 2, 1], [1, 1, 3, 0]] = a * b; A[1:, ::2] = b[0]; A.toarray()", 2, UNIT,
               shapes=(((4,), (4,)),)),
        OpSpec(operator.setitem, TRI + "A[0, 4] = a[1] * b[0]; A[2, 2] = b[1]; "
               "spla.spsolve(A.tocsc(), b)", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(operator.setitem, "A = sp.dok_array((3, 3)); A[1, 2] = a[0]; A[0, 1] += a[1]; "
               "A[2, 0] = a[0] * a[1]; (A @ b).sum() + A.diagonal(1).sum()", 2, UNIT,
               shapes=(((2,), (3,)),)),
        # made to be written into: from a dense array or a sparse matrix, or a change of format
        OpSpec(sp.lil_matrix, "A = sp.lil_matrix(np.outer(a, a) + 3.0 * np.eye(3)); "
               "A[0, 1] = b[0]; A.tocsr() @ b", 2, UNIT, shapes=(((3,), (3,)),)),
        OpSpec(sp.dok_matrix, "sp.dok_matrix(sp.diags([a[1:], a], [1, 0])) @ b", 2, UNIT,
               shapes=(((3,), (3,)),)),
        OpSpec(sp.lil_array, "A = sp.lil_array(sp.diags(a, 0).tocsr()); A[2, 0] += b[1]; "
               "A @ b", 2, UNIT, shapes=(((3,), (3,)),)),
        OpSpec(sp.dok_array, "sp.dok_array(np.diag(a)).tocsc() @ b", 2, UNIT,
               shapes=(((3,), (3,)),)),
        OpSpec(SparseMethod("tolil"), TRI + "A = A.tolil(); A[0, 0] = b[1] * b[2]; A @ b", 2,
               UNIT, shapes=(((5,), (5,)),)),
        OpSpec(SparseMethod("todok"), TRI + "A = A.todok(); A[4, 0] -= a[0]; A.T @ b", 2,
               UNIT, shapes=(((5,), (5,)),)),
        # --- solves ---
        OpSpec(spla.spsolve, TRI + "spla.spsolve(A, b)", 2, UNIT, shapes=TRI_VEC),
        OpSpec(spla.spsolve, TRI + "spla.spsolve(A.tocsc(), b)", 2, UNIT,
               shapes=(((5,), (5, 1)),)),
        OpSpec(spla.splu, TRI + "lu = spla.splu(A.tocsc()); lu.solve(b)", 2, UNIT,
               shapes=TRI_VEC),
        OpSpec(SparseMethod("solve"), TRI + "lu = spla.splu(A.tocsc()); lu.solve(b, trans='T') "
               "+ lu.solve(b * b)", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(spla.factorized, TRI + "solve = spla.factorized(A.tocsc()); solve(b)", 2,
               UNIT, shapes=TRI_VEC),
        OpSpec(SparseMethod("__call__"), TRI + "solve = spla.factorized(A.tocsc()); "
               "solve(b) + solve(b * b)", 2, UNIT, shapes=(((5,), (5,)),)),
        # the iterative solvers, converged far below the finite differences' error
        OpSpec(spla.cg, TRI_SYM + "spla.cg(A, b, rtol=1e-13)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.cg, TRI_SYM + "spla.cg(A, b, x0=b, rtol=1e-13, M=sp.diags(1.0 / (a + 4.0)))"
               "[0]", 2, UNIT, shapes=(((5,), (5,)),)),
        OpSpec(spla.minres, TRI_SYM + "spla.minres(A, b, rtol=1e-13, shift=0.5)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.gmres, TRI + "spla.gmres(A, b, rtol=1e-13, atol=0.0, restart=3)[0]", 2,
               UNIT, shapes=(((5,), (5,)),)),
        OpSpec(spla.bicgstab, TRI + "spla.bicgstab(A, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.lgmres, TRI + "spla.lgmres(A, b, rtol=1e-13, atol=0.0, inner_m=3)[0]", 2,
               UNIT, shapes=(((5,), (5,)),)),
        OpSpec(spla.gcrotmk, TRI + "spla.gcrotmk(A, b, rtol=1e-13, atol=0.0, m=3)[0]", 2,
               UNIT, shapes=(((5,), (5,)),)),
        OpSpec(spla.bicg, TRI + "spla.bicg(A, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.cgs, TRI + "spla.cgs(A, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.tfqmr, TRI + "spla.tfqmr(A, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        OpSpec(spla.qmr, TRI + "spla.qmr(A, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
        # the exponential's action: of a sparse A (its gradient a quadrature at the data), of
        # a vector and of a matrix
        OpSpec(spla.expm_multiply, TRI + "spla.expm_multiply(0.3 * A, b)", 2, UNIT,
               shapes=TRI_VEC),
        OpSpec(spla.expm_multiply, TRI + "spla.expm_multiply(-2.0 * A, b, traceA=-2.0 * "
               "np.sum(a + 4.0))", 2, UNIT, shapes=(((5,), (5,)),)),
        # on a grid of times (its ends differentiated too)
        OpSpec(spla.expm_multiply, TRI + "spla.expm_multiply(0.3 * A, b, start=0.05 * (1.0 + c), "
               "stop=0.6 + 0.2 * c, num=4)", 3, UNIT,
               shapes=(((5,), (5,), ()), ((5,), (5, 2), ()))),
        OpSpec(spla.expm_multiply, TRI + "spla.expm_multiply(A, b, start=0.0, stop=0.5 + 0.1 * c, "
               "num=3, endpoint=False)", 3, UNIT, shapes=(((5,), (5,), ()),)),
        # left and right preconditioners (of a LinearOperator, as qmr needs), transposed and
        # swapped for the transposed system
        OpSpec(spla.qmr, TRI + "spla.qmr(A, b, rtol=1e-13, atol=0.0, M1=spla.aslinearoperator("
               "sp.diags([np.full(4, 0.1), np.full(5, 0.3)], [1, 0])), M2=spla.aslinearoperator("
               "sp.diags([np.full(4, -0.2), np.ones(5)], [-1, 0])))[0]", 2, UNIT,
               shapes=(((5,), (5,)),)),
    ]
    # the iterative solvers of a dense matrix (the dense table's rules)
    SPECS = [
        OpSpec(spla.cg, SPD + "spla.cg(s, b, rtol=1e-13)[0]", 2, UNIT, shapes=SQ),
        OpSpec(spla.minres, SPD + "spla.minres(s, b, rtol=1e-13)[0]", 2, UNIT, shapes=SQ),
        OpSpec(spla.gmres, SHIFTED + "spla.gmres(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.bicgstab, SHIFTED + "spla.bicgstab(m, b, rtol=1e-13, atol=0.0)[0]", 2,
               UNIT, shapes=SQ),
        OpSpec(spla.lgmres, SHIFTED + "spla.lgmres(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.gcrotmk, SHIFTED + "spla.gcrotmk(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.bicg, SHIFTED + "spla.bicg(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.cgs, SHIFTED + "spla.cgs(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.tfqmr, SHIFTED + "spla.tfqmr(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.qmr, SHIFTED + "spla.qmr(m, b, rtol=1e-13, atol=0.0)[0]", 2, UNIT,
               shapes=SQ),
        OpSpec(spla.expm_multiply, "spla.expm_multiply(0.5 * a, b)", 2, UNIT,
               shapes=(((3, 3), (3,)), ((3, 3), (3, 2)))),
        OpSpec(spla.expm_multiply, "spla.expm_multiply(0.5 * a, b, start=0.0, stop=0.5 + 0.25 * c, "
               "num=3)", 3, UNIT, shapes=(((3, 3), (3,), ()), ((3, 3), (3, 2), ()))),
    ]
    if hasattr(sp, "diags_array"):
        SPARSE_SPECS.append(OpSpec(sp.diags_array, "sp.diags_array([a, b], offsets=[0, 1]) "
                                   "@ np.arange(3.0)", 2, UNIT, shapes=(((3,), (2,)),)))
