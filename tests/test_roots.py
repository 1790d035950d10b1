"""Roots found by scipy.optimize's root finders, differentiated by the implicit function theorem
(passes/solvers.py, runtime/implicit.py): ``dx/dp = -F_p / F_x`` at the root the solver
found (``-J^-1 F_p`` for a system), checked against finite differences of the whole computation
(the solver run again, to a tolerance far below the differences' error), in reverse and forward
mode."""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import central_differences, run_readme_block
from transpiler import TranspileError, grad, hvp, jvp, value_and_grad

so = pytest.importorskip("scipy.optimize")


def kepler(e, m):
    """The eccentric anomaly E of Kepler's equation E - e sin E = M."""
    return so.brentq(lambda E: E - e * np.sin(E) - m, 0.0, 2.0 * np.pi, xtol=1e-15)


def residual(x, a, b):
    return x ** 3 + a * x - b


def bracketed(a, b):
    one = so.brentq(residual, -5.0, 5.0, args=(a, b), xtol=1e-15)
    two = so.brenth(residual, -5.0, 5.0, args=(a, b), xtol=1e-15)
    three = so.ridder(residual, -5.0, 5.0, args=(a, b), xtol=1e-15)
    four = so.bisect(residual, -5.0, 5.0, args=(a, b), xtol=1e-15)
    five = so.toms748(residual, -5.0, 5.0, args=(a, b), xtol=1e-15)
    return one * two + three * four + five


def by_newton(a, b):
    plain = so.newton(residual, 1.0, args=(a, b), tol=1e-15)
    with_slope = so.newton(residual, 1.0, fprime=lambda x, a, b: 3.0 * x ** 2 + a,
                           args=(a, b), tol=1e-15)
    return plain * with_slope


def scalar_result(a, b):
    one = so.root_scalar(residual, args=(a, b), bracket=(-5.0, 5.0), method="brentq",
                         xtol=1e-15).root
    two = so.root_scalar(lambda x: np.exp(x) - b * a, x0=0.5, method="secant", xtol=1e-15,
                         rtol=1e-15).root
    return one + two ** 2


def vectorized(a, b):
    x = so.newton(lambda x: x ** 3 + a * x - b, np.ones_like(b), tol=1e-15)
    return np.sum(x ** 2)


def steady_states(rates, load):
    """A loss over the steady states of a family of nonlinear springs (one root each)."""
    loss = 0.0
    for k in rates:
        x = so.brentq(lambda s: k * s + s ** 3 - load, -10.0, 10.0, xtol=1e-15)  # noqa: B023
        loss = loss + (x - 0.5) ** 2
    return loss


class Spring:
    def __init__(self, k):
        self.k = k

    def residual(self, x, load):
        return self.k * x + x ** 3 - load


def by_a_method(k, load):
    """The residual a method of an object built inside."""
    spring = Spring(k)
    return so.brentq(spring.residual, -10.0, 10.0, args=(load,), xtol=1e-15) ** 2


def equilibrium(x, a, b):
    return np.array([x[0] + 0.5 * np.sin(x[1]) - a, x[1] + 0.1 * x[0] ** 3 - b * x[0] - 1.0])


def result_objects(a, b):
    """Solvers' results assigned to names, their solutions and data fields read later."""
    sol = so.root_scalar(residual, args=(a, b), bracket=(-5.0, 5.0), xtol=1e-15)
    state = so.root(equilibrium, np.zeros(2), args=(a, b), tol=1e-13)
    if not (sol.converged and state.success):
        raise RuntimeError(state.message)
    return sol.root * np.sum(state.x ** 2) + np.sum(state.fun) + 0.0 * sol.iterations


def fixed_points(a, b):
    """x = f(x) by fixed_point (Steffensen's del2 and plain iteration), scalar and vector."""
    x = so.fixed_point(lambda x, a: np.cos(x) * a, 0.5, args=(a,), xtol=1e-14)
    y = so.fixed_point(lambda y: 0.5 * np.tanh(y[::-1]) + b * np.array([1.0, -0.5]),
                       np.zeros(2), xtol=1e-14, method="iteration", maxiter=2000)
    return x ** 2 + np.sum(y * x)


def systems(a, b):
    """A steady state by fsolve and one by root, in a loss."""
    x = so.fsolve(equilibrium, np.zeros(2), args=(a, b), xtol=1e-13)
    y = so.root(lambda z: z ** 3 + a * z - b * np.array([1.0, 2.0]), np.ones(2), tol=1e-13,
                jac=lambda z: np.diag(3.0 * z ** 2 + a)).x
    return np.sum(x ** 2) + np.sum(y * x)


CASES = [
    (lambda e: kepler(e, 1.2), (0.3,)),
    (bracketed, (1.5, 2.0)),
    (by_newton, (1.5, 2.0)),
    (scalar_result, (1.5, 2.0)),
    (vectorized, (1.5, np.array([1.0, 2.0, 3.5]))),
    (steady_states, (np.array([0.5, 1.0, 2.0]), 1.3)),
    (by_a_method, (1.3, 2.0)),
    (systems, (0.7, 1.3)),
    (result_objects, (0.7, 1.3)),
    (fixed_points, (0.9, 0.4)),
]


def _check(f, args):
    for i in range(len(args)):
        def along(v, i=i):
            return f(*args[:i], v, *args[i + 1:])

        expected = central_differences(along, args[i])
        got = grad(f, wrt=i)(*args)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
        direction = np.cos(np.arange(np.size(args[i])) + 1.0).reshape(np.shape(args[i]))
        tangents = tuple(direction if j == i else None for j in range(len(args)))
        _, tangent = jvp(f, args, tangents)
        assert tangent == pytest.approx(np.sum(np.asarray(expected) * direction), rel=1e-6)


