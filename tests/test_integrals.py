"""Integrals of scipy.integrate by differentiation under the integral sign (passes/solvers.py,
runtime/integrate.py): ``d/dp integral_a^b f(t, p) dt = integral_a^b df/dp dt``, with
Leibniz's terms ``f(b) db - f(a) da`` for the limits, checked against central differences of
the whole computation at tight quadrature tolerances, in reverse and forward mode."""

from __future__ import annotations

import numpy as np
import pytest

integrate = pytest.importorskip("scipy.integrate")
from scipy.integrate import fixed_quad, quad, quad_vec  # noqa: E402

from transpiler import TranspileError, grad, hvp, jvp  # noqa: E402

TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}
CENTERS = np.array([-0.5, 0.25, 1.0])


def gaussian(s, c):
    # a closure over s, a parameter in the upper limit
    return quad(lambda t: np.exp(-s * t ** 2), 0.0, c, epsabs=1e-13, epsrel=1e-13)[0]


def bell(t, s, shift):
    return np.exp(-s * (t - shift) ** 2)


def symmetric(s, c):
    value, error = quad(bell, -c, c, args=(s, 0.3), epsabs=1e-13, epsrel=1e-13)
    return value * 2.0 + error * 0.0


def result_tuple(s, c):
    res = quad(bell, c - 1.0, c * c, args=(s, c), epsabs=1e-13, epsrel=1e-13)
    return res[0] ** 2


def decay(s, c):
    # an infinite limit: no Leibniz term there
    return quad(lambda t: np.exp(-s * t) * np.cos(c * t), 0.0, np.inf, epsabs=1e-13,
                epsrel=1e-12)[0]


def kinked(s, c):
    # a kink at c, given to quad as a break point
    return quad(lambda t: np.abs(t - c) * s, 0.0, 2.0, points=[c], epsabs=1e-13,
                epsrel=1e-13)[0]


def bumps(t, w):
    return np.sum(w * np.exp(-(t - CENTERS) ** 2))


def weighted_bumps(w, c):
    # an array parameter
    return quad(bumps, -1.0, c, args=(w,), epsabs=1e-13, epsrel=1e-13)[0] * np.sum(w)


def fourier(s, omega):
    # quad's cos weight, differentiated in its frequency too
    return quad(lambda t: np.exp(-s * t), 0.0, 3.0, weight="cos", wvar=omega,
                epsabs=1e-13, epsrel=1e-13)[0]


def moments(s, c):
    # quad_vec: a vector-valued integrand
    m = quad_vec(lambda t: np.array([1.0, t, t * t]) * np.exp(-s * t * t), 0.0, c,
                 epsabs=1e-13, epsrel=1e-12)[0]
    return m[2] / m[0] - (m[1] / m[0]) ** 2


def gauss_legendre(s, c):
    # fixed_quad: a finite sum, differentiated exactly (its integrand is called on an array)
    return fixed_quad(bell, 0.0, c, args=(s, 0.5), n=7)[0]


def cooling(k, c):
    # an integral in a loop, its parameter carried
    total = 0.0
    rate = k
    for i in range(3):
        total = total + quad(bell, 0.0, c + i, args=(rate, 0.1), epsabs=1e-13, epsrel=1e-13)[0]
        rate = rate * 1.1
    return total


CASES = [gaussian, symmetric, result_tuple, decay, kinked, weighted_bumps, fourier, moments,
         gauss_legendre, cooling]
POINTS = {weighted_bumps: (np.array([0.7, 1.2, 0.4]), 1.3), decay: (0.8, 1.7),
          kinked: (0.9, 0.6)}


