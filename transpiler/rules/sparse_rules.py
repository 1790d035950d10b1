"""Sparse matrices: the rules of ``scipy.sparse`` values, taken where an operand or the result of
an operation may be one (``facts.sparse``, passes/check_kinds.py), and nowhere else.

A sparse matrix's gradient lives on its data: a ``runtime.sparse.SparseGrad``, read by the rule
of the call that made the matrix (``csr_matrix((data, (rows, cols)))``, ``diags``) at the
coordinates of its data, so the gradient of ``data`` has the data's shape and the matrix is
never made dense. The products are the transposed products (``A @ x``: ``A.T @ g`` for ``x``, the
outer product ``g x^T`` read at the data for ``A``) and the solve is one transposed solve
(``spsolve``: ``lam = spsolve(A.T, g)``). A tangent of a sparse matrix is a sparse matrix (the
same call with the data's tangent), so SciPy's products and solves are the tangent rules. An
operation on a sparse value that has no rule here is refused at its line (passes/lower.py).

``*`` of a ``*_matrix`` is a matrix product, of a ``*_array`` an elementwise one; the runtime
tells them apart when it runs. Methods are keyed by name (``SparseMethod("toarray")``).
"""

import operator

import gast

import runtime as rt
from transpiler.rules.registry import UNDIFFERENTIATED, SparseMethod, adjoint, d, tangent

try:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
except ImportError:  # no SciPy: no rules
    sp = None

