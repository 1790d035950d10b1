"""Fit the stiffness and damping of a damped oscillator to noisy data, through an RK4 loop.

The model is x'' = -k x - c x', integrated with the classical fourth-order Runge-Kutta
method in an ordinary Python loop. The loss is the mean squared distance between the simulated
positions and noisy synthetic measurements; its exact gradient with respect to (k, c) comes from
``value_and_grad`` and drives SciPy's L-BFGS-B.

Run:  pip install -e ".[scipy]" && python samples/ode_fit.py [plot.png]
(the plot is written only when a PNG path is given and matplotlib is installed)
"""

import sys

import numpy as np

try:
    from scipy.optimize import minimize
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import check_grad, value_and_grad

DT = 0.05
STEPS = 200
X0, V0 = 1.0, 0.0


def acceleration(x, v, k, c):
    return -k * x - c * v


def rk4_step(x, v, k, c, dt):
    """One classical Runge-Kutta step of the first-order system (x' = v, v' = a(x, v))."""
    k1x = v
    k1v = acceleration(x, v, k, c)
    k2x = v + 0.5 * dt * k1v
    k2v = acceleration(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v, k, c)
    k3x = v + 0.5 * dt * k2v
    k3v = acceleration(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v, k, c)
    k4x = v + dt * k3v
    k4v = acceleration(x + dt * k3x, v + dt * k3v, k, c)
    x = x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
    v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return x, v


def simulate(k, c):
    """Positions x(t_1), ..., x(t_STEPS) as a list of floats."""
    x, v = X0, V0
    positions = []
    for _ in range(STEPS):
        x, v = rk4_step(x, v, k, c, DT)
        positions.append(x)
    return positions


def loss(p, data):
    """Mean squared misfit between the simulated and the measured positions."""
    k, c = p
    x, v = X0, V0
    total = 0.0
    for step in range(STEPS):
        x, v = rk4_step(x, v, k, c, DT)
        total = total + (x - data[step]) ** 2
    return total / STEPS


def main() -> None:
    true_k, true_c = 4.0, 0.3
    rng = np.random.default_rng(42)
    data = np.array(simulate(true_k, true_c)) + 0.02 * rng.normal(size=STEPS)

    p0 = np.array([2.5, 1.0])
    check_grad(loss, p0, data)  # the compiled gradient agrees with finite differences
    result = minimize(value_and_grad(loss), p0, args=(data,), jac=True, method="L-BFGS-B")
    k_fit, c_fit = result.x

    print(f"true parameters:   k = {true_k:.4f}  c = {true_c:.4f}")
    print(f"initial guess:     k = {p0[0]:.4f}  c = {p0[1]:.4f}  loss = {loss(p0, data):.6f}")
    print(f"fitted parameters: k = {k_fit:.4f}  c = {c_fit:.4f}  loss = {result.fun:.6f}")
    print(f"L-BFGS-B iterations: {result.nit}  function evaluations: {result.nfev}  "
          f"converged: {result.success}")

    if len(sys.argv) > 1:
        plot(sys.argv[1], data, simulate(k_fit, c_fit))


def plot(path, data, fitted):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = DT * np.arange(1, STEPS + 1)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(t, data, ".", ms=3, label="noisy data")
    ax.plot(t, fitted, "-", label="fitted model")
    ax.set_xlabel("t")
    ax.set_ylabel("x(t)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
