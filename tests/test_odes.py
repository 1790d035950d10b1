"""ODE solutions of scipy.integrate by their adjoint (reverse mode) and variational equation
(forward mode) (passes/solvers.py, runtime/odes.py), checked against central differences of the
whole solve at tight tolerances, for every method of solve_ivp and for odeint: gradients in the
initial state, the parameters (args= and closures), the span's ends and the output times."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy.integrate")
from scipy.integrate import odeint, solve_ivp  # noqa: E402

from transpiler import TranspileError, grad, hvp, jvp  # noqa: E402

TIMES = np.array([0.4, 1.1, 2.0])


def oscillator(t, y, w, c):
    return [y[1], -w * w * y[0] - c * y[1]]


def damped(w, c):
    # a list-valued right-hand side, args=, no t_eval: the last step is read
    sol = solve_ivp(oscillator, (0.0, 3.0), [1.0, 0.0], args=(w, c), method="DOP853",
                    rtol=1e-11, atol=1e-12)
    return sol.y[0, -1] - 0.5 * sol.y[1, -1]


def lotka_volterra(alpha, beta):
    # a closure over the parameters, outputs at t_eval, read whole
    def rhs(t, z):
        x, y = z
        return np.array([alpha * x - beta * x * y, -0.8 * y + 0.6 * x * y])

    sol = solve_ivp(rhs, (0.0, 2.0), np.array([1.5, 1.0]), t_eval=TIMES, method="RK45",
                    rtol=1e-11, atol=1e-12)
    return np.sum((sol.y - 1.0) ** 2)


def initial_state(y0, k):
    # the gradient in y0, at the call's attribute
    y = solve_ivp(lambda t, y: -k * y + np.sin(t), (0.0, 1.5), y0, t_eval=[0.5, 1.5],
                  method="DOP853", rtol=1e-11, atol=1e-12).y
    return np.sum(y * np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]))


def moving_ends(t0, t1):
    # the span's ends: the start moves the state, the end the last step read
    sol = solve_ivp(lambda t, y: np.cos(t) * y, (t0, t1), [1.0], method="DOP853",
                    rtol=1e-11, atol=1e-12)
    return sol.y[0, -1] + sol.t[-1] ** 2


def output_times(s, k):
    # outputs at times that are themselves differentiated
    ts = np.array([0.5, 1.0, 1.5]) * s
    sol = solve_ivp(lambda t, y: -k * y * y, (0.0, 2.0), [1.0], t_eval=ts, method="DOP853",
                    rtol=1e-11, atol=1e-12)
    return np.sum(sol.y) + np.sum(sol.t)


def van_der_pol(mu, x0):
    # a stiff problem, BDF
    sol = solve_ivp(lambda t, y: [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]], (0.0, 2.0),
                    [x0, 0.0], method="BDF", t_eval=[1.0, 2.0], rtol=1e-10, atol=1e-12)
    return sol.y[0, -1] + sol.y[1, 0]


def robertson(k1, k3):
    # the classic stiff chemistry problem, Radau
    def rhs(t, y):
        return [-k1 * y[0] + k3 * y[1] * y[2],
                k1 * y[0] - k3 * y[1] * y[2] - 3e7 * y[1] ** 2,
                3e7 * y[1] ** 2]

    sol = solve_ivp(rhs, (0.0, 10.0), [1.0, 0.0, 0.0], method="Radau", t_eval=[10.0],
                    rtol=1e-10, atol=1e-14)
    return sol.y[0, -1] + 100.0 * sol.y[1, -1]


def lsoda(a, b):
    sol = solve_ivp(lambda t, y, a, b: [-a * y[0] + b, a * y[0] - b * y[1]], (0.0, 1.0),
                    [1.0, 0.5], args=(a, b), method="LSODA", rtol=1e-11, atol=1e-12)
    return sol.y[1, -1]


def rk23(a, b):
    sol = solve_ivp(lambda t, y: -a * y + b, (0.0, 1.0), [1.0], t_eval=[1.0], method="RK23",
                    rtol=1e-11, atol=1e-12)
    return sol.y[0, 0]


def growth(y, t, a):
    return -a * y + np.sin(t)


def odeint_loss(a, t1):
    # odeint: f(y, t), outputs (len(t), n), the last time differentiated
    y = odeint(growth, 1.0, np.array([0.0, 0.5, t1]), args=(a,), rtol=1e-11, atol=1e-12)
    return np.sum(y[:, 0] * np.array([1.0, 2.0, 3.0]))


def odeint_tfirst(a, y0):
    y = odeint(lambda t, y: [y[1], -a * y[0]], [y0, 0.0], np.linspace(0.0, 2.0, 5),
               tfirst=True, rtol=1e-11, atol=1e-12)
    return np.sum(y ** 2)


def forced(t, y, k):
    return -k * y + np.sin(t)


def dense_reads(k, tq):
    # the interpolant (dense_output=True) read at times in any order, one read twice, and at a
    # number: the solution there, differentiated in the parameter and the times
    sol = solve_ivp(forced, (0.0, 3.0), [1.0, 2.0], args=(k,), dense_output=True, rtol=1e-11,
                    atol=1e-12)
    y = sol.sol(tq)
    return np.sum(y[0] ** 2) + np.sum(y[1] * tq) + sol.sol(1.5)[0]


def dense_backwards(k, t1):
    # integrated backwards in time, read between the ends
    sol = solve_ivp(forced, (2.0, t1), [0.5, -1.0], args=(k,), dense_output=True,
                    method="DOP853", rtol=1e-11, atol=1e-12)
    return np.sum(sol.sol(np.array([1.2, 0.4, 1.9])) ** 2)


def pendulum(t, y, k):
    return [y[1], -k * np.sin(y[0]) - 0.1 * y[1]]


def many_steps(k, y0):
    # RK45 (the default): hundreds of steps, one output: the adjoint of the steps recomputes
    # most of them from the few states kept
    sol = solve_ivp(pendulum, (0.0, 20.0), [y0, 0.0], args=(k,), t_eval=[20.0], rtol=1e-11,
                    atol=1e-12)
    return sol.y[0, 0] + 0.3 * sol.y[1, 0]


def rk45_steps(k, t1):
    # RK45 without t_eval, integrated backwards in time: the outputs are its steps
    sol = solve_ivp(pendulum, (3.0, t1), [0.4, -0.2], args=(k,), rtol=1e-11, atol=1e-12)
    return np.sum(sol.y[:, -1] ** 2) + sol.y[0, 0] * sol.t[-1]


CASES = {many_steps: (0.8, 1.2), rk45_steps: (1.1, 0.5),
         dense_reads: (0.7, np.array([2.5, 0.3, 1.0, 1.0])), dense_backwards: (0.6, 0.1),
         damped: (1.3, 0.2), lotka_volterra: (1.1, 0.4), initial_state: (
    np.array([1.0, -0.5, 2.0]), 0.7), moving_ends: (0.2, 1.7), output_times: (1.1, 0.6),
    van_der_pol: (1.5, 1.2), robertson: (0.04, 1e4), lsoda: (0.9, 0.3), rk23: (0.9, 0.3),
    odeint_loss: (0.8, 1.7), odeint_tfirst: (1.3, 0.7)}


def _direction(f, args, tangents, h):
    up = [a + h * t for a, t in zip(args, tangents, strict=True)]
    down = [a - h * t for a, t in zip(args, tangents, strict=True)]
    return (f(*up) - f(*down)) / (2 * h)


def _step(value) -> float:
    return 1e-5 * max(1.0, float(np.max(np.abs(value))))


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_ode_solutions_match_finite_differences_in_both_modes(f):
    args = CASES[f]
    got = grad(f, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        units = np.eye(np.size(args[i])) if np.ndim(args[i]) else [1.0]
        h = _step(args[i])
        want = [_direction(f, args, [u if j == i else 0 * a for j, a in enumerate(args)], h)
                for u in units]
        np.testing.assert_allclose(np.ravel(g), want, rtol=1e-5, atol=1e-7)
    rng = np.random.default_rng(3)
    tangents = [rng.normal(size=np.shape(a)) * _step(a) / 1e-5 if np.ndim(a)
                else float(rng.normal()) * _step(a) / 1e-5 for a in args]
    value, tangent = jvp(f, args, tuple(tangents))
    assert value == pytest.approx(f(*args), rel=1e-12)
    np.testing.assert_allclose(tangent, _direction(f, args, tangents, 1e-5), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("method", ["RK45", "RK23"])
def test_an_explicit_runge_kutta_solve_is_differentiated_through_its_steps(method):
    """The adjoint of RK45's and RK23's steps is the derivative of the numbers they return,
    far inside their tolerance (a continuous adjoint is only as close as the tolerance)."""
    def f(k, y0):
        sol = solve_ivp(pendulum, (0.0, 2.0), [y0, 0.0], args=(k,), t_eval=[0.35, 1.0, 2.0],
                        method=method, first_step=0.25, max_step=0.25, rtol=1e-2, atol=1e-4)
        return np.sum(sol.y[0] * np.array([1.0, -2.0, 0.5])) + sol.y[1, 1]

    args = (0.8, 1.2)
    got = grad(f, wrt=(0, 1))(*args)
    for i in range(2):
        want = _direction(f, args, [1.0 if j == i else 0.0 for j in range(2)], 1e-6)
        assert got[i] == pytest.approx(want, rel=1e-8, abs=1e-10)


def test_the_steps_solve_ivp_takes_are_recorded_for_their_adjoint(monkeypatch):
    # the method, by name, by class or positional: the gradient runs the solver once
    from scipy.integrate import RK23, RK45

    from runtime import runge_kutta

    def by_name(k):
        return solve_ivp(pendulum, (0.0, 2.0), [1.0, 0.0], "RK23", [1.0, 2.0], args=(k,),
                         rtol=1e-10, atol=1e-12).y[0, -1]

    def by_class(k):
        sol = solve_ivp(pendulum, (0.0, 2.0), [1.0, 0.0], method=RK45, args=(k,), rtol=1e-10,
                        atol=1e-12)
        return sol.y[0, -1]

    def by_default(k):
        sol = solve_ivp(pendulum, (0.0, 2.0), [1.0, 0.0], t_eval=[0.5, 2.0], args=(k,),
                        rtol=1e-10, atol=1e-12, dense_output=True)
        return sol.y[0, -1] + sol.sol(1.5)[1]

    def again(*args):
        raise AssertionError("the solver was run again")

    assert "method=_steps.method" in grad(by_default).source
    monkeypatch.setattr(runge_kutta, "_run", again)
    for f in (by_name, by_class, by_default):
        assert grad(f)(0.7) == pytest.approx(_direction(f, [0.7], [1.0], 1e-5), rel=1e-6)
    assert RK45.__name__ == "RK45" and RK23.__name__ == "RK23"  # (the user's classes intact)


def test_the_gradient_solves_the_adjoint():
    source = grad(damped, wrt=(0, 1)).source
    assert "rt.ode_solution(" in source and "rt.ode_adjoint(" in source
    assert "solve_ivp" in source.split("rt.seed")[0]  # (the forward solve, as written)


def _whole(k):
    return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0])


def _events(k):
    return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0], events=lambda t, y: y[0] - 0.5).y


def _dense(k):
    sol = solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0], dense_output=True)
    interpolant = sol.sol
    return interpolant(0.5)[0]


def test_dense_output_is_read_inside_the_span():
    def outside(k):
        sol = solve_ivp(forced, (0.0, 1.0), [1.0], args=(k,), dense_output=True)
        return sol.sol(1.5)[0]

    with pytest.raises(ValueError, match="in the span"):
        grad(outside)(0.5)


def _full(k):
    return odeint(growth, 1.0, [0.0, 1.0], args=(k,), full_output=1)[0]


@pytest.mark.parametrize("f, match", [
    (_whole, r"read as \.y"),
    (_events, "events"),
    (_dense, r"sol\(t\)"),
    (_full, "full_output"),
], ids=["whole", "events", "dense", "full_output"])
def test_what_is_not_differentiated_is_refused_at_its_line(f, match):
    with pytest.raises(TranspileError, match=match):
        grad(f)(0.5)


# the arguments that move the span's ends or the output times: second derivatives in those are
# not taken (NotImplementedError when run)
TIME_ARGUMENTS = {moving_ends: (0, 1), output_times: (0,), odeint_loss: (1,), dense_reads: (1,),
                  rk45_steps: (1,),
                  dense_backwards: (1,)}


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_second_derivatives_match_differences_of_the_gradient(f):
    # the adjoint's tangent solved backwards beside it, the state's tangent forwards: hvp in
    # each argument (y0 and the parameters) against the gradient differenced along v
    args = CASES[f]
    for i in (0,) if f in (robertson, rk23) else range(len(args)):  # (slow: one argument)
        v = np.cos(np.arange(np.size(args[i])) + 0.5).reshape(np.shape(args[i]))
        v = v if np.ndim(v) else float(v)
        if i in TIME_ARGUMENTS.get(f, ()):
            with pytest.raises(NotImplementedError, match="output times"):
                hvp(f, wrt=i)(*args, v)
            continue
        got = hvp(f, wrt=i)(*args, v)
        h = _step(args[i])
        expected = _direction(grad(f, wrt=i), args,
                              [v if j == i else 0 * a for j, a in enumerate(args)], h)
        np.testing.assert_allclose(got, expected, rtol=1e-5,
                                   atol=1e-7 * max(1.0, float(np.max(np.abs(expected)))))


def _state_switch(k):
    # dy/dt = -k while y > 0.5, then -y / 10: the switch's time moves with k, and the
    # sensitivity jumps there (d/dk of y(2) is -0.145, not the -1.16 taken through it)
    sol = solve_ivp(lambda t, y: np.where(y > 0.5, -k, -0.1 * y), (0.0, 2.0), np.array([1.0]),
                    t_eval=[2.0], rtol=1e-10, atol=1e-12)
    return sol.y[0, -1]


def _late_switch(k):
    # a forcing switched on at t = k: a time that moves
    return odeint(lambda y, t: -y + (t > k), np.array([1.0]), [0.0, 2.0], rtol=1e-10,
                  atol=1e-12)[-1, 0]


@pytest.mark.parametrize("f", [_state_switch, _late_switch])
def test_a_right_hand_side_that_switches_on_the_state_or_a_moving_time_is_refused(f):
    with pytest.raises(TranspileError, match="right-hand side switches"):
        grad(f)(0.4)


def _forced(k):
    # a forcing switched on at a fixed time: the sensitivities do not jump
    sol = solve_ivp(lambda t, y: -k * y + np.where(t > 1.0, 1.0, 0.0), (0.0, 2.0),
                    np.array([1.0]), t_eval=[2.0], rtol=1e-11, atol=1e-12, max_step=0.01)
    return sol.y[0, -1]


def test_a_forcing_switched_at_a_fixed_time_is_differentiated():
    h = 1e-5
    assert grad(_forced)(0.4) == pytest.approx((_forced(0.4 + h) - _forced(0.4 - h)) / (2 * h),
                                               rel=1e-5)