def _central(f, args, i, direction, h=1e-5):
    up = list(args)
    down = list(args)
    up[i] = args[i] + h * direction
    down[i] = args[i] - h * direction
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_integrals_match_finite_differences_in_both_modes(f):
    args = POINTS.get(f, (0.7, 1.3))
    got = grad(f, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        if np.ndim(args[i]):
            want = [_central(f, args, i, e) for e in np.eye(np.size(args[i]))]
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
        else:
            np.testing.assert_allclose(g, _central(f, args, i, 1.0), rtol=1e-6, atol=1e-8)
    rng = np.random.default_rng(7)
    tangents = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal())
                     for a in args)
    value, tangent = jvp(f, args, tangents)
    assert value == pytest.approx(f(*args), rel=1e-12)
    h = 1e-5
    up = [a + h * t for a, t in zip(args, tangents, strict=True)]
    down = [a - h * t for a, t in zip(args, tangents, strict=True)]
    np.testing.assert_allclose(tangent, (f(*up) - f(*down)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_the_gradient_integrates_the_integrands_derivative():
    source = grad(symmetric, wrt=(0, 1)).source
    assert "rt.integral(" in source and "rt.integral_adjoint(" in source
    assert "rt.integral_limit_adjoint(" in source
    assert "dblquad" not in source and "leggauss" not in source


def test_a_closed_form():
    # integral_0^c exp(-s t) dt = (1 - exp(-s c)) / s
    def f(s, c):
        return quad(lambda t: np.exp(-s * t), 0.0, c, epsabs=1e-14, epsrel=1e-14)[0]

    s, c = 0.6, 2.0
    ds = (c * np.exp(-s * c)) / s - (1 - np.exp(-s * c)) / s ** 2
    dc = np.exp(-s * c)
    np.testing.assert_allclose(grad(f, wrt=(0, 1))(s, c), (ds, dc), rtol=1e-10)


def test_an_integral_with_nothing_to_differentiate_inside():
    def f(c):
        return quad(np.sin, 0.0, c)[0]

    assert grad(f)(1.1) == pytest.approx(np.sin(1.1), rel=1e-12)


def _whole(s):
    return quad(bell, 0.0, 1.0, args=(s, 0.0))


def _full(s):
    return quad(bell, 0.0, 1.0, args=(s, 0.0), full_output=1)[0]


def _not_a_tuple(s):
    return quad(np.exp, 0.0, s, args=s)[0]


def _conditional(s):
    return quad(bell, 0.0, 1.0, args=(s, 0.0))[0] if s > 0 else 0.0


@pytest.mark.parametrize("f, match", [
    (_whole, r"read as \[0\]"),
    (_full, "full_output"),
    (_not_a_tuple, "written as a tuple"),
    (_conditional, "always computed"),
], ids=["whole", "full_output", "args", "conditional"])
def test_what_is_not_differentiated_is_refused_at_its_line(f, match):
    with pytest.raises(TranspileError, match=match):
        grad(f)(0.5)


@pytest.mark.parametrize("f", [f for f in CASES if f not in (fourier, kinked)],
                         ids=lambda f: f.__name__)
def test_second_derivatives_match_differences_of_the_gradient(f):
    # the tangent of the adjoint: the integrand's second derivatives against the gradient
    # integrated, and its derivatives at the limits as they move
    args = POINTS.get(f, (0.7, 1.3))
    for i in range(len(args)):
        v = np.cos(np.arange(np.size(args[i])) + 0.5).reshape(np.shape(args[i]))
        v = v if np.ndim(v) else float(v)
        got = hvp(f, wrt=i)(*args, v)
        gradient = grad(f, wrt=i)
        expected = _central(gradient, args, i, v, h=1e-4)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_second_derivatives_of_a_weighted_or_kinked_integral_raise():
    with pytest.raises((NotImplementedError, TranspileError), match="second derivatives"):
        hvp(fourier)(0.7, 1.3, 1.0)
    with pytest.raises(NotImplementedError, match="bends"):
        hvp(kinked, wrt=1)(0.9, 0.6, 1.0)


def _jump(c):
    return quad(lambda t: np.where(t > c, 1.0, 0.0), 0.0, 2.0)[0]


def _test_inside(t, c):
    if t > c:
        return 1.0
    return 0.0


def _jump_in_a_module_function(c):
    return quad(_test_inside, 0.0, 2.0, args=(c,))[0]


def _jump_in_a_helper(c):
    return quad(lambda t: 2.0 * _test_inside(t, c), 0.0, 2.0)[0]


def _rounded(c):
    return quad(lambda t: np.floor(t * c), 0.0, 2.0)[0]


@pytest.mark.parametrize("f", [_jump, _jump_in_a_module_function, _jump_in_a_helper, _rounded])
def test_an_integrand_that_jumps_at_a_moving_point_is_refused(f):
    # its derivative would miss the jump's term (d/dc of the first is -1, not 0)
    with pytest.raises(TranspileError, match="integrand jumps"):
        grad(f)(0.5)


def _fixed_jump(c):
    threshold = 1.0  # (a local constant)
    return quad(lambda t: np.where(t > threshold, c * t, c * c), 0.0, 2.0, points=[1.0])[0]


def _switched_by_the_parameter(c):
    return quad(lambda t: np.where(c > 0.0, c * t, -c), 0.0, 2.0)[0]


@pytest.mark.parametrize("f", [_fixed_jump, _switched_by_the_parameter])
def test_a_jump_that_does_not_move_is_differentiated(f):
    assert grad(f)(0.5) == pytest.approx(_central(f, (0.5,), 0, 1.0), rel=1e-6)


def test_a_weight_that_depends_on_a_moving_limit_raises():
    def f(c):
        return quad(np.exp, 0.0, c, weight="alg", wvar=(0.5, 0.5))[0]

    with pytest.raises(ValueError, match="weight='alg'"):
        grad(f)(1.0)


def test_a_constant_weight_parameter_is_fine():
    def f(s):
        return quad(lambda t: np.exp(-s * t), 0.0, 1.0, weight="alg", wvar=(0.5, 0.5),
                    epsabs=1e-13, epsrel=1e-13)[0]

    np.testing.assert_allclose(grad(f)(0.4), _central(f, (0.4,), 0, 1.0), rtol=1e-6)


# --- integrals of samples (rules: runtime/sampled.py) -----------------------------------------

def _difference(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h, args[i] - h
    return (f(*up) - f(*down)) / (2 * h)


def moving_grid(amplitude, length):
    # samples and sample points that both move with the parameters; an even count (Simpson's
    # last interval by Cartwright's correction) and 2^k + 1 samples for Romberg
    x = np.linspace(0.0, length, 10)
    y = np.exp(-amplitude * x) * np.sin(3.0 * x)
    total = integrate.simpson(y, x=x) + integrate.trapezoid(y * y, x)
    total = total + integrate.romb(np.cos(amplitude * x[:9]), dx=length / 9.0)
    running = integrate.cumulative_trapezoid(y, x, initial=0)
    return total + np.sum(running ** 2)


@pytest.mark.skipif(not hasattr(integrate, "simpson") or tuple(
    int(p) for p in __import__("scipy").__version__.split(".")[:2]) < (1, 11),
    reason="simpson's rule (Cartwright's last interval) is SciPy 1.11's")
def test_sample_rules_on_a_grid_that_moves_reverse_and_forward():
    args = (0.7, 2.3)
    gradient = grad(moving_grid, wrt=(0, 1))(*args)
    for i in range(2):
        expected = _difference(moving_grid, args, i)
        assert np.isclose(gradient[i], expected, rtol=1e-7, atol=1e-9)
        tangents = [0.0, 0.0]
        tangents[i] = 1.0
        value, forward = jvp(moving_grid, args, tuple(tangents))
        assert np.isclose(forward, expected, rtol=1e-7, atol=1e-9)
    # and Hessian-vector products (forward over reverse) against differences of the gradient
    for i in range(2):
        product = hvp(moving_grid, wrt=i)(*args, 1.0)
        assert np.isclose(product, _difference(lambda *a: grad(moving_grid, wrt=i)(*a), args, i,
                                            1e-5), rtol=1e-5, atol=1e-7)
