"""scipy.sparse: every sparse rule against finite differences in both modes (the spec table
``SPARSE_SPECS``), sparse arguments (their gradient a sparse matrix of their pattern, checked by
directional differences of the data), the exactness SciPy's dropped zeros would break, the
refusals, and memory at scale (the gradient is never dense)."""

from __future__ import annotations

import pathlib
import re
import tracemalloc

import numpy as np
import pytest

from tests.rule_specs import build, case_seed, discovered, make_args
from tests.test_hvp_rules import test_rule_hvp as check_hvp_case
from tests.test_rules import same_key
from tests.test_tangent_rules import check_jvp_case
from tests.util import make, readme_block, run_readme_block
from transpiler import TranspileError, check_grad, grad, hessian, hvp, jvp, vjp
from transpiler.rules.registry import SPARSE_ADJOINTS, SPARSE_TANGENTS, key_name

sp = pytest.importorskip("scipy.sparse")
spla = pytest.importorskip("scipy.sparse.linalg")

README = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
SPECS = discovered("SPARSE_SPECS")
CASES = [pytest.param(spec, shapes, id=f"{spec.expr}-{shapes}") for spec in SPECS
         for shapes in spec.shapes]


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("spec, shapes", CASES)
def test_sparse_rule_vjp(spec, shapes, optimize):
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = build(spec.expr, args, seed + 1)
    check_grad(f, *args, wrt=spec.diff_positions, rtol=spec.rtol, atol=spec.atol,
               optimize=optimize)


@pytest.mark.parametrize("spec, shapes", CASES)
def test_sparse_rule_jvp(spec, shapes):
    check_jvp_case(spec, shapes)


@pytest.mark.parametrize("spec, shapes", CASES)
def test_sparse_rule_hvp(spec, shapes):
    if "expm_multiply" in spec.expr and "start=" in spec.expr:
        pytest.xfail("second derivatives through expm_multiply on a grid: NotImplementedError")
    for i in spec.diff_positions:
        check_hvp_case(spec, shapes, i)


def test_every_sparse_rule_has_a_spec_and_a_tangent():
    missing = [key_name(k) for k in SPARSE_ADJOINTS
               if not any(s.key == k or same_key(s.key, k) for s in SPECS)]
    assert not missing, f"sparse rules without a spec: {missing}"
    # (and the tangents of the gradients' helpers: second derivatives)
    assert set(SPARSE_ADJOINTS) == {k for k in SPARSE_TANGENTS
                                    if not (getattr(k, "__module__", "") or "").startswith(
                                        "runtime.")}


# --- a realistic function: a 1-D diffusion operator from per-cell conductivities ------------------

def _poisson(k, f):
    n = len(f)
    main = k[:-1] + k[1:]
    A = sp.diags([-k[1:-1], main, -k[1:-1]], [-1, 0, 1], shape=(n, n), format="csr")
    u = spla.spsolve(A, f)
    return np.sum((u - 0.1) ** 2)


def test_a_diffusion_solve_matches_finite_differences_in_both_modes():
    k = np.linspace(1.0, 2.0, 9)
    f = np.sin(np.arange(8.0))
    check_grad(_poisson, k, f, wrt=(0, 1))
    t = np.cos(np.arange(9.0))
    _, tangent = jvp(_poisson, (k, f), (t, None))
    h = 1e-6
    np.testing.assert_allclose(tangent, (_poisson(k + h * t, f) - _poisson(k - h * t, f)) / (2 * h),
                               rtol=1e-6)


# --- sparse arguments ---------------------------------------------------------------------------

def _operator(n: int = 6, fmt: str = "csr"):
    main = 2.5 + np.arange(n) / n
    return sp.diags([np.full(n - 1, -1.0), main, np.full(n - 1, -0.7)], [-1, 0, 1], format=fmt)


def _loss(x, A):
    y = spla.spsolve(A, x)
    return np.sum(y ** 2) + np.sum((A @ x) ** 3)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dia"])
