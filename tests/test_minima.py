"""Minima found by scipy.optimize's minimizers, differentiated by the implicit function theorem
on ``grad_x f(x*, p) = 0`` (passes/solvers.py, runtime/implicit.py, transpiler/
implicit.py): ``dx*/dp = -H^-1 d(grad_x f)/dp``, the Hessian and the mixed second derivatives
from the compiler's forward-over-reverse mode, checked against finite differences of the whole
computation (the optimizer run again to a tolerance far below the differences' error) in
reverse and forward mode."""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import central_differences, run_readme_block
from transpiler import TranspileError, grad, hessian, hvp, jvp, value_and_grad
from transpiler.implicit import STATIONARY

so = pytest.importorskip("scipy.optimize")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(30, 4))
Y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * RNG.normal(size=30)
TIGHT = {"gtol": 1e-12}


def ridge_closure(lam):
    """Ridge regression: the weights by BFGS of a lambda closing over the penalty."""
    w = so.minimize(lambda w: np.sum((X @ w - Y) ** 2) + lam * np.sum(w ** 2), np.zeros(4),
                    method="BFGS", options=TIGHT).x
    return np.sum(w ** 2)


def ridge_exact(lam):
    w = np.linalg.solve(X.T @ X + lam * np.eye(4), X.T @ Y)
    return np.sum(w ** 2)


def objective(w, a, b):
    return np.sum(np.cosh(w - a)) + b * np.sum(w ** 4) + 0.3 * w[0] * w[-1]


def result_object(a, b):
    """``res = minimize(...)``: the result's .x, .fun and data fields read later."""
    res = so.minimize(objective, np.zeros(3), args=(a, b), method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15})
    if not res.success:
        raise RuntimeError(res.message)
    return np.sum(res.x * np.arange(1.0, 4.0)) + 2.0 * res.fun


def defined_inside(a, b):
    """The objective a function defined inside, closing over both parameters."""
    def energy(w):
        return np.sum(np.cosh(w - a)) + b * np.sum(w ** 4)

    w = so.minimize(energy, np.ones(3), method="Newton-CG",
                    jac=lambda w: np.sinh(w - a) + 4.0 * b * w ** 3,
                    options={"xtol": 1e-14}).x
    return np.sum(np.sin(w))


def value_and_gradient(w, a, b):
    return objective(w, a, b), np.sinh(w - a) + 4.0 * b * w ** 3 + 0.3 * np.array(
        [w[-1], 0.0, w[0]])


def with_jac_true(a, b):
    """An objective returning its gradient too (jac=True): its value is differentiated."""
    return np.sum(so.minimize(value_and_gradient, np.zeros(3), args=(a, b), jac=True,
                              method="BFGS", options=TIGHT).x ** 2)


def scalar(a, b):
    """minimize_scalar, unbounded (Brent) and bounded, the minimum inside its bounds."""
    one = so.minimize_scalar(lambda t: (t - a) ** 2 + b * np.cos(t), tol=1e-12).x
    two = so.minimize_scalar(lambda t: np.cosh(t - b) + a * t ** 2, bounds=(-5.0, 5.0),
                             method="bounded", options={"xatol": 1e-12}).x
    return one * two


def bounded_inactive(a, b):
    """L-BFGS-B with bounds that do not hold the minimum."""
    w = so.minimize(objective, np.zeros(3), args=(a, b), method="L-BFGS-B",
                    bounds=[(-10.0, 10.0)] * 3, options={"gtol": 1e-12, "ftol": 1e-15}).x
    return np.sum(w ** 3)


def many(c):
    """A hundred unknowns: the Hessian solved by MINRES on Hessian-vector products."""
    n = c.size
    w = so.minimize(lambda w: np.sum(np.cosh(w - c)) + 0.5 * np.sum(np.diff(w) ** 2),
                    np.zeros(n), method="L-BFGS-B").x
    return np.sum(w * np.linspace(0.0, 1.0, n))


def many_exact(c):
    """``many`` by Newton's method on its gradient, to full precision."""
    n = c.size
    laplacian = 2.0 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    laplacian[0, 0] = laplacian[-1, -1] = 1.0
    w = np.zeros(n)
    for _ in range(30):
        w = w - np.linalg.solve(np.diag(np.cosh(w - c)) + laplacian,
                                np.sinh(w - c) + laplacian @ w)
    return np.sum(w * np.linspace(0.0, 1.0, n))


def bilevel(lam):
    """Hyperparameter tuning: the validation loss of ridge weights fitted on training data."""
    train, valid = slice(0, 20), slice(20, 30)
    res = so.minimize(lambda w: np.mean((X[train] @ w - Y[train]) ** 2)
                      + np.exp(lam) * np.sum(w ** 2), np.zeros(4), method="BFGS", options=TIGHT)
    return np.mean((X[valid] @ res.x - Y[valid]) ** 2)


