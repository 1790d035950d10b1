"""Fitting the stiffnesses of a chain of springs to its observed motion, written with objects.

Four masses in a line are joined by three springs. Each spring is an object (a dataclass with
a ``tension`` method), the chain is an object holding the masses' state (positions,
velocities, time), and ``chain.step(springs, dt)`` moves it forward in place (semi-implicit
Euler, with a little damping): the way simulation code is usually written. The loss compares
the simulated positions with observations; ``value_and_grad`` gives its gradient with respect
to the three stiffnesses, which ``scipy.optimize.minimize(jac=True)`` uses to recover them.

The gradient is checked against central finite differences; the fit recovers the stiffnesses
the observations were made with. ``python samples/spring_chain_fit.py --source`` prints the
generated gradient.

Run:  pip install -e ".[scipy]" && python samples/spring_chain_fit.py [--source]
"""

import sys
from dataclasses import dataclass

import numpy as np

try:
    import scipy.optimize
except ImportError:  # (the plain install is NumPy alone)
    raise SystemExit('this sample needs SciPy: pip install -e ".[scipy]"') from None

from transpiler import check_grad, grad, value_and_grad

DT = 0.05
STEPS = 80


@dataclass
class Spring:
    k: float  # stiffness
    rest: float  # rest length

    def tension(self, length):
        return self.k * (length - self.rest)


class Chain:
    """Masses on a line; spring i joins mass i to mass i + 1."""

    def __init__(self, x, v, damping):
        self.x = x
        self.v = v
        self.damping = damping
        self.t = 0.0

    def accelerations(self, springs):
        force = -self.damping * self.v
        for i, spring in enumerate(springs):
            pull = spring.tension(self.x[i + 1] - self.x[i])
            force[i] = force[i] + pull
            force[i + 1] = force[i + 1] - pull
        return force

    def step(self, springs, dt):
        self.v = self.v + dt * self.accelerations(springs)
        self.x = self.x + dt * self.v
        self.t += dt


def simulate(stiffness, x0, v0):
    """The masses' positions after each step, shape (STEPS, masses)."""
    springs = [Spring(k, 1.0) for k in stiffness]
    chain = Chain(x0, v0, damping=0.05)
    positions = []
    for _ in range(STEPS):
        chain.step(springs, DT)
        positions.append(chain.x)
    return np.stack(positions)


def misfit(stiffness, x0, v0, observed):
    predicted = simulate(stiffness, x0, v0)
    return 0.5 * np.sum((predicted - observed) ** 2)


def main() -> None:
    np.set_printoptions(precision=6, suppress=True)
    x0 = np.array([0.0, 1.3, 2.1, 3.4])  # stretched and compressed: it oscillates
    v0 = np.zeros(4)
    true_stiffness = np.array([2.0, 0.7, 1.4])
    observed = simulate(true_stiffness, x0, v0)

    guess = np.array([1.0, 1.0, 1.0])
    check_grad(misfit, guess, x0, v0, observed, rtol=1e-6)
    print(f"{len(x0)} masses, {STEPS} steps of {DT}: gradient of the misfit at {guess} "
          f"(checked against finite differences): {grad(misfit)(guess, x0, v0, observed)}")

    fitted = scipy.optimize.minimize(value_and_grad(misfit), guess, args=(x0, v0, observed),
                                     jac=True, method="BFGS", options={"gtol": 1e-10})
    print(f"fitted stiffness {fitted.x} (observed with {true_stiffness}) in "
          f"{fitted.nit} iterations, misfit {fitted.fun:.2e}")
    assert np.allclose(fitted.x, true_stiffness, rtol=1e-5)
    if "--source" in sys.argv:
        print(grad(misfit).source_for(guess, x0, v0, observed))


if __name__ == "__main__":
    main()