def test_the_gradient_of_a_sparse_argument_is_sparse_on_its_pattern(fmt):
    A = _operator(fmt=fmt)
    x = np.linspace(0.3, 1.1, 6)
    data = A.data.copy()
    G = grad(_loss, wrt=1)(x, A)
    assert type(G) is type(A) and G.shape == A.shape and G.data.shape == A.data.shape
    direction = np.cos(np.arange(A.data.size)).reshape(A.data.shape)
    h = 1e-6
    up, down = A.copy(), A.copy()
    up.data = up.data + h * direction
    down.data = down.data - h * direction
    expected = (_loss(x, up) - _loss(x, down)) / (2 * h)
    np.testing.assert_allclose(np.sum(G.data * direction), expected, rtol=1e-6)
    np.testing.assert_array_equal(A.data, data)  # (the argument is not written)
    # forward mode: a sparse tangent of the same pattern
    T = A.copy()
    T.data = direction
    _, tangent = jvp(_loss, (x, A), (None, T))
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


def test_a_sparse_argument_that_is_not_differentiated_and_vjp():
    A = _operator()
    x = np.linspace(0.3, 1.1, 6)
    check_grad(lambda x: _loss(x, A), x)
    np.testing.assert_allclose(grad(_loss)(x, A), grad(lambda x: _loss(x, A))(x), rtol=1e-12)
    value, pullback = vjp(_loss, x, A)
    gx, gA = pullback(1.0)
    np.testing.assert_allclose(gx, grad(_loss)(x, A), rtol=1e-12)
    np.testing.assert_allclose(gA.toarray(), grad(_loss, wrt=1)(x, A).toarray(), rtol=1e-12)


def test_a_helper_given_a_sparse_matrix_is_compiled_for_it():
    A = _operator()

    def step(A, x, dt):
        y = x.copy()
        for _ in range(3):  # (a loop: not inlined)
            y = y - dt * (A @ y)
        return y

    def loss(x, dt):
        return np.sum(step(A, x, dt) ** 2)

    check_grad(loss, np.linspace(0.3, 1.1, 6), 0.1, wrt=(0, 1))


# --- exactness where SciPy drops entries ----------------------------------------------------------

def test_entries_that_cancel_to_zero_keep_their_gradient():
    # A + B drops the entry where they cancel, and diags(format='csr') a zero data value: the
    # data still moves those entries, so their gradients are not zero
    def loss(a, b):
        A = sp.diags([a], [0], format="csr")
        B = sp.diags([b], [0], format="csr")
        C = A + B
        return np.sum((C @ np.arange(1.0, 4.0)) ** 2) + np.sum(C.toarray())

    a = np.array([1.0, 0.0, 2.0])
    b = np.array([-1.0, 0.0, 0.5])  # cancels at 0, both zero at 1
    assert (sp.diags([a], [0], format="csr") + sp.diags([b], [0], format="csr")).nnz == 1
    check_grad(loss, a, b, wrt=(0, 1))


def test_a_product_of_sparse_matrices_whose_entries_cancel_keeps_their_gradient():
    # A @ B is [x - y] at 0, 0: SciPy drops it where x == y, and the gradient is still 3, -3
    def loss(x, y):
        A = sp.csr_matrix((np.array([x, y]), ([0, 0], [0, 1])), shape=(1, 2))
        B = sp.csr_matrix(np.array([[1.0], [-1.0]]))
        return 3.0 * np.sum((A @ B).toarray())

    assert (sp.csr_matrix(np.array([[2.0, 2.0]])) @ sp.csr_matrix(np.array([[1.0], [-1.0]]))).nnz \
        == 0
    dx, dy = grad(loss, wrt=(0, 1))(2.0, 2.0)
    assert (dx, dy) == (pytest.approx(3.0), pytest.approx(-3.0))


# --- refusals -------------------------------------------------------------------------------------

def test_an_operation_without_a_sparse_rule_is_refused_at_its_line():
    L = sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(4, 4))
    f = make("def f(u, D):\n    A = D * L\n    return np.sum(A) + np.sum(u)\n", L=L)
    for call in (lambda: grad(f, wrt=1)(np.ones(4), 0.7), lambda: jvp(f, (np.ones(4), 0.7),
                                                                    (None, 1.0))):
        with pytest.raises(TranspileError, match="np.sum is not differentiated for "
                           "scipy.sparse matrices") as e:
            call()
        assert e.value.lineno == 3