DESIGN = np.array([[1.0, 0.2], [1.0, 0.9], [1.0, 1.7], [1.0, 2.4], [1.0, 3.1]])
TIMES = np.linspace(0.0, 2.0, 9)
DECAY = 1.5 * np.exp(-0.7 * TIMES) + 0.01 * np.cos(5.0 * TIMES)


def _linear_residual(w, A, y):
    return A @ w - y


def linear_least_squares(y, scale):
    # res.x, res.cost and res.fun of a linear fit, the data in args=
    res = so.least_squares(_linear_residual, np.zeros(2), args=(DESIGN * scale, y),
                           xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return np.sum(res.x * np.array([1.0, -2.0])) + res.cost + np.sum(res.fun * y)


def linear_exact(y, scale):
    w = np.linalg.lstsq(DESIGN * scale, y, rcond=None)[0]
    r = DESIGN * scale @ w - y
    return np.sum(w * np.array([1.0, -2.0])) + 0.5 * np.sum(r ** 2) + np.sum(r * y)


def exponential_fit(scale, shift):
    # a lambda closing over the data, bounds that do not hold the fit
    w = so.least_squares(lambda w: w[0] * np.exp(-w[1] * TIMES) - DECAY * scale - shift,
                         [1.0, 1.0], bounds=([0.0, 0.0], [10.0, 10.0]), xtol=1e-15,
                         ftol=1e-15, gtol=1e-15).x
    return w[0] * w[1] + w[1] ** 2


def exponential_exact(scale, shift):
    data = DECAY * scale + shift
    w = so.least_squares(lambda w: w[0] * np.exp(-w[1] * TIMES) - data, [1.0, 1.0]).x
    for _ in range(30):  # Newton on half the sum of squares, to full precision
        e = np.exp(-w[1] * TIMES)
        r = w[0] * e - data
        J = np.stack([e, -w[0] * TIMES * e], axis=1)
        H = J.T @ J + np.array([[0.0, np.sum(r * -TIMES * e)],
                                [np.sum(r * -TIMES * e), np.sum(r * w[0] * TIMES ** 2 * e)]])
        w = w - np.linalg.solve(H, J.T @ r)
    return w[0] * w[1] + w[1] ** 2


def decay_model(x, a, b):
    return a * np.exp(-b * x)


def curve(y):
    # curve_fit of a module function, popt unpacked (the covariance unread)
    popt, pcov = so.curve_fit(decay_model, TIMES, y, p0=[1.0, 1.0], xtol=1e-15, ftol=1e-15,
                              gtol=1e-15)
    return popt[0] * popt[1]


def _newton_fit(w, y, c, sigma):
    for _ in range(30):  # Newton on the weighted half sum of squares, to full precision
        e = np.exp(-w[1] * TIMES)
        r = (w[0] * e + c - y) / sigma
        J = np.stack([e, -w[0] * TIMES * e], axis=1) / sigma[:, None]
        off = np.sum(r * -TIMES * e / sigma)
        H = J.T @ J + np.array([[0.0, off], [off, np.sum(r * w[0] * TIMES ** 2 * e / sigma)]])
        w = w - np.linalg.solve(H, J.T @ r)
    return w


def curve_exact(y):
    w = so.curve_fit(decay_model, TIMES, y, p0=[1.0, 1.0])[0]
    w = _newton_fit(w, y, 0.0, np.ones_like(TIMES))
    return w[0] * w[1]


def weighted_curve(y, c):
    # a lambda closing over an offset, weighted by sigma, read as [0]
    popt = so.curve_fit(lambda x, a, b: a * np.exp(-b * x) + c, TIMES, y, p0=[1.0, 1.0],
                        sigma=0.1 + TIMES, xtol=1e-15, ftol=1e-15, gtol=1e-15)[0]
    return np.sum(popt ** 2)


def weighted_exact(y, c):
    w = so.curve_fit(lambda x, a, b: a * np.exp(-b * x) + c, TIMES, y, p0=[1.0, 1.0],
                     sigma=0.1 + TIMES)[0]
    w = _newton_fit(w, y, c, 0.1 + TIMES)
    return np.sum(w ** 2)


CASES = [
    (ridge_closure, (0.7,), ridge_exact),
    (curve, (DECAY,), curve_exact),
    (weighted_curve, (DECAY, 0.1), weighted_exact),
    (linear_least_squares, (np.array([0.3, 1.1, 1.9, 2.2, 3.4]), 1.3), linear_exact),
    (exponential_fit, (1.1, 0.05), exponential_exact),
    (result_object, (0.4, 0.2), None),
    (defined_inside, (0.4, 0.2), None),
    (with_jac_true, (0.4, 0.2), None),
    (scalar, (0.4, 0.6), None),
    (bounded_inactive, (0.4, 0.2), None),
    (bilevel, (-1.0,), None),
]


def _newton(fun, x, args, returns_jac):
    """``x`` polished by Newton's method on ``fun(x, *args)`` to full precision (an optimizer
    stops short of what central differences need): the exact gradient (the objective's own,
    or the compiler's), its Jacobian by differences."""
    def slope(x):
        if returns_jac:
            return np.asarray(fun(x, *args)[1], dtype=float)
        return np.asarray(STATIONARY.gradient(fun, x, args), dtype=float)

    x = np.asarray(x, dtype=float)
    for _ in range(6):
        g = slope(x)
        columns = []
        for e in np.eye(x.size):
            e = e.reshape(x.shape) * 1e-6
            columns.append(np.ravel(slope(x + e) - slope(x - e)) / 2e-6)
        step = np.linalg.solve(np.stack(columns, axis=1), np.ravel(g))
        x = x - step.reshape(x.shape)
    return x if x.ndim else float(x)


class _Polished:
    """While it is entered, scipy.optimize's minimizers return results polished by Newton."""

    def __enter__(self):
        self.saved = so.minimize, so.minimize_scalar
        minimize, minimize_scalar = self.saved

        def polished_minimize(fun, x0, args=(), jac=None, **options):
            res = minimize(fun, x0, args=args, jac=jac, **options)
            res.x = _newton(fun, res.x, args, jac is True)
            res.fun = fun(res.x, *args)[0] if jac is True else fun(res.x, *args)
            return res

        def polished_scalar(fun, bracket=None, bounds=None, args=(), **options):
            res = minimize_scalar(fun, bracket=bracket, bounds=bounds, args=args, **options)
            res.x = float(_newton(fun, float(res.x), args, False))
            return res

        so.minimize, so.minimize_scalar = polished_minimize, polished_scalar

    def __exit__(self, *exc):
        so.minimize, so.minimize_scalar = self.saved


def _check(f, args, rtol=1e-5, reference=None):
    """``reference``: the same function in closed form (else ``f``, its optimizers' results
    polished)."""
    grad(f, wrt=0)(*args)  # (compiled before scipy.optimize is patched)
    for i in range(len(args)):
        def along(v, i=i):
            if reference is not None:
                return reference(*args[:i], v, *args[i + 1:])
            with _Polished():
                return f(*args[:i], v, *args[i + 1:])

        expected = central_differences(along, args[i], h=1e-5)
        got = grad(f, wrt=i)(*args)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-7)
        direction = np.cos(np.arange(np.size(args[i])) + 1.0).reshape(np.shape(args[i]))
        tangents = tuple(direction if j == i else None for j in range(len(args)))
        _, tangent = jvp(f, args, tangents)
        assert tangent == pytest.approx(np.sum(np.asarray(expected) * direction), rel=rtol,
                                        abs=1e-7)


