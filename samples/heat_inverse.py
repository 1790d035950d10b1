"""Recover the initial temperature of a rod from its measured final temperature.

The forward model is the 1-D heat equation u_t = u_xx on [0, 1] with fixed (Dirichlet) ends,
discretised with the explicit scheme

    u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])

repeated in a Python loop. Running it backwards in time is ill-posed, so the inverse problem is
posed as least squares on the final state plus a small Tikhonov term on the slope of the initial
condition, and solved with SciPy's L-BFGS-B; ``value_and_grad`` compiles the exact gradient of
that objective (the adjoint heat equation, in effect) from the forward code.

Run:  pip install -e ".[scipy]" && python samples/heat_inverse.py [plot.png]
(the plot is written only when a PNG path is given and matplotlib is installed)
"""

import sys

import numpy as np

try:
    from scipy.optimize import minimize
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import check_grad, value_and_grad

N = 41          # grid points, ends included
R = 0.25        # r = dt / dx^2 (the explicit scheme is stable for r <= 1/2)
STEPS = 100
ALPHA = 1e-5    # weight of the Tikhonov regulariser


def final_state(u0):
    """Temperature after STEPS explicit time steps, starting from ``u0``."""
    u = u0.copy()
    for _ in range(STEPS):
        u[1:-1] = u[1:-1] + R * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def objective(u0, measured):
    misfit = final_state(u0) - measured
    slope = np.diff(u0)
    return 0.5 * np.sum(misfit ** 2) + 0.5 * ALPHA * np.sum(slope ** 2)


def main() -> None:
    x = np.linspace(0.0, 1.0, N)
    true_u0 = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)
    rng = np.random.default_rng(1)
    measured = final_state(true_u0) + 1e-4 * rng.normal(size=N)

    guess = np.zeros(N)
    check_grad(objective, rng.normal(size=N), measured)  # agrees with finite differences
    result = minimize(value_and_grad(objective), guess, args=(measured,), jac=True,
                      method="L-BFGS-B", options={"maxiter": 2000})
    recovered = result.x

    def relative_error(u):
        return np.linalg.norm(u - true_u0) / np.linalg.norm(true_u0)

    print(f"{N} grid points, {STEPS} explicit steps with r = {R}, Tikhonov weight {ALPHA}")
    print(f"L-BFGS-B: {result.nit} iterations, {result.nfev} evaluations, "
          f"final objective {result.fun:.3e}")
    print(f"relative error of the measured final state taken as the answer: "
          f"{relative_error(measured):.4f}")
    print(f"relative reconstruction error of the initial condition: "
          f"{relative_error(recovered):.4f}")
    print(f"largest pointwise error: {np.max(np.abs(recovered - true_u0)):.4f}")

    if len(sys.argv) > 1:
        plot(sys.argv[1], x, true_u0, measured, recovered)


def plot(path, x, true_u0, measured, recovered):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, true_u0, "k-", label="true initial condition")
    ax.plot(x, measured, ".", label="measured final state")
    ax.plot(x, recovered, "--", label="recovered initial condition")
    ax.set_xlabel("x")
    ax.set_ylabel("u")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