def test_entries_read_in_a_loop_and_the_indexing_left_refused():
    rows, cols = np.array([0, 1, 2, 0, 1, 1]), np.array([0, 1, 2, 1, 2, 2])

    def trace_and_corner(d, w):
        A = sp.csr_array((d, (rows, cols)), shape=(3, 3))
        total = 0.0
        for k in range(3):
            total = total + A[k, k] * w[k]
        return total + A[1, -1] ** 2 + A[2, 0]  # ((1, 2) stored twice; (2, 0) not stored)

    d, w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.5]), np.array([0.3, -1.0, 2.0])
    check_grad(trace_and_corner, d, w, wrt=(0, 1))
    np.testing.assert_allclose(grad(trace_and_corner)(d, w), [0.3, -1.0, 2.0, 0.0, 11.0, 11.0])
    _, tangent = jvp(trace_and_corner, (d, w), (np.ones(6), np.zeros(3)))
    assert tangent == pytest.approx(0.3 - 1.0 + 2.0 + 22.0)

    def pairs(d):  # (an np.matrix of a *_matrix, an array of a *_array: may be sparse here)
        return np.sum(sp.csr_matrix((d, (rows, cols)), shape=(3, 3))[[0, 1], [1, 2]])

    with pytest.raises(TranspileError, match="np.sum is not differentiated for scipy.sparse"):
        grad(pairs)(d)

    def row(d):  # (a 1-D sparse array)
        return np.sum(sp.csr_array((d, (rows, cols)), shape=(3, 3))[1, :] @ np.ones(3))

    with pytest.raises(NotImplementedError, match=r"write A\[\[i\], :\]"):
        grad(row)(d)

    def held(d):  # (d[i, j] of a dict may be a matrix: still may be sparse)
        mats = {(0, 0): sp.csr_matrix((d, (rows, cols)), shape=(3, 3))}
        return np.sum(mats[0, 0])

    with pytest.raises(TranspileError, match="np.sum is not differentiated for scipy.sparse"):
        grad(held)(d)


def _preconditioned(d):
    A = sp.diags([d[1:], d + 4.0, d[:-1] * 0.5], [-1, 0, 1], format="csc")
    jacobi = A.diagonal()
    x, _ = spla.gmres(A, np.ones(4) + d, rtol=1e-13, atol=0.0,
                      M=spla.LinearOperator(A.shape, matvec=lambda v: v / jacobi))
    ilu = spla.spilu(A, drop_tol=1e-2)
    y, _ = spla.bicgstab(A, x, M=spla.LinearOperator(A.shape, ilu.solve), rtol=1e-13, atol=0.0)
    both = spla.LinearOperator(A.shape, ilu.solve, rmatvec=lambda v: ilu.solve(v, "T"))
    z, _ = spla.lgmres(A, y * d, M=both, rtol=1e-13, atol=0.0)
    return np.sum(x ** 2) + np.sum(y) + z @ d


def test_preconditioners_made_of_differentiated_values_are_not_differentiated():
    d = np.array([1.0, 2.0, 3.0, 4.0])
    check_grad(_preconditioned, d)
    direction, h = np.array([0.5, -1.0, 0.3, 2.0]), 1e-6
    _, tangent = jvp(_preconditioned, (d,), (direction,))
    assert tangent == pytest.approx((_preconditioned(d + h * direction)
                                     - _preconditioned(d - h * direction)) / (2 * h), rel=1e-7)

    def factors_as_values(d):
        A = sp.diags([d[1:], d + 4.0], [-1, 0], format="csc")
        return np.sum(spla.spilu(A).solve(np.ones(4)))  # (an approximate solve: no rule)

    with pytest.raises(TranspileError, match=r"ilu|spilu|solve"):
        grad(factors_as_values)(d)


def _propagated(k):
    n = k.size - 1
    u0 = np.exp(-((np.arange(n) - n / 3.0) / 3.0) ** 2)
    main = -np.concatenate([[k[0]], k[1:-1] + k[2:]])
    A = sp.diags([k[1:-1], main, k[1:-1]], [-1, 0, 1], format="csr") * (n * n / 40.0)
    u = spla.expm_multiply(A, u0)  # (a diffusion's propagator: |A| ~ 40, stiff)
    return np.sum((u - 0.1) ** 2) + u @ spla.expm_multiply(0.5 * A.T, np.sin(u0))