@pytest.mark.parametrize("f, args, reference", CASES, ids=[c[0].__name__ for c in CASES])
def test_minima_match_finite_differences_in_both_modes(f, args, reference):
    _check(f, args, reference=reference)


def test_ridge_matches_its_closed_form():
    assert grad(ridge_closure)(0.7) == pytest.approx(
        central_differences(ridge_exact, 0.7), rel=1e-7)


def test_many_unknowns_use_hessian_vector_products():
    c = np.sin(np.arange(100.0))
    direction = np.cos(np.arange(100.0))
    expected = (many_exact(c + 1e-5 * direction) - many_exact(c - 1e-5 * direction)) / 2e-5
    assert np.dot(grad(many)(c), direction) == pytest.approx(expected, rel=1e-4)
    assert jvp(many, (c,), (direction,))[1] == pytest.approx(expected, rel=1e-4)


def test_the_value_is_the_optimizer_s_own_and_the_source_reads_as_the_theorem():
    value, _ = value_and_grad(result_object)(0.4, 0.2)
    assert value == result_object(0.4, 0.2)
    source = grad(result_object).source
    assert "rt.implicit_minimum(" in source and "rt.implicit_minimum_adjoint(" in source


def _constrained(a):
    return so.minimize(objective, np.zeros(3), args=(a, 0.1),
                       constraints=[{"type": "eq", "fun": lambda w: w[0]}]).x[1]


class Model:
    def __init__(self, a):
        self.a = a

    def loss(self, w):
        return np.sum((w - self.a) ** 2)