if sp is not None:
    MADE = tuple(getattr(sp, name) for name in (
        "csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array",
        "lil_matrix", "dok_matrix", "lil_array", "dok_array")
        if hasattr(sp, name))

    @adjoint(*MADE, of_sparse=True)
    def adj_sparse_made(ans, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        d[arg1] = rt.sparse_made_adjoint(d[ans], arg1, ans)

    @tangent(*MADE, of_sparse=True)
    def tan_sparse_made(ans, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        d[ans] = rt.sparse_made_tangent(d[arg1], arg1, ans)

    @adjoint(sp.diags, of_sparse=True)
    def adj_diags(ans, diagonals, offsets=0, shape=None, format=None, dtype=None):
        d[diagonals] = rt.diags_adjoint(d[ans], diagonals, offsets, ans)

    @tangent(sp.diags, of_sparse=True)
    def tan_diags(ans, diagonals, offsets=0, shape=None, format=None, dtype=None):
        d[ans] = rt.diags_tangent(d[diagonals], diagonals, offsets, ans)

    if hasattr(sp, "diags_array"):
        @adjoint(sp.diags_array, of_sparse=True)
        def adj_diags_array(ans, diagonals, /, *, offsets=0, shape=None, format=None,
                            dtype=None):
            d[diagonals] = rt.diags_adjoint(d[ans], diagonals, offsets, ans)

        @tangent(sp.diags_array, of_sparse=True)
        def tan_diags_array(ans, diagonals, /, *, offsets=0, shape=None, format=None,
                            dtype=None):
            d[ans] = rt.diags_tangent(d[diagonals], diagonals, offsets, ans)

    @adjoint(sp.spdiags, of_sparse=True)
    def adj_spdiags(ans, data, diags, m=None, n=None, format=None):
        d[data] = rt.spdiags_adjoint(d[ans], data, diags, ans)

    @tangent(sp.spdiags, of_sparse=True)
    def tan_spdiags(ans, data, diags, m=None, n=None, format=None):
        d[ans] = rt.spdiags_tangent(d[data], data, diags, ans)

    # matrices made of matrices
    @adjoint(sp.hstack, of_sparse=True)
    def adj_sparse_hstack(ans, blocks, format=None, dtype=None):
        d[blocks] = rt.sparse_blocks_adjoint(d[ans], blocks, "hstack")

    @tangent(sp.hstack, of_sparse=True)
    def tan_sparse_hstack(ans, blocks, format=None, dtype=None):
        d[ans] = rt.sparse_blocks_tangent(d[blocks], blocks, "hstack", ans)

    @adjoint(sp.vstack, of_sparse=True)
    def adj_sparse_vstack(ans, blocks, format=None, dtype=None):
        d[blocks] = rt.sparse_blocks_adjoint(d[ans], blocks, "vstack")

    @tangent(sp.vstack, of_sparse=True)
    def tan_sparse_vstack(ans, blocks, format=None, dtype=None):
        d[ans] = rt.sparse_blocks_tangent(d[blocks], blocks, "vstack", ans)

    @adjoint(sp.bmat, of_sparse=True)
    def adj_sparse_bmat(ans, blocks, format=None, dtype=None):
        d[blocks] = rt.sparse_blocks_adjoint(d[ans], blocks, "bmat")

    @tangent(sp.bmat, of_sparse=True)
    def tan_sparse_bmat(ans, blocks, format=None, dtype=None):
        d[ans] = rt.sparse_blocks_tangent(d[blocks], blocks, "bmat", ans)

    @adjoint(sp.block_diag, of_sparse=True)
    def adj_sparse_block_diag(ans, mats, format=None, dtype=None):
        d[mats] = rt.sparse_blocks_adjoint(d[ans], mats, "block_diag")

    @tangent(sp.block_diag, of_sparse=True)
    def tan_sparse_block_diag(ans, mats, format=None, dtype=None):
        d[ans] = rt.sparse_blocks_tangent(d[mats], mats, "block_diag", ans)

    @adjoint(sp.kron, of_sparse=True)
    def adj_sparse_kron(ans, A, B, format=None):
        d[A] = rt.sparse_kron_adjoint(d[ans], A, B, 0)
        d[B] = rt.sparse_kron_adjoint(d[ans], A, B, 1)

    @tangent(sp.kron, of_sparse=True)
    def tan_sparse_kron(ans, A, B, format=None):
        d[ans] = rt.sparse_kron_tangent(d[A], d[B], A, B, ans)

    # --- operators ---

    @adjoint(gast.MatMult, SparseMethod("dot"), SparseMethod("matvec"), SparseMethod("matmat"),
             of_sparse=True)
    def adj_sparse_matmul(ans, x, y):
        d[x] = rt.sparse_matmul_adjoint(d[ans], x, y, 0)
        d[y] = rt.sparse_matmul_adjoint(d[ans], x, y, 1)

    @tangent(gast.MatMult, SparseMethod("dot"), SparseMethod("matvec"), SparseMethod("matmat"),
             of_sparse=True)
    def tan_sparse_matmul(ans, x, y):
        d[ans] = d[x] @ y
        d[ans] = x @ d[y]

    @adjoint(gast.Mult, of_sparse=True)
    def adj_sparse_mul(ans, x, y):
        d[x] = rt.sparse_mul_adjoint(d[ans], x, y, 0)
        d[y] = rt.sparse_mul_adjoint(d[ans], x, y, 1)

    @tangent(gast.Mult, of_sparse=True)
    def tan_sparse_mul(ans, x, y):
        d[ans] = d[x] * y
        d[ans] = x * d[y]

    @adjoint(gast.Div, of_sparse=True)
    def adj_sparse_div(ans, x, y):
        d[x] = rt.sparse_div_adjoint(d[ans], x, y, 0)
        d[y] = rt.sparse_div_adjoint(d[ans], x, y, 1)

    @tangent(gast.Div, of_sparse=True)
    def tan_sparse_div(ans, x, y):
        d[ans] = d[x] / y
        d[ans] = ans * (-d[y] / y)

    @adjoint(gast.Add, of_sparse=True)
    def adj_sparse_add(ans, x, y):
        d[x] = rt.sparse_add_adjoint(d[ans], x, y, 0)
        d[y] = rt.sparse_add_adjoint(d[ans], x, y, 1)

    @tangent(gast.Add, of_sparse=True)
    def tan_sparse_add(ans, x, y):
        d[ans] = d[x]
        d[ans] = d[y]

    @adjoint(gast.Sub, of_sparse=True)
    def adj_sparse_sub(ans, x, y):
        d[x] = rt.sparse_add_adjoint(d[ans], x, y, 0, -1.0)
        d[y] = rt.sparse_add_adjoint(d[ans], x, y, 1, -1.0)

    @tangent(gast.Sub, of_sparse=True)
    def tan_sparse_sub(ans, x, y):
        d[ans] = d[x]
        d[ans] = -d[y]

    @adjoint(gast.USub, of_sparse=True)
    def adj_sparse_neg(ans, x):
        d[x] = -d[ans]

    @tangent(gast.USub, of_sparse=True)
    def tan_sparse_neg(ans, x):
        d[ans] = -d[x]

    # --- methods and attributes ---

    @adjoint(SparseMethod("T"), of_sparse=True)
    def adj_sparse_T(ans, x):
        d[x] = rt.sparse_transpose_adjoint(d[ans])

    @tangent(SparseMethod("T"), of_sparse=True)
    def tan_sparse_T(ans, x):
        d[ans] = d[x].T

    @adjoint(SparseMethod("transpose"), of_sparse=True)
    def adj_sparse_transpose(ans, x, axes=None, copy=False):
        d[x] = rt.sparse_transpose_adjoint(d[ans])

    @tangent(SparseMethod("transpose"), of_sparse=True)
    def tan_sparse_transpose(ans, x, axes=None, copy=False):
        d[ans] = d[x].T

    @adjoint(SparseMethod("toarray"), of_sparse=True)
    def adj_toarray(ans, x, order=None, out=None):
        d[x] = rt.sparse_dense_adjoint(d[ans], x)

    @tangent(SparseMethod("toarray"), of_sparse=True)
    def tan_toarray(ans, x, order=None, out=None):
        d[ans] = d[x].toarray()

    # a change of format is the same matrix: the same gradient (read at the data's entries)
    @adjoint(SparseMethod("tocsr"), SparseMethod("tocsc"), SparseMethod("tocoo"),
             SparseMethod("tolil"), SparseMethod("todok"), SparseMethod("copy"), of_sparse=True)
    def adj_sparse_format(ans, x, copy=False):
        d[x] = d[ans]

    @tangent(SparseMethod("tocsr"), SparseMethod("tocsc"), SparseMethod("tocoo"),
             SparseMethod("tolil"), SparseMethod("todok"), of_sparse=True)
    def tan_sparse_format(ans, x, copy=False):
        d[ans] = d[x].asformat(ans.format)

    @tangent(SparseMethod("copy"), of_sparse=True)
    def tan_sparse_copy(ans, x):
        d[ans] = d[x].copy()

    @adjoint(SparseMethod("asformat"), of_sparse=True)
    def adj_asformat(ans, x, format, copy=False):
        d[x] = d[ans]

    @tangent(SparseMethod("asformat"), of_sparse=True)
    def tan_asformat(ans, x, format, copy=False):
        d[ans] = d[x].asformat(format)

    @adjoint(SparseMethod("multiply"), of_sparse=True)
    def adj_sparse_multiply(ans, x, other):
        d[x] = rt.sparse_multiply_adjoint(d[ans], x, other, 0)
        d[other] = rt.sparse_multiply_adjoint(d[ans], x, other, 1)

    @tangent(SparseMethod("multiply"), of_sparse=True)
    def tan_sparse_multiply(ans, x, other):
        d[ans] = d[x].multiply(other)
        d[ans] = x.multiply(d[other])

    @adjoint(SparseMethod("sum"), of_sparse=True)
    def adj_sparse_sum(ans, x, axis=None, dtype=None, out=None):
        d[x] = rt.sparse_sum_adjoint(d[ans], x, axis)

    @tangent(SparseMethod("sum"), of_sparse=True)
    def tan_sparse_sum(ans, x, axis=None, dtype=None, out=None):
        d[ans] = rt.sparse_sum_tangent(d[x], x, axis)

    @adjoint(SparseMethod("diagonal"), of_sparse=True)
    def adj_sparse_diagonal(ans, x, k=0):
        d[x] = rt.sparse_diagonal_adjoint(d[ans], x, k)

    @tangent(SparseMethod("diagonal"), of_sparse=True)
    def tan_sparse_diagonal(ans, x, k=0):
        d[ans] = d[x].diagonal(k)

    @adjoint(operator.getitem, of_sparse=True)
    def adj_sparse_getitem(ans, x, index):
        d[x] = rt.sparse_index_adjoint(d[ans], x, index)

    @tangent(operator.getitem, of_sparse=True)
    def tan_sparse_getitem(ans, x, index):
        d[ans] = d[x][index]

    # a write into a sparse matrix (an assembly loop's A[i, j] += k of a lil_matrix or
    # dok_matrix): its gradient a copy of the matrix's with the entries changed in place, one
    # entry at a time (SparseGrad.__setitem__), never on the pattern SciPy stored (a write of
    # zero stores nothing, but its value has a gradient)
    @adjoint(operator.setitem, of_sparse=True)
    def adj_sparse_setitem(ans, a, index, value):
        d[value] = rt.unbroadcast(rt.sparse_written(d[ans], index, value), value)  # (first)
        d[a] = rt.zero_index(d[ans], index)

    @tangent(operator.setitem, of_sparse=True)
    def tan_sparse_setitem(ans, a, index, value):
        d[ans] = rt.zero_index(d[a], index)
        d[ans] = rt.sparse_unindex(d[value], ans, index)

    # --- solves ---

    @adjoint(spla.spsolve, of_sparse=True)
    def adj_spsolve(ans, A, b, permc_spec=None, use_umfpack=True):
        ga, gb = rt.spsolve_adjoint(d[ans], A, b, ans)
        d[A] = ga
        d[b] = gb

    @tangent(spla.spsolve, of_sparse=True)
    def tan_spsolve(ans, A, b, permc_spec=None, use_umfpack=True):
        d[ans] = rt.spsolve_tangent(d[A], A, ans)
        d[ans] = rt.spsolve_b_tangent(d[b], A, ans)

    # a factorization: its gradient is the matrix's, and its solves reuse it, transposed
    @adjoint(spla.splu, of_sparse=True)
    def adj_splu(ans, A, permc_spec=None, diag_pivot_thresh=None, relax=None, panel_size=None,
                 options=None):
        d[A] = d[ans]

    @tangent(spla.splu, of_sparse=True)
    def tan_splu(ans, A, permc_spec=None, diag_pivot_thresh=None, relax=None, panel_size=None,
                 options=None):
        d[ans] = d[A]

    @adjoint(SparseMethod("solve"), of_sparse=True)
    def adj_factor_solve(ans, x, rhs, trans="N"):
        ga, gb = rt.factor_solve_adjoint(d[ans], x, rhs, ans, trans)
        d[x] = ga
        d[rhs] = gb

    @tangent(SparseMethod("solve"), of_sparse=True)
    def tan_factor_solve(ans, x, rhs, trans="N"):
        d[ans] = rt.factor_solve_tangent(d[x], d[rhs], x, ans, trans)

    # factorized(A) is splu(A)'s solve: its calls are lu.solve(b)'s
    @adjoint(spla.factorized, of_sparse=True)
    def adj_factorized(ans, A):
        d[A] = d[ans]

    @tangent(spla.factorized, of_sparse=True)
    def tan_factorized(ans, A):
        d[ans] = d[A]

    @adjoint(SparseMethod("__call__"), of_sparse=True)
    def adj_factorized_solve(ans, solve, rhs):
        ga, gb = rt.factor_solve_adjoint(d[ans], solve, rhs, ans)
        d[solve] = ga
        d[rhs] = gb

    @tangent(SparseMethod("__call__"), of_sparse=True)
    def tan_factorized_solve(ans, solve, rhs):
        d[ans] = rt.factor_solve_tangent(d[solve], d[rhs], solve, ans)

    # the matrix exponential's action e^A B: B's gradient e^{A^T} G, A's the Fréchet
    # derivative's adjoint (exact for a dense A; a quadrature in s to 1e-12 for a sparse one); on
    # a grid of times (start=, stop=, num=) the same, summed over the times, and the times'
    @adjoint(spla.expm_multiply, of_sparse=True)
    @adjoint(spla.expm_multiply)
    def adj_expm_multiply(ans, A, B, start=None, stop=None, num=None, endpoint=None,
                          traceA=None):
        ga, gb, gstart, gstop = rt.expm_multiply_adjoint(d[ans], A, B, ans, traceA, start, stop,
                                                         num, endpoint)
        d[A] = ga
        d[B] = gb
        d[start] = gstart
        d[stop] = gstop

    @tangent(spla.expm_multiply, of_sparse=True)
    @tangent(spla.expm_multiply)
    def tan_expm_multiply(ans, A, B, start=None, stop=None, num=None, endpoint=None,
                          traceA=None):
        d[ans] = rt.expm_multiply_tangent(d[A], d[B], A, B, ans, traceA, start, stop, num,
                                          endpoint)
        d[ans] = rt.expm_multiply_times_tangent(d[start], d[stop], A, ans, start, stop, num,
                                                endpoint)

    # the iterative solvers: their solution does not depend on their preconditioners, which are
    # not differentiated (values made only to precondition need no rule: spilu's factors)
    for _solver in (spla.cg, spla.bicgstab, spla.cgs, spla.bicg, spla.tfqmr, spla.qmr,
                    spla.gmres, spla.lgmres, spla.gcrotmk, spla.minres):
        UNDIFFERENTIATED[_solver] = frozenset({"M", "M1", "M2", "callback"})

    # the iterative solvers: the same method on the transposed system, the caller's tolerances
    # and preconditioners (a sparse A here; an array A in the dense table; a LinearOperator A
    # is not differentiated); x0 only starts the iteration
    @adjoint(spla.cg, of_sparse=True)
    @adjoint(spla.cg)
    def adj_cg(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
               callback=None):
        ga, gb = rt.iterative_adjoint(d[ans], "cg", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.cg, of_sparse=True)
    @tangent(spla.cg)
    def tan_cg(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
               callback=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "cg", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})

    @adjoint(spla.bicgstab, of_sparse=True)
    @adjoint(spla.bicgstab)
    def adj_bicgstab(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                     callback=None):
        ga, gb = rt.iterative_adjoint(d[ans], "bicgstab", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.bicgstab, of_sparse=True)
    @tangent(spla.bicgstab)
    def tan_bicgstab(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                     callback=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "bicgstab", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})

    @adjoint(spla.cgs, of_sparse=True)
    @adjoint(spla.cgs)
    def adj_cgs(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                callback=None):
        ga, gb = rt.iterative_adjoint(d[ans], "cgs", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.cgs, of_sparse=True)
    @tangent(spla.cgs)
    def tan_cgs(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                callback=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "cgs", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})

    @adjoint(spla.bicg, of_sparse=True)
    @adjoint(spla.bicg)
    def adj_bicg(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                 callback=None):
        ga, gb = rt.iterative_adjoint(d[ans], "bicg", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.bicg, of_sparse=True)
    @tangent(spla.bicg)
    def tan_bicg(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                 callback=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "bicg", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})

    @adjoint(spla.tfqmr, of_sparse=True)
    @adjoint(spla.tfqmr)
    def adj_tfqmr(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                  callback=None, show=False):
        ga, gb = rt.iterative_adjoint(d[ans], "tfqmr", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.tfqmr, of_sparse=True)
    @tangent(spla.tfqmr)
    def tan_tfqmr(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M=None,
                  callback=None, show=False):
        d[ans] = rt.iterative_tangent(d[A], d[b], "tfqmr", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M})

    @adjoint(spla.qmr, of_sparse=True)
    @adjoint(spla.qmr)
    def adj_qmr(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M1=None,
                M2=None, callback=None):
        ga, gb = rt.iterative_adjoint(d[ans], "qmr", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M1": M1, "M2": M2})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.qmr, of_sparse=True)
    @tangent(spla.qmr)
    def tan_qmr(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=None, M1=None,
                M2=None, callback=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "qmr", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M1": M1, "M2": M2})

    @adjoint(spla.gmres, of_sparse=True)
    @adjoint(spla.gmres)
    def adj_gmres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, restart=None, maxiter=None,
                  M=None, callback=None, callback_type=None):
        ga, gb = rt.iterative_adjoint(d[ans], "gmres", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "restart": restart})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.gmres, of_sparse=True)
    @tangent(spla.gmres)
    def tan_gmres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, restart=None, maxiter=None,
                  M=None, callback=None, callback_type=None):
        d[ans] = rt.iterative_tangent(d[A], d[b], "gmres", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "restart": restart})

    @adjoint(spla.lgmres, of_sparse=True)
    @adjoint(spla.lgmres)
    def adj_lgmres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=1000, M=None,
                   callback=None, inner_m=30, outer_k=3, outer_v=None, store_outer_Av=True,
                   prepend_outer_v=False):
        ga, gb = rt.iterative_adjoint(d[ans], "lgmres", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "inner_m": inner_m, "outer_k": outer_k})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.lgmres, of_sparse=True)
    @tangent(spla.lgmres)
    def tan_lgmres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=1000, M=None,
                   callback=None, inner_m=30, outer_k=3, outer_v=None, store_outer_Av=True,
                   prepend_outer_v=False):
        d[ans] = rt.iterative_tangent(d[A], d[b], "lgmres", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "inner_m": inner_m, "outer_k": outer_k})

    @adjoint(spla.gcrotmk, of_sparse=True)
    @adjoint(spla.gcrotmk)
    def adj_gcrotmk(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=1000, M=None,
                    callback=None, m=20, k=None, CU=None, discard_C=False, truncate="oldest"):
        ga, gb = rt.iterative_adjoint(d[ans], "gcrotmk", A, b, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "m": m, "k": k, "truncate": truncate})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.gcrotmk, of_sparse=True)
    @tangent(spla.gcrotmk)
    def tan_gcrotmk(ans, A, b, x0=None, *, rtol=1e-05, tol=None, atol=0.0, maxiter=1000, M=None,
                    callback=None, m=20, k=None, CU=None, discard_C=False, truncate="oldest"):
        d[ans] = rt.iterative_tangent(d[A], d[b], "gcrotmk", A, ans, rtol, atol, maxiter,
                                      {"tol": tol, "M": M, "m": m, "k": k, "truncate": truncate})

    @adjoint(spla.minres, of_sparse=True)
    @adjoint(spla.minres)
    def adj_minres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, shift=0.0, maxiter=None, M=None,
                   callback=None, show=False, check=False):
        ga, gb = rt.iterative_adjoint(d[ans], "minres", A, b, ans, rtol, 0.0, maxiter,
                                      {"tol": tol, "M": M, "shift": shift})
        d[A] = ga
        d[b] = gb
        if x0 is not None:
            d[x0] = rt.zeros_like_grad(x0)

    @tangent(spla.minres, of_sparse=True)
    @tangent(spla.minres)
    def tan_minres(ans, A, b, x0=None, *, rtol=1e-05, tol=None, shift=0.0, maxiter=None, M=None,
                   callback=None, show=False, check=False):
        d[ans] = rt.iterative_tangent(d[A], d[b], "minres", A, ans, rtol, 0.0, maxiter,
                                      {"tol": tol, "M": M, "shift": shift})

    # --- the sparse adjoints' helpers differentiated again (forward over reverse: hvp,
    # hessian). A SparseGrad's tangent is a SparseGrad. A helper reading its g only at
    # coordinates, its other arguments for their shapes, is linear in g: its tangent is itself on
    # d[g]. A product's gradient is also linear in the other operand (a second term); a solve's
    # moves with its adjoint solve (one term for the tuple). Each in both tables: a helper given
    # only SparseGrad values reads no matrix.

    def _both(key):
        return lambda rule: tangent(key)(tangent(key, of_sparse=True)(rule))

    @_both(rt.sparse_made_adjoint)
    def tan_sparse_made_adjoint(ans, g, arg1, res):
        d[ans] = rt.sparse_made_adjoint(d[g], arg1, res)

    @_both(rt.diags_adjoint)
    def tan_diags_adjoint(ans, g, diagonals, offsets, res):
        d[ans] = rt.diags_adjoint(d[g], diagonals, offsets, res)

    @_both(rt.spdiags_adjoint)
    def tan_spdiags_adjoint(ans, g, data, diags, res):
        d[ans] = rt.spdiags_adjoint(d[g], data, diags, res)

    @_both(rt.sparse_blocks_adjoint)
    def tan_sparse_blocks_adjoint(ans, g, blocks, how):
        d[ans] = rt.sparse_blocks_adjoint(d[g], blocks, how)

    @_both(rt.sparse_add_adjoint)
    def tan_sparse_add_adjoint(ans, g, a, b, wrt, sign=1.0):
        d[ans] = rt.sparse_add_adjoint(d[g], a, b, wrt, sign)

    @_both(rt.sparse_transpose_adjoint)
    def tan_sparse_transpose_adjoint(ans, g):
        d[ans] = rt.sparse_transpose_adjoint(d[g])

    @_both(rt.sparse_dense_adjoint)
    def tan_sparse_dense_adjoint(ans, g, a):
        d[ans] = rt.sparse_dense_adjoint(d[g], a)

    @_both(rt.sparse_sum_adjoint)
    def tan_sparse_sum_adjoint(ans, g, a, axis=None):
        d[ans] = rt.sparse_sum_adjoint(d[g], a, axis)

    @_both(rt.sparse_diagonal_adjoint)
    def tan_sparse_diagonal_adjoint(ans, g, a, k=0):
        d[ans] = rt.sparse_diagonal_adjoint(d[g], a, k)

    @tangent(rt.owned, of_sparse=True)  # (a matrix an assembly loop writes into, copied)
    def tan_sparse_owned(ans, obj):
        d[ans] = rt.owned(d[obj])

    @_both(rt.sparse_written)
    def tan_sparse_written(ans, g, index, value):
        d[ans] = rt.sparse_written(d[g], index, value)

    @_both(rt.sparse_index_adjoint)
    def tan_sparse_index_adjoint(ans, g, a, index):
        d[ans] = rt.sparse_index_adjoint(d[g], a, index)

    @_both(rt.sparse_grad_like)
    def tan_sparse_grad_like(ans, g, a):
        d[ans] = rt.sparse_grad_like(d[g], a)

    @_both(rt.sparse_matmul_adjoint)
    def tan_sparse_matmul_adjoint(ans, g, a, b, wrt):
        d[ans] = rt.sparse_matmul_adjoint(d[g], a, b, wrt)
        d[ans] = rt.sparse_matmul_adjoint_tangent(g, d[a], d[b], a, b, wrt)

    @_both(rt.sparse_mul_adjoint)
    def tan_sparse_mul_adjoint(ans, g, a, b, wrt):
        d[ans] = rt.sparse_mul_adjoint(d[g], a, b, wrt)
        d[ans] = rt.sparse_mul_adjoint_tangent(g, d[a], d[b], a, b, wrt)

    @_both(rt.sparse_multiply_adjoint)
    def tan_sparse_multiply_adjoint(ans, g, a, w, wrt):
        d[ans] = rt.sparse_multiply_adjoint(d[g], a, w, wrt)
        d[ans] = rt.sparse_multiply_adjoint_tangent(g, d[a], d[w], a, w, wrt)

    @_both(rt.sparse_kron_adjoint)
    def tan_sparse_kron_adjoint(ans, g, a, b, wrt):
        d[ans] = rt.sparse_kron_adjoint(d[g], a, b, wrt)
        d[ans] = rt.sparse_kron_adjoint_tangent(g, d[a], d[b], a, b, wrt)

    @_both(rt.sparse_div_adjoint)
    def tan_sparse_div_adjoint(ans, g, a, c, wrt):
        d[ans] = rt.sparse_div_adjoint_tangent(d[g], d[a], d[c], g, a, c, wrt)

    @_both(rt.spsolve_adjoint)  # a tuple (ga, gb): one term
    def tan_spsolve_adjoint(ans, g, a, b, x):
        d[ans] = rt.spsolve_adjoint_tangent(d[g], d[a], d[x], g, a, b, x)

    @_both(rt.factor_solve_adjoint)
    def tan_factor_solve_adjoint(ans, g, lu, b, x, trans="N"):
        d[ans] = rt.factor_solve_adjoint_tangent(d[g], d[lu], d[x], g, lu, b, x, trans)

    @_both(rt.iterative_adjoint)
    def tan_iterative_adjoint(ans, g, name, a, b, res, rtol, atol, maxiter, options):
        d[ans] = rt.iterative_adjoint_tangent(d[g], d[a], d[res], g, name, a, b, res, rtol,
                                              atol, maxiter, options)

    @_both(rt.expm_multiply_adjoint)
    def tan_expm_multiply_adjoint(ans, g, a, b, res, trace=None, start=None, stop=None, num=None,
                                  endpoint=None):
        # (the times and the result are read on a grid: their tangents make the term too)
        d[ans] = rt.expm_multiply_adjoint_tangent(d[g], d[a], d[b], g, a, b, res, trace, start,
                                                  stop, num, endpoint, d[start], d[stop], d[res])
