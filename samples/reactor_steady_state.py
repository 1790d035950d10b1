"""A chemical reactor three ways: its stiff transient (Robertson's kinetics, ``solve_ivp`` with
BDF), its steady state (``fsolve``) and the same steady state by damped iterations (a loop
marked ``converged``), each differentiated in the rate constants and checked against central
differences.

- The transient's gradient comes from the ODE's adjoint, solved backwards by SciPy's BDF.
- The steady state's comes from the implicit function theorem: ``dc/dk = -(dF/dc)^-1 dF/dk`` at
  the root ``F(c, k) = 0``, the Jacobians the compiler's own.
- The iterated steady state is the same fixed point: its gradient is the same, with nothing
  taped however many iterations the loop takes.

Run:  pip install -e ".[scipy]" && python samples/reactor_steady_state.py
"""

import numpy as np

try:
    from scipy.integrate import solve_ivp
    from scipy.optimize import fsolve
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import converged, grad

FEEDS = np.array([0.5, 1.0, 2.0, 4.0])  # inlet concentrations of A
OBSERVED = np.array([0.27, 0.46, 0.77, 1.25])  # outlet concentrations of A at steady state
TAU = 2.0  # residence time


def robertson(rates):
    """The concentration of C after 40 s of Robertson's stiff kinetics, A -> B -> C."""
    k1, k2, k3 = rates

    def rhs(t, y):
        return [-k1 * y[0] + k3 * y[1] * y[2],
                k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
                k2 * y[1] ** 2]

    sol = solve_ivp(rhs, (0.0, 40.0), [1.0, 0.0, 0.0], method="BDF", t_eval=[40.0],
                    rtol=1e-9, atol=1e-12)
    return sol.y[2, -1]


def residual(c, k, feed):
    """A stirred tank's mass balance for A -> products at rate k c^2: zero at steady state."""
    return feed - c - TAU * k * c ** 2


def misfit_fsolve(k):
    """Squared misfit of the steady-state outlet concentrations, each by fsolve."""
    c = fsolve(residual, FEEDS * 0.5, args=(k, FEEDS), xtol=1e-13)
    return np.sum((c - OBSERVED) ** 2)


def misfit_iterated(k):
    """The same misfit, each steady state by damped fixed-point iterations."""
    c = FEEDS * 0.5
    for _ in converged(range(5000)):
        c_new = 0.7 * c + 0.3 * (FEEDS - TAU * k * c ** 2)
        if np.max(np.abs(c_new - c)) < 1e-15:
            break
        c = c_new
    return np.sum((c - OBSERVED) ** 2)


def central(f, x, h):
    x = np.asarray(x, float)
    if not x.ndim:
        return (f(x + h) - f(x - h)) / (2 * h)
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def main():
    rates = np.array([0.04, 3e7, 1e4])
    g = grad(robertson)(rates)
    steps = 1e-6 * rates
    fd = np.array([(robertson(rates + s * e) - robertson(rates - s * e)) / (2 * s)
                   for s, e in zip(steps, np.eye(3), strict=True)])
    print("Robertson, BDF: dC(40)/dk  ", np.array2string(g, precision=6))
    print("  central differences      ", np.array2string(fd, precision=6))
    print(f"  largest relative difference {np.max(np.abs(g - fd) / np.abs(fd)):.1e}")

    k = 0.9
    by_root, by_loop = grad(misfit_fsolve)(k), grad(misfit_iterated)(k)
    print(f"steady state by fsolve:     d misfit / dk = {by_root:.10f}")
    print(f"steady state by iterations: d misfit / dk = {by_loop:.10f}")
    print(f"  central differences:                      {central(misfit_fsolve, k, 1e-6):.10f}")


if __name__ == "__main__":
    main()
