"""Fit the four rates of a Lotka-Volterra predator-prey model to noisy counts, through
``scipy.integrate.solve_ivp``.

The model is prey' = a prey - b prey predator, predator' = -c predator + d prey predator,
solved by SciPy's RK45 at the observation times. The loss is the squared distance between the
solution and noisy synthetic counts; its exact gradient in (a, b, c, d) comes from the ODE's
adjoint, solved backwards by SciPy (never through the solver's steps), and drives L-BFGS-B.

Run:  pip install -e ".[scipy]" && python samples/lotka_volterra_fit.py
"""

import numpy as np

try:
    from scipy.integrate import solve_ivp
    from scipy.optimize import minimize
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import value_and_grad

TRUE_RATES = np.array([1.1, 0.4, 0.4, 0.1])
START = [10.0, 5.0]
T_OBS = np.linspace(0.0, 10.0, 21)


def lotka_volterra(t, z, a, b, c, d):
    prey, predator = z
    return [a * prey - b * prey * predator, -c * predator + d * prey * predator]


rng = np.random.default_rng(1)
counts = solve_ivp(lotka_volterra, (0.0, 10.0), START, t_eval=T_OBS, args=tuple(TRUE_RATES),
                   rtol=1e-9, atol=1e-9).y
counts = counts + 0.05 * rng.normal(size=counts.shape)


def misfit(rates):
    a, b, c, d = rates
    sol = solve_ivp(lotka_volterra, (0.0, 10.0), START, t_eval=T_OBS, args=(a, b, c, d),
                    rtol=1e-9, atol=1e-9)
    return np.sum((sol.y - counts) ** 2)


def main():
    fit = minimize(value_and_grad(misfit), [1.0, 0.5, 0.5, 0.12], jac=True, method="L-BFGS-B",
                   bounds=[(0.1, 3.0)] * 4)
    print("true rates:  ", np.round(TRUE_RATES, 3))
    print("fitted rates:", np.round(fit.x, 3))
    print(f"misfit {fit.fun:.4f} after {fit.nit} iterations ({fit.nfev} solves with gradients)")


if __name__ == "__main__":
    main()