@pytest.mark.parametrize("f, args", CASES, ids=["kepler", "bracketed", "newton",
                                                "root_scalar", "vectorized", "steady",
                                                "method", "systems", "results",
                                                "fixed_point"])
def test_roots_match_finite_differences_in_both_modes(f, args):
    if getattr(f, "__name__", "") == "<lambda>":
        f = _kepler_at
    _check(f, args)


def _kepler_at(e):
    return kepler(e, 1.2)


def test_the_value_is_the_solver_s_own_and_the_source_reads_as_the_theorem():
    value, slope = value_and_grad(_kepler_at)(0.3)
    assert value == kepler(0.3, 1.2)
    E = value
    assert slope == pytest.approx(np.sin(E) / (1.0 - 0.3 * np.cos(E)), rel=1e-12)
    source = grad(kepler).source
    assert "rt.root_of(" in source and "rt.root_of_adjoint(" in source


def _full(a):
    return so.brentq(residual, -5.0, 5.0, args=(a, 1.0), full_output=True)[0]


def _args_name(a):
    params = (a, 1.0)
    return so.brentq(residual, -5.0, 5.0, args=params)


def _whole_result(a):
    sol = so.root_scalar(residual, args=(a, 1.0), bracket=(-5.0, 5.0))
    return sol


def _conditional(a):
    return so.brentq(residual, -5.0, 5.0, args=(a, 1.0)) if a > 0 else 0.0


def _jacobian_too(a):
    return so.root(lambda z: (z ** 3 - a, np.diag(3.0 * z ** 2)), np.ones(2), jac=True).x


def _whole_system(a):
    return so.root(lambda z: z ** 3 - a, np.ones(2)).x if a > 0 else np.zeros(2)


@pytest.mark.parametrize("f, says", [
    (_full, "full_output"), (_args_name, "written as a tuple"),
    (_whole_result, r"sol\.root where"), (_conditional, "always computed"),
    (_jacobian_too, "jac=True"), (_whole_system, "always computed")])
def test_what_the_theorem_is_not_applied_to_is_refused_at_its_line(f, says):
    with pytest.raises(TranspileError, match=says):
        grad(f)(1.5)


def _gradient_differences(f, args, i, v, h=1e-5):
    """The gradient in argument ``i`` differenced along ``v``: ``H v``, to O(h^2)."""
    g = grad(f, wrt=i)
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h * v, args[i] - h * v
    return (g(*up) - g(*down)) / (2 * h)


@pytest.mark.parametrize("f, args", [
    (_kepler_at, (0.3,)), (bracketed, (1.5, 2.0)), (by_newton, (1.5, 2.0)),
    (scalar_result, (1.5, 2.0)), (systems, (0.7, 1.3)), (result_objects, (0.7, 1.3)),
    (steady_states, (np.array([0.5, 1.0, 2.0]), 1.3))])
def test_second_derivatives_through_roots_match_differences_of_the_gradient(f, args):
    # F's second derivatives against the adjoint, forward over reverse: hvp of each argument
    for i in range(len(args)):
        v = np.cos(np.arange(np.size(args[i])) + 0.5).reshape(np.shape(args[i]))
        v = v if np.ndim(v) else float(v)
        got = hvp(f, wrt=i)(*args, v)
        expected = _gradient_differences(f, args, i, v)
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-8)


def test_the_hessian_of_a_vectorized_root():
    # newton with an array x0: one equation per unknown, dF/dx diagonal (no dense Jacobian)
    b, v = np.linspace(1.0, 3.0, 80), np.sin(np.arange(80.0))
    got = hvp(vectorized, wrt=1)(1.5, b, v)
    expected = _gradient_differences(vectorized, (1.5, b), 1, v)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_second_derivatives_through_a_root_of_a_local_object_s_method_are_refused():
    # its function is read only as called there: the first derivative only
    with pytest.raises(TranspileError, match="second derivatives"):
        hvp(by_a_method)(1.3, 2.0, 1.0)


def test_a_root_whose_slope_is_zero_has_no_derivative():
    def double_root(p):  # x^2 = p^2 - p^2: a double root at 0 (slope 0)
        return so.newton(lambda x: x * x + 0.0 * p, 1e-3 * 0.0 + 0.0, tol=1e-15, maxiter=5,
                         disp=False)

    with pytest.raises(ZeroDivisionError, match="not simple"):
        grad(double_root)(1.0)


def test_readme_roots_example(capsys):
    run_readme_block("# Roots by the implicit function theorem", capsys)


def test_a_point_the_solver_did_not_converge_to_is_not_differentiated():
    def stopped_early(a):
        return so.newton(residual, 3.0, args=(a, 1.0), maxiter=2, disp=False)

    with pytest.raises(RuntimeError, match="not a root"):
        grad(stopped_early)(1.5)


def test_a_system_whose_jacobian_is_singular_at_the_root_has_no_derivative():
    def flat(a):
        return np.sum(so.fsolve(lambda z: np.array([z[0] + z[1] - a, 2.0 * z[0] + 2.0 * z[1]
                                                    - 2.0 * a]), np.zeros(2)))

    with pytest.raises(np.linalg.LinAlgError, match="not regular"):
        grad(flat)(1.0)


def test_second_derivatives_through_a_fixed_point():
    # scipy's fixed_point is differentiated as a converged loop's fixed point: hvp goes through
    for i, args in ((0, (0.9, 0.4)), (1, (0.9, 0.4))):
        got = hvp(fixed_points, wrt=i)(*args, 1.0)
        assert got == pytest.approx(_gradient_differences(fixed_points, args, i, 1.0), rel=1e-6,
                                    abs=1e-8)