def test_a_stiff_propagator_s_gradient_in_the_conductivities():
    k = 1.0 + 0.5 * np.sin(np.arange(21) / 7.0)
    check_grad(_propagated, k)
    v = np.random.default_rng(2).normal(size=k.size)
    _, tangent = jvp(_propagated, (k,), (v,))  # (exact: the block matrix's action)
    assert tangent == pytest.approx(grad(_propagated)(k) @ v, rel=1e-10)


def _assembled(k, f):
    """A 1-D finite-element stiffness matrix assembled from per-element conductivities (COO data
    with duplicates), solved three ways; a loss of the solutions."""
    n = len(f)
    rows = np.concatenate([np.arange(n), np.arange(n), np.arange(n - 1), np.arange(1, n)])
    cols = np.concatenate([np.arange(n), np.arange(n), np.arange(1, n), np.arange(n - 1)])
    data = np.concatenate([k[:-1], k[1:], -k[1:-1], -k[1:-1]])
    A = sp.coo_matrix((data, (rows, cols)), shape=(n, n)).tocsc()
    u = spla.spsolve(A, f)
    w = spla.splu(A).solve(f * u)
    v, info = spla.cg(A, u, rtol=1e-13, atol=0.0)
    return np.sum((u - 0.1) ** 2) + w @ v + A.multiply(np.outer(u, f)).sum() / 3.0


@pytest.mark.parametrize("wrt", [0, 1])
def test_second_derivatives_through_sparse_assembly_and_solves(wrt):
    k = np.linspace(1.0, 2.0, 7)
    f = np.sin(np.arange(6.0)) + 0.5
    args = [k, f]
    v = np.cos(np.arange(args[wrt].size) * 1.3)
    product = hvp(_assembled, wrt=wrt)(k, f, v)
    gradient = grad(_assembled, wrt=wrt)
    h = 1e-5
    up, down = list(args), list(args)
    up[wrt], down[wrt] = args[wrt] + h * v, args[wrt] - h * v
    expected = (gradient(*up) - gradient(*down)) / (2 * h)
    np.testing.assert_allclose(product, expected, rtol=1e-6, atol=1e-8)
    # (the Hessian's columns are its products with the unit vectors: symmetric)
    H = hessian(_assembled, wrt=wrt)(k, f)
    np.testing.assert_allclose(H @ v, product, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-12)


def _observed(k, T):
    """Diffusion observed at six times up to a fitted end time ``T`` (a grid of times)."""
    n = k.size - 1
    main = -np.concatenate([[k[0]], k[1:-1] + k[2:]])
    A = sp.diags([k[1:-1], main, k[1:-1]], [-1, 0, 1], format="csr") * 4.0
    u0 = np.exp(-((np.arange(n) - n / 3.0) / 2.0) ** 2)
    U = spla.expm_multiply(A, u0 + 0.1 * k[:-1], start=0.1, stop=T, num=6, endpoint=True)
    return np.sum((U - 0.05) ** 2 * np.arange(1, 7)[:, None])


def test_a_propagator_on_a_grid_of_times_ending_at_a_fitted_time():
    k = 1.0 + 0.5 * np.sin(np.arange(9) / 3.0)
    check_grad(_observed, k, 0.7, wrt=(0, 1))
    v = np.cos(np.arange(9.0))
    _, tangent = jvp(_observed, (k, 0.7), (v, 0.3))
    gk, gT = grad(_observed, wrt=(0, 1))(k, 0.7)
    assert tangent == pytest.approx(gk @ v + 0.3 * gT, rel=1e-10)
    with pytest.raises(NotImplementedError, match="decrease"):  # (SciPy's grid is wrong there)
        grad(_observed, wrt=1)(k, 0.05)


def test_second_derivatives_through_a_stiff_propagator():
    k = 1.0 + 0.5 * np.sin(np.arange(11) / 7.0)
    v = np.random.default_rng(3).normal(size=k.size)
    product = hvp(_propagated)(k, v)
    gradient, h = grad(_propagated), 1e-5
    expected = (gradient(k + h * v) - gradient(k - h * v)) / (2 * h)
    np.testing.assert_allclose(product, expected, rtol=1e-6, atol=1e-9)


