"""scipy.linalg's solves and factorizations (rules/scipy_linalg_rules.py): functions written as
users write them against finite differences in every mode, the README block, and what is
refused (complex matrices at the line, Dask arrays when run)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import central_differences, make, run_readme_block
from transpiler import TranspileError, grad, hvp, jvp

sla = pytest.importorskip("scipy.linalg")

USER = """
def gp_evidence(x, noise):
    n = x.shape[0]
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + noise * np.eye(n)
    c, low = sla.cho_factor(K)
    alpha = sla.cho_solve((c, low), np.sin(x))
    L = sla.cholesky(K, lower=True)
    return np.sum(np.sin(x) * alpha) + 2.0 * np.sum(np.log(np.diag(L)))

def triangular(x):
    A = np.outer(x, x) + np.diag(x + 3.0)
    y = sla.solve_triangular(A, x * 2.0, lower=True)
    z = sla.solve_triangular(A, np.ones(x.shape[0]), trans=1, unit_diagonal=True)
    w = sla.solve(A, x, assume_a="sym") + sla.solve(A + 0.5 * np.eye(x.shape[0]), x,
                                                     transposed=True)
    return np.sum(y * z) + np.sum(w ** 2) + sla.det(A) * 0.01 + np.sum(sla.inv(A))

def propagator(k):
    A = np.array([[0.0, 1.0], [-k[0], -k[1]]])
    state = sla.expm(A * 0.7) @ np.array([1.0, 0.0])
    return np.sum(state ** 2)
"""

LU = """
def lu_twice(x):
    A = np.outer(x, x[::-1]) + np.diag(x + 2.0)
    factors = sla.lu_factor(A)
    y = sla.lu_solve(factors, np.ones(x.shape[0]))
    z = sla.lu_solve(factors, y * x, trans=1)
    return np.sum(z * z)
"""
MORE = """
def implicit_heat(x):
    n = x.shape[0]
    ab = np.vstack([np.concatenate([[0.0], -x[1:]]), 1.0 + 2.0 * x,
                    np.concatenate([-x[:-1], [0.0]])])
    u = np.cos(np.arange(n) * 0.5)
    for _ in range(3):
        u = sla.solve_banded((1, 1), ab, u)
    s = sla.solveh_banded(np.vstack([-0.2 * x, 2.0 + x]), u)
    return np.sum(u ** 2) + np.sum(s)

def spectral(x):
    n = x.shape[0]
    A = np.outer(x, x) + np.diag(np.arange(n) * 2.0 + 1.0)
    w, v = sla.eigh(A)
    top = sla.eigvalsh(A, subset_by_index=[n - 1, n - 1])
    q, r = sla.qr(A + np.triu(np.ones_like(A)))
    s = sla.svdvals(A[:, :2])
    fit = sla.lstsq(A[:, :3], x)[0]
    return np.sum(w * v[0] ** 2) + top[0] + np.sum(np.abs(np.diag(r))) + np.sum(s) + \
        np.sum(fit) + np.sum(q[:, 0] * r[0])

def matrix_functions(x):
    A = np.array([[1.0 + x[0], x[1]], [0.5 * x[1], 2.0 + x[2]]])
    return np.sum(sla.logm(A)) + np.sum(sla.sqrtm(A) @ sla.expm(0.3 * A)) + \
        np.trace(sla.cosm(A) + sla.tanhm(A))

def structured(x):
    T = sla.toeplitz(x, x[::-1] * 0.5)
    C = sla.circulant(x)
    B = sla.block_diag(T[:2, :2], x[:2], 3.0)
    return np.sum(T @ C) + np.sum(B ** 2) + np.sum(sla.toeplitz(x) ** 3)
"""
# a solve's gradient reaches its factorization already on the matrix (runtime FactorGrad),
# and a log determinant's diagonal takes the inverse's shortcut: each way a factor is made
# and read
FACTORS = """
def gp_upper(x, noise):
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + noise * np.eye(x.shape[0])
    c, low = sla.cho_factor(K, lower=False)
    alpha = sla.cho_solve((c, low), np.stack([np.sin(x), x], axis=1))
    beta = sla.cho_solve((c, low), alpha[:, 0] * x)
    return np.sum(alpha ** 2) + np.sum(beta) + np.sum(np.log(np.diag(c)))

def gp_numpy_factor(x, noise):
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + noise * np.eye(x.shape[0])
    L = np.linalg.cholesky(K)
    alpha = sla.cho_solve((L, True), np.cos(x))
    weighted = np.sum(np.arange(1.0, x.shape[0] + 1.0) * np.log(np.diag(L)))
    return np.sum(alpha * x) + weighted

def factor_read_whole(x, noise):
    K = np.outer(x, x) + (1.0 + noise) * np.eye(x.shape[0])
    factor = sla.cho_factor(K, lower=True)
    alpha = sla.cho_solve(factor, x)
    T = np.tril(np.outer(x, x[::-1])) + 3.0 * np.eye(x.shape[0])
    gamma = sla.cho_solve((T, True), x * x)
    return np.sum(alpha * x) + np.sum(factor[0] ** 2) + np.sum(gamma) + \
        2.0 * np.sum(np.log(np.diag(factor[0])))