def _method_of_a_local(a):
    model = Model(a)
    return so.minimize(model.loss, np.zeros(2)).x[0]


def _whole(a):
    res = so.minimize(objective, np.zeros(3), args=(a, 0.1))
    return res


def _its_jacobian(a):
    res = so.minimize(objective, np.zeros(3), args=(a, 0.1))
    return np.sum(res.jac)


def _twice(a):
    res = so.minimize(objective, np.zeros(3), args=(a, 0.1))
    res = so.minimize(objective, res.x, args=(a, 0.2))
    return res.x[0]


def _robust(a):
    return so.least_squares(_linear_residual, np.zeros(2), args=(DESIGN, DESIGN[:, 1] * a),
                            loss="soft_l1").x[0]


def _residual_jacobian(a):
    res = so.least_squares(_linear_residual, np.zeros(2), args=(DESIGN, DESIGN[:, 1] * a))
    return np.sum(res.jac)


def _covariance_read(a):
    popt, pcov = so.curve_fit(decay_model, TIMES, DECAY * a, p0=[1.0, 1.0])
    return popt[0] + pcov[0, 0]


def _covariance_indexed(a):
    return so.curve_fit(decay_model, TIMES, DECAY * a, p0=[1.0, 1.0])[1][0, 0]


@pytest.mark.parametrize("f, says", [
    (_covariance_read, "covariance pcov is not differentiated"),
    (_covariance_indexed, "covariance is not differentiated"),
    (_constrained, "constraints"), (_method_of_a_local, "method of"),
    (_whole, r"res\.x where"), (_its_jacobian, r"res\.jac"), (_twice, "assigned once"),
    (_robust, "loss other than 'linear'"), (_residual_jacobian, r"res\.jac")])
def test_what_the_theorem_is_not_applied_to_is_refused_at_its_line(f, says):
    with pytest.raises(TranspileError, match=says):
        grad(f)(0.5)


def test_an_active_bound_is_refused_when_the_gradient_is_taken():
    def pressed(a):
        return so.minimize(lambda w: np.sum((w - a) ** 2), np.zeros(2), method="L-BFGS-B",
                           bounds=[(0.0, 1.0), (-1.0, 1.0)]).x[1]

    with pytest.raises(ValueError, match="on a bound"):
        grad(pressed)(-0.5)
    assert grad(pressed)(np.float64(0.25)) == pytest.approx(1.0, rel=1e-6)


def test_a_point_the_optimizer_did_not_converge_to_is_not_differentiated():
    def stopped_early(a):
        return np.sum(so.minimize(objective, np.zeros(3), args=(a, 0.2),
                                  options={"maxiter": 1}).x)

    with pytest.raises(RuntimeError, match="not a minimum"):
        grad(stopped_early)(0.5)


# an objective calling a helper of the user's inside an expression (left a call, not inlined:
# value_and_gradient's objective(w, a, b)): its third derivatives are not compiled, and hvp
# through its minimum raises
_HELPER_CALLED = {"with_jac_true"}


@pytest.mark.parametrize("f, args, reference", CASES, ids=[c[0].__name__ for c in CASES])
def test_second_derivatives_through_minima(f, args, reference):
    # the objective's third derivatives against the adjoint (forward over forward over
    # reverse): hvp of each argument against the closed form's (where there is one), else
    # against the gradient differenced along v (to the optimizer's tolerance: a missing term
    # would be of the size of the product itself)
    for i in range(len(args)):
        v = np.cos(np.arange(np.size(args[i])) + 0.5).reshape(np.shape(args[i]))
        v = v if np.ndim(v) else float(v)
        if f.__name__ in _HELPER_CALLED:
            with pytest.raises(NotImplementedError, match="third derivatives"):
                hvp(f, wrt=i)(*args, v)
            continue
        got = hvp(f, wrt=i)(*args, v)
        if reference is not None:
            np.testing.assert_allclose(got, hvp(reference, wrt=i)(*args, v), rtol=1e-6,
                                       atol=1e-9)
            continue
        gradient = grad(f, wrt=i)
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + 1e-3 * v, args[i] - 1e-3 * v
        expected = (gradient(*up) - gradient(*down)) / 2e-3
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)


def test_the_hessian_of_a_bilevel_loss():
    # hyperparameter tuning's curvature: d2/dlam2 of the validation loss of ridge weights
    h = 1e-3
    expected = (grad(bilevel)(-1.0 + h) - grad(bilevel)(-1.0 - h)) / (2 * h)
    assert hessian(bilevel)(-1.0) == pytest.approx(expected, rel=1e-4)


def test_readme_minima_example(capsys):
    run_readme_block("# Minima by the implicit function theorem", capsys)