def test_the_column_sums_of_a_sparse_matrix_np_matrix_are_refused_when_run():
    def f(x):
        A = sp.diags([x], [0], format="csr")  # (a csr_matrix: its axis sums are np.matrix)
        s = A.sum(axis=0)
        return s[0, 0]

    with pytest.raises((NotImplementedError, TranspileError)):
        grad(f)(np.ones(3))


def test_a_sparse_matrix_inside_a_container_argument_is_refused():
    A = _operator()
    g = make("def g(m, G):\n    r = G[0] @ m\n    return np.sum(r ** 2)\n")
    with pytest.raises(TypeError, match="not inside containers"):
        grad(g)(np.ones(6), [A])


# --- scale: never dense ------------------------------------------------------------------------

def test_the_gradient_of_a_large_tridiagonal_solve_stays_on_the_data():
    n = 100_000
    rng = np.random.default_rng(0)
    k = rng.uniform(1.0, 2.0, n + 1)
    f = rng.uniform(-1.0, 1.0, n)

    def loss(k):
        A = sp.diags([-k[1:-1], k[:-1] + k[1:], -k[1:-1]], [-1, 0, 1], format="csr")
        x = spla.spsolve(A, f)
        return np.sum(x ** 2)

    g = grad(loss)
    g(k)  # (compiled and warmed)
    tracemalloc.start()
    out = g(k)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    data_bytes = (3 * n - 2) * (8 + 4) + (n + 1) * 4  # csr data, indices and indptr
    assert peak < 30 * data_bytes, (peak, data_bytes)
    assert out.shape == k.shape and np.all(np.isfinite(out))


# --- the README ---------------------------------------------------------------------------------

def test_readme_sparse_example_runs_and_its_adjoint_is_what_the_compiler_prints(capsys):
    run_readme_block("# Sparse matrices", capsys)
    block = readme_block("# Sparse matrices")
    misfit = make(block.split("\nk = ")[0], name="misfit")
    shown = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S)
                 if b.startswith("    # grad of: u = spsolve(A, f)"))
    assert shown in grad(misfit).source


# --- solvers: a factorization reused, iterative solvers -------------------------------------

def _laplacian(k):
    return sp.diags([-k[1:-1], k[:-1] + k[1:], -k[1:-1]], [-1, 0, 1], format="csc")


def test_a_factorization_is_reused_by_its_solves_in_both_modes():
    def loss(k, f):
        lu = spla.splu(_laplacian(k))
        u = lu.solve(f)
        w = lu.solve(u, trans="T")
        return np.sum(w * f) + np.sum(u ** 2)

    k, f = np.linspace(1.0, 2.0, 7), np.cos(np.arange(6.0))
    check_grad(loss, k, f, wrt=(0, 1))
    source = grad(loss).source
    calls = [line for line in source.splitlines() if "splu(" in line and "#" not in line]
    assert len(calls) == 1  # (factored once: the adjoint's solves reuse it)
    t = np.sin(np.arange(7.0))
    h = 1e-6
    np.testing.assert_allclose(jvp(loss, (k, f), (t, None))[1],
                               (loss(k + h * t, f) - loss(k - h * t, f)) / (2 * h), rtol=1e-6)


def _implicit_heat(kappa, u0, dt=0.1, steps=4):
    off = -dt * kappa[1:]
    solve = spla.factorized(sp.diags([off, 1.0 + 2.0 * dt * kappa, off], [-1, 0, 1],
                                     format="csc"))
    u = u0
    for _ in range(steps):
        u = solve(u)
    return np.sum(u ** 2)


def test_a_factorized_solve_in_a_time_loop_in_both_modes():
    kappa, u0 = np.linspace(1.0, 2.0, 6), np.sin(np.arange(6.0))
    check_grad(_implicit_heat, kappa, u0, wrt=(0, 1))
    source = grad(_implicit_heat).source
    calls = [line for line in source.splitlines() if "factorized(" in line and "#" not in line]
    assert "rt.factor_solve_adjoint(" in source and len(calls) == 1  # (factored once)
    t = np.cos(np.arange(6.0))
    h = 1e-6
    np.testing.assert_allclose(
        jvp(_implicit_heat, (kappa, u0), (t, None))[1],
        (_implicit_heat(kappa + h * t, u0) - _implicit_heat(kappa - h * t, u0)) / (2 * h),
        rtol=1e-6)


