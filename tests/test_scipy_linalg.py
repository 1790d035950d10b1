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
CASES = [("gp_evidence", (np.array([0.1, 0.7, 1.5, 2.0]), 0.3)),
         ("triangular", (np.array([0.5, -0.3, 0.8]),)), ("propagator", (np.array([2.0, 0.3]),))]


@pytest.mark.parametrize("name, args", CASES, ids=[c[0] for c in CASES])
def test_solves_and_factorizations_match_finite_differences(name, args):
    f = make(USER, name=name, sla=sla)
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
