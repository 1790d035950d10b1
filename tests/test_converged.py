"""Loops marked ``converged`` (passes/converged.py, runtime/implicit.py ``fixed_point``): the
fixed point of the body differentiated by the implicit function theorem, checked against central
differences of the whole computation (the loops converge to machine precision) in reverse and
forward mode; the loops the marker refuses, and a loop that stopped short of its fixed point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from transpiler import TranspileError, converged, grad, hvp, jvp


def _central(f, args, i, h=1e-6):
    """The derivative of ``f`` in argument ``i`` (its gradient, for an array)."""
    def moved(step):
        out = list(args)
        out[i] = args[i] + step
        return f(*out)

    if not np.ndim(args[i]):
        return (moved(h) - moved(-h)) / (2 * h)
    units = np.eye(np.size(args[i])).reshape((-1, *np.shape(args[i])))
    return np.array([(moved(h * e) - moved(-h * e)) / (2 * h) for e in units]).reshape(
        np.shape(args[i]))


def babylon(a):
    # Heron's square root: a scalar state, a break before the update
    x = 1.0
    for _ in converged(range(500)):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-15:
            break
        x = x_new
    return x ** 3


def relaxation(p, b):
    # an array state, a while loop whose test reads a variable the body sets
    u = np.zeros(3)
    change = 1.0
    while converged(change > 1e-14):
        u_new = 0.3 * np.tanh(u[::-1]) + p * b
        change = np.max(np.abs(u_new - u))
        u = u_new
    return np.sum(u ** 2)


def coupled(p, q):
    # two state variables (a tuple), updated together; a counter beside them is held
    u, v = 0.0, 1.0
    count = 0
    for _ in converged(range(2000)):
        u_next = 0.5 * np.cos(v) + p
        v_next = 0.3 * np.sin(u) * q
        count = count + 1
        if abs(u_next - u) + abs(v_next - v) < 1e-15:
            break
        u, v = u_next, v_next
    return u * v + u ** 2


def gauss_seidel(f, kappa):
    # sweeps writing into the state element by element, a loop inside the marked one
    n = f.shape[0]
    u = np.zeros(n)
    h2 = 1.0 / (n + 1) ** 2
    for _ in converged(range(5000)):
        old = u.copy()
        for i in range(n):
            left = u[i - 1] if i > 0 else 0.0
            right = u[i + 1] if i < n - 1 else 0.0
            u[i] = (left + right + h2 * f[i]) / (2.0 + kappa * h2)
        if np.max(np.abs(u - old)) < 1e-15:
            break
    return np.sum(u * np.linspace(0.0, 1.0, n))


def implicit_euler(rate, y0):
    # a converged loop inside a time loop: each step of backward Euler by fixed-point sweeps
    y = y0
    total = 0.0
    for _ in range(5):
        z = y
        for _ in converged(range(300)):
            z_new = y - 0.1 * rate * z ** 3
            if abs(z_new - z) < 1e-15:
                break
            z = z_new
        y = z
        total = total + y
    return total


def closure(scale):
    # the body reads a variable of an enclosing function and calls a module function
    def inner(x0):
        x = x0
        for _ in converged(range(1000)):
            x_new = _contraction(x, scale)
            if np.max(np.abs(x_new - x)) < 1e-15:
                break
            x = x_new
        return np.sum(np.sin(x))
    return inner


def _contraction(x, s):
    return 0.4 * np.cos(x) + s * np.array([1.0, 2.0])


def jacobi(f, kappa):
    # 80 unknowns: the solves with I - J are matrix-free (GMRES on the body's products)
    u = np.zeros(f.shape[0])
    for _ in converged(range(20000)):
        padded = np.concatenate([np.zeros(1), u, np.zeros(1)])
        u_new = (padded[:-2] + padded[2:] + f) / (2.0 + kappa)
        if np.max(np.abs(u_new - u)) < 1e-15:
            break
        u = u_new
    return np.sum(np.sin(u))


def used_after(y, v):
    # a NumPy scalar the body reads; the state (an array and a number) updated in place and
    # read through methods after the loop
    c = np.sin(y)
    z = v * 0.0
    w = 0.0
    for _ in converged(range(80)):
        w = 0.25 * np.cos(w) + 0.1 * np.sum(z)
        z = 0.4 * np.tanh(z) + 0.1 * w + 0.3 * np.sin(c * v)
    z += w * 2.0
    return z.mean() + np.sum(z ** 2) * w


A3 = np.array([[4.0, 1.0, 0.0], [1.0, 5.0, 1.0], [0.0, 1.0, 3.0]])


def jacobi_relative(b):
    # Jacobi sweeps for A x = b until a relative change, with a counter and copies
    diagonal = np.diag(A3)
    rest = A3 - np.diag(diagonal)
    x = np.zeros_like(b)
    sweeps = 0
    while converged(True):
        x_new = (b - rest @ x) / diagonal
        sweeps += 1
        if np.linalg.norm(x_new - x) < 1e-14 * np.linalg.norm(x_new) or sweeps > 500:
            x = x_new.copy()
            break
        x = x_new.copy()
    return np.sum(x ** 2)


@dataclass
class Rates:
    k: float
    c: float

    def speed(self, x):
        return self.k * np.cos(x)


def parameter_object(k, c):
    # an object of the user's read field by field in the body
    rates = Rates(k, c)
    x = 0.0
    for _ in converged(range(200)):
        x_new = 0.5 * np.cos(x) * rates.k + rates.c
        if abs(x_new - x) < 1e-15:
            break
        x = x_new
    return x


def list_state(a):
    # the state a list of numbers, rebuilt each step
    xs = [0.0, 0.0]
    for _ in converged(range(300)):
        xs = [0.5 * np.tanh(xs[1]) + a, 0.3 * np.sin(xs[0])]
    return xs[0] + 2.0 * xs[1]


CASES = [(babylon, (2.0,)), (jacobi_relative, (np.array([1.0, 2.0, 3.0]),)),
         (parameter_object, (0.8, 0.3)), (list_state, (0.8,)),
         (used_after, (0.4, np.array([0.5, -1.0, 2.0]))),
         (jacobi, (np.linspace(-1.0, 1.0, 80) ** 2, 0.7)),
         (relaxation, (0.7, np.array([1.0, -0.5, 0.2]))), (coupled, (0.3, 1.2)),
         (gauss_seidel, (np.linspace(1.0, 2.0, 6), 3.0)), (implicit_euler, (1.3, 0.8))]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_fixed_points_match_finite_differences_in_both_modes(f, args):
    wrt = tuple(range(len(args)))
    got = grad(f, wrt=wrt if len(args) > 1 else 0)(*args)
    got = got if len(args) > 1 else (got,)
    for i in wrt:
        np.testing.assert_allclose(got[i], _central(f, args, i), rtol=1e-6, atol=1e-9)
    rng = np.random.default_rng(3)
    tangents = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal())
                     for a in args)
    value, tangent = jvp(f, args, tangents)
    assert value == pytest.approx(f(*args), rel=1e-12)
    expected = sum(np.sum(np.asarray(_central(f, args, i)) * t) for i, t in enumerate(tangents))
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-9)


def test_a_closure_and_a_module_function_in_the_body():
    f = closure(0.3)
    x0 = np.array([0.1, -0.2])
    np.testing.assert_allclose(grad(f)(x0), np.zeros(2), atol=1e-12)  # (the start is forgotten)


def _solve(x, scale):
    for _ in converged(range(1000)):
        x_new = _contraction(x, scale)
        if np.max(np.abs(x_new - x)) < 1e-15:
            break
        x = x_new
    return x


def nested(scale, x0):
    # the converged loop in a helper the differentiated function calls, and in a function
    # defined inside it that closes over the scale
    def solve_here(x):
        for _ in converged(range(1000)):
            x_new = _contraction(x, scale)
            if np.max(np.abs(x_new - x)) < 1e-15:
                break
            x = x_new
        return x
    return np.sum(np.sin(_solve(x0, scale))) + np.sum(solve_here(x0) ** 2)


def test_in_a_helper_and_in_a_function_defined_inside():
    args = (0.3, np.array([0.1, -0.2]))
    got = grad(nested, wrt=(0, 1))(*args)
    assert got[0] == pytest.approx(_central(nested, args, 0), rel=1e-6)
    np.testing.assert_allclose(got[1], np.zeros(2), atol=1e-12)


def test_the_loop_runs_as_written_and_is_not_taped():
    # the value is the loop's own; the gradient's source holds the loop once, forward, and the
    # fixed point's call instead of a tape of the iterations
    df = grad(babylon)
    assert df(2.0) == pytest.approx(1.5 * 2.0 ** 0.5, rel=1e-12)
    assert "rt.fixed_point(rt.stop_gradient(x" in df.source
    assert "rt.fixed_point_adjoint(" in df.source
    assert "push" not in df.source and "pop" not in df.source


def test_as_plain_python_the_marker_is_its_argument():
    assert converged(range(3)) == range(3)
    assert converged(True) is True
    assert babylon(4.0) == pytest.approx(8.0)


def test_a_loop_that_stopped_short_of_its_fixed_point_is_refused_when_run():
    def short(a):
        x = 1.0
        for _ in converged(range(2)):  # two iterations: 2e-3 from sqrt(a)
            x = 0.5 * (x + a / x)
        return x

    with pytest.raises(RuntimeError, match="not a fixed point"):
        grad(short)(2.0)
    with pytest.raises(RuntimeError, match="not a fixed point"):
        jvp(short, (2.0,), (1.0,))


HVP_CASES = [(babylon, (2.0,), 0), (relaxation, (0.7, np.array([1.0, -0.5, 0.2])), 1),
             (coupled, (0.3, 1.2), 0), (coupled, (0.3, 1.2), 1),
             (jacobi, (np.linspace(-1.0, 1.0, 80) ** 2, 0.7), 1),
             (used_after, (0.4, np.array([0.5, -1.0, 2.0])), 1),
             (parameter_object, (0.8, 0.3), 0), (implicit_euler, (1.3, 0.8), 0)]


@pytest.mark.parametrize("f, args, i", HVP_CASES,
                         ids=[f"{f.__name__}-{i}" for f, _, i in HVP_CASES])
def test_hessian_vector_products_match_differences_of_the_gradient(f, args, i):
    # forward over reverse: the body's second derivatives at the fixed point
    v = np.linspace(1.0, -0.5, np.size(args[i])).reshape(np.shape(args[i])) \
        if np.ndim(args[i]) else 1.0
    got = hvp(f, wrt=i)(*args, v)
    g = grad(f, wrt=i)
    h = 1e-5
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h * v, args[i] - h * v
    want = (np.asarray(g(*up)) - np.asarray(g(*down))) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_a_list_state_has_no_second_derivatives_yet():
    with pytest.raises(NotImplementedError, match="list"):
        hvp(list_state)(0.8, 1.0)


def _reads_count(a):
    x = 1.0
    for k in converged(range(100)):
        x = 0.5 * (x + a / x) + 0.0 * k
    return x


def _continues(a):
    x = 1.0
    for _ in converged(range(100)):
        if a > 10.0:
            continue
        x = 0.5 * (x + a / x)
    return x


def _returns(a):
    x = 1.0
    for _ in converged(range(100)):
        x_new = 0.5 * (x + a / x)
        if x_new == x:
            return x
        x = x_new
    return x


def _else_clause(a):
    x = 1.0
    for _ in converged(range(100)):
        x = 0.5 * (x + a / x)
    else:
        x = x + 0.0
    return x


def _temporary_after(a):
    x = 1.0
    for _ in converged(range(100)):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-15:
            break
        x = x_new
    return x_new


def _no_state(a):
    x = 1.0
    for _ in converged(range(100)):
        y = 0.5 * a
    return x + y


def _stray(a):
    n = converged(5)
    return a * n


REFUSED = [(_reads_count, "reads its iteration"), (_continues, "'continue'"),
           (_returns, "'return'"), (_else_clause, "else: clause"),
           (_temporary_after, "x_new is assigned in a converged loop"),
           (_no_state, "no state"), (_stray, "marks a loop")]


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_what_the_marker_does_not_cover_is_refused_at_the_loop(f, message):
    with pytest.raises(TranspileError, match=message):
        grad(f)(2.0)


def test_an_object_whose_method_the_body_calls_is_refused_when_run():
    def method_in_body(k):
        rates = Rates(k, 0.3)
        x = 0.0
        for _ in converged(range(200)):
            x = 0.5 * rates.speed(x) + rates.c
        return x

    with pytest.raises(TypeError, match="converged loop"):
        grad(method_in_body)(0.8)