def test_a_solve_whose_factors_cannot_be_reused_is_refused_when_run():
    import runtime as rt

    def solve(b):  # (what factorized gives with UMFPACK: a closure, no factors to transpose)
        return b

    with pytest.raises(NotImplementedError, match="UMFPACK"):
        rt.factor_solve_adjoint(np.ones(3), solve, np.ones(3), np.ones(3))


def test_an_iterative_solve_that_did_not_converge_is_not_differentiated():
    def loss(k, f):
        x, info = spla.cg(_laplacian(k), f, rtol=1e-14, maxiter=1)
        return np.sum(x ** 2)

    k, f = np.linspace(1.0, 2.0, 9), np.cos(np.arange(8.0))
    with pytest.raises(RuntimeError, match="did not converge"):
        grad(loss)(k, f)


def test_a_linear_operator_and_a_warm_start():
    n = 6
    A = _laplacian(np.linspace(1.0, 2.0, n + 1)).tocsr()
    op = spla.aslinearoperator(A)

    def loss(f, x0):
        x, info = spla.cg(op, f, x0=x0, rtol=1e-13)
        y, info2 = spla.gmres(op, x, rtol=1e-13, atol=0.0)
        return np.sum(y ** 2)

    f, x0 = np.cos(np.arange(float(n))), np.ones(n)
    gf, gx0 = grad(loss, wrt=(0, 1))(f, x0)
    dense = A.toarray()
    y = np.linalg.solve(dense, np.linalg.solve(dense, f))
    np.testing.assert_allclose(gf, 2 * np.linalg.solve(dense.T, np.linalg.solve(dense.T, y)),
                               rtol=1e-8)
    np.testing.assert_array_equal(gx0, np.zeros(n))


def test_a_transpose_no_gradient_reaches_and_diagonals_given_as_rows():
    def f(k, flag):
        A = sp.diags(k, 0, format="csr")
        B = A.T
        y = B @ k if flag > 0 else k * 2.0
        return np.sum(y ** 2)

    k = np.arange(1.0, 4.0)
    np.testing.assert_allclose(grad(f)(k, -1.0), 8.0 * k)  # (B's adjoint gets no gradient)
    check_grad(f, k, 1.0)

    def g(rows):  # (a 2-D array of diagonals; offset 1 uses the first two of its row)
        A = sp.diags(rows, [0, 1], shape=(3, 3))
        return np.sum(A.toarray() ** 2 * np.arange(9.0).reshape(3, 3))

    check_grad(g, np.arange(6.0).reshape(2, 3) + 1.0)
    assert grad(g)(np.ones((2, 3)))[1, 2] == 0.0


# --- writes into a sparse matrix: assembly loops ---------------------------------------------

def _assembled_1d(k, f):
    """A 1-D finite-element stiffness matrix written entry by entry into a lil_matrix."""
    n = k.shape[0] + 1
    A = sp.lil_matrix((n, n))
    for e in range(n - 1):
        A[e, e] += k[e]
        A[e + 1, e + 1] += k[e]
        A[e, e + 1] -= k[e]
        A[e + 1, e] -= k[e]
    A[0, 0] += 1.0  # (a spring to ground: nonsingular)
    u = spla.spsolve(A.tocsr(), f)
    return np.sum(u ** 2)


def _assembled_2d(kappa, conn, f):
    """Linear triangles on a 3 x 3 grid of squares: element matrices scattered into a
    dok_matrix by the connectivity, the bottom row's nodes held by zeroing rows."""
    n = f.shape[0]
    A = sp.dok_matrix((n, n))
    for e in range(conn.shape[0]):
        nodes = conn[e]
        Ke = kappa[e] * np.array([[1.0, -0.5, -0.5], [-0.5, 0.5, 0.0], [-0.5, 0.0, 0.5]])
        for a in range(3):
            for b in range(3):
                A[nodes[a], nodes[b]] += Ke[a, b]
    for i in range(4):
        A[i, :] = 0.0
        A[i, i] = 1.0
    rhs = f.copy()
    rhs[:4] = 0.0
    u = spla.spsolve(A.tocsr(), rhs)
    return np.sum(u ** 2) + u @ f