"""
CASES = [("gp_evidence", (np.array([0.1, 0.7, 1.5, 2.0]), 0.3)),
         *((name, (np.array([0.1, 0.7, 1.5, 2.0]), 0.3)) for name in
           ("gp_upper", "gp_numpy_factor", "factor_read_whole")),
         ("triangular", (np.array([0.5, -0.3, 0.8]),)), ("propagator", (np.array([2.0, 0.3]),)),
         *((name, (np.array([0.5, 0.3, 0.8, 0.4]),)) for name in
           ("implicit_heat", "spectral", "matrix_functions", "structured"))]


@pytest.mark.parametrize("name, args", CASES, ids=[c[0] for c in CASES])
def test_solves_and_factorizations_match_finite_differences(name, args):
    f = make(USER + MORE + FACTORS, name=name, sla=sla)
    x, rest = args[0], args[1:]
    expected = central_differences(lambda v: f(v, *rest), x)
    np.testing.assert_allclose(grad(f)(*args), expected, rtol=1e-6, atol=1e-8)
    direction = np.cos(np.arange(x.size) + 1.0)
    _, tangent = jvp(f, args, (direction,) + (None,) * len(rest))
    assert tangent == pytest.approx(expected @ direction, rel=1e-6)
    gradient, h = grad(f), 1e-5
    np.testing.assert_allclose(
        hvp(f)(*args, direction),
        (gradient(x + h * direction, *rest) - gradient(x - h * direction, *rest)) / (2 * h),
        rtol=1e-5, atol=1e-7)


def test_lu_factors_reused_by_two_solves():
    f = make(LU, sla=sla)
    x = np.array([0.4, -0.6, 0.9])
    expected = central_differences(f, x)
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(f, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)


def test_the_readme_s_scipy_linalg_block_prints_what_it_says(capsys):
    run_readme_block("# SciPy's linear algebra", capsys)


def test_complex_matrices_and_dask_arrays_are_refused():
    f = make("def f(x):\n    z = np.diag(x) * (1.0 + 1j) + 3.0 * np.eye(2)\n"
             "    return np.abs(np.sum(sla.solve(z, x)))\n", sla=sla)
    with pytest.raises(TranspileError, match="complex numbers are not supported yet by "
                       "scipy.linalg.solve|sla.solve"):
        grad(f)(np.array([0.3, 0.5]))
    da = pytest.importorskip("dask.array")
    g = make("def g(x):\n    return np.sum(sla.solve(np.diag(x) + 3.0 * np.eye(2), x))\n",
             sla=sla)
    with pytest.raises(TypeError, match="Dask"):
        grad(g)(da.from_array(np.array([0.3, 0.5]), chunks=1))


@pytest.mark.parametrize("body, mode, says", [
    ("return np.sum(sla.sqrtm(np.diag(x) - 5.0 * np.eye(2)).real)", "grad", "negative eigen"),
    ("return np.sum(sla.eigh(np.diag(x), 2.0 * np.eye(2))[0])", "grad", "generalized"),
    ("return np.sum(sla.toeplitz(np.outer(x, x)))", "grad", "1-D"),
    ("return np.sum(sla.qr(np.vstack([np.diag(x), x]))[1])", "jvp", "mode='complete'"),
    ("return np.sum(sla.qr(np.vstack([np.diag(x), x]))[0])", "grad", "mode='complete'"),
])
def test_what_has_no_derivative_here_raises_when_run(body, mode, says):
    f = make(f"def f(x):\n    {body}\n", sla=sla)
    x = np.array([0.3, 0.5])
    with pytest.raises(NotImplementedError, match=says):
        grad(f)(x) if mode == "grad" else jvp(f, (x,), (np.ones(2),))


def test_a_banded_solve_of_200000_unknowns_stays_banded():
    """The gradient of a tridiagonal solve's data: band storage throughout (a dense matrix of
    this size would take 320 GB)."""
    import tracemalloc

    f = make("def f(ab, b):\n    return np.sum(sla.solve_banded((1, 1), ab, b) ** 2)\n",
             sla=sla)
    n = 200_000
    ab = np.vstack([np.full(n, -1.0), np.full(n, 4.0), np.full(n, -1.0)])
    b = np.cos(np.arange(n) * 1e-3)
    gradient = grad(f, wrt=(0, 1))
    gradient(ab[:, :10], b[:10])  # (compiled first)
    tracemalloc.start()
    gab, gb = gradient(ab, b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * ab.nbytes
    x = sla.solve_banded((1, 1), ab, b)
    np.testing.assert_allclose(gab[1], -(gb * x) * 1.0, rtol=1e-12)  # the diagonal's: -gb x
    assert gab[0, 0] == 0.0 and gab[2, -1] == 0.0  # the storage's padding