def _triangles(m: int = 3) -> np.ndarray:
    out = []
    for i in range(m):
        for j in range(m):
            c = [i * (m + 1) + j, i * (m + 1) + j + 1, (i + 1) * (m + 1) + j + 1,
                 (i + 1) * (m + 1) + j]
            out += [[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
    return np.array(out)


def _directional(f, args, wrt, v, h=1e-6):
    up, down = list(args), list(args)
    up[wrt], down[wrt] = args[wrt] + h * v, args[wrt] - h * v
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("case", ["1d", "2d"])
def test_an_assembly_loop_writing_into_a_sparse_matrix_in_both_modes(case):
    if case == "1d":
        f, args, wrt = _assembled_1d, (np.linspace(1.0, 2.0, 6), np.cos(np.arange(7.0))), (0, 1)
    else:
        f, args, wrt = _assembled_2d, (np.linspace(1.0, 2.0, 18), _triangles(),
                                       np.cos(np.arange(16.0))), (0, 2)
    check_grad(f, *args, wrt=wrt)
    v = np.sin(np.arange(args[0].size) + 1.0)
    tangents = (v,) + (None,) * (len(args) - 1)
    _, tangent = jvp(f, args, tangents)
    assert tangent == pytest.approx(_directional(f, args, 0, v), rel=1e-6)
    product = hvp(f)(*args, v)
    gradient = grad(f)
    np.testing.assert_allclose(product, _directional(gradient, args, 0, v, 1e-5),
                               rtol=1e-5, atol=1e-7)


def test_an_assembly_loop_s_adjoint_writes_its_table_in_place():
    source = grad(_assembled_1d).source_for(np.ones(4), np.ones(5))
    loop = source.split("reversed(")[1]
    # (each write's gradient read and zeroed in place: no copy of the gradient per write)
    assert "rt.zero_index" not in loop and "bA_1[e, e] = 0.0" in loop, source
    assert ".copy()" not in source.split("for e in")[1].split("_tape.append")[0], source


def test_a_sparse_matrix_argument_written_into_is_left_as_it_was():
    def loss(k, A):
        for i in range(k.size):
            A[i, i] += k[i]
        return np.sum(spla.spsolve(A.tocsc(), np.ones(k.size)) ** 2)

    A = sp.lil_matrix(np.eye(4) * 3.0 + 0.5)
    before = A.toarray().copy()
    k = np.array([1.0, 2.0, 0.5, 1.5])
    g = grad(loss)(k, A)
    np.testing.assert_array_equal(A.toarray(), before)
    h = 1e-6  # (the function itself writes into what it is given: a fresh matrix each call)
    expected = [(loss(k + h * e, sp.lil_matrix(before)) - loss(k - h * e, sp.lil_matrix(before)))
                / (2 * h) for e in np.eye(k.size)]
    np.testing.assert_allclose(g, expected, rtol=1e-6)


def test_a_written_zero_keeps_its_gradient():
    def loss(x):
        A = sp.lil_matrix((2, 2))
        A[0, 0] = 2.0
        A[1, 1] = 3.0
        A[0, 1] = x[0] - 1.0  # (zero at x[0] = 1: SciPy stores nothing there)
        return np.sum(spla.spsolve(A.tocsr(), np.array([1.0, 1.0])))

    x = np.array([1.0])
    check_grad(loss, x)
    assert grad(loss)(x)[0] == pytest.approx(-1.0 / 6.0)


def test_a_factorization_of_a_matrix_not_differentiated_solves_for_a_differentiated_rhs():
    # (the matrix depends on y only: with wrt=0 it is a constant, and splu(A).solve(b) was
    # refused as "a method call on a differentiated value")
    def loss(x, y):
        A = sp.diags([np.ones(2), 3.0 + np.tanh(y), np.ones(2)], [-1, 0, 1], format="csc")
        u = spla.splu(A).solve(x * np.array([0.5, -1.0, 2.0]))
        w = spla.splu(sp.diags(2.0 + y ** 2, 0, format="csc")).solve(u)
        return np.sum(u ** 2) + np.sum(w)

    x, y = 0.7, np.array([0.1, 0.2, 0.3])
    check_grad(loss, x, y, wrt=0)
    check_grad(loss, x, y, wrt=1)
    check_grad(loss, x, y, wrt=(0, 1))
