"""What a library solver's derivative costs beside the solve: an ODE's adjoint (solve_ivp) and
an integral's derivative under the integral sign (quad).

Run from the repository root::

    python -m tests.benchmarks.bench_solvers            # ~1 min
    python -m tests.benchmarks.bench_solvers --quick

Not part of the test suite. The primal and its gradient are timed round-robin in one process
(the minimum over rounds), so their ratio is measured under the same load. The ODE's memory is
the peak traced by ``tracemalloc`` during one gradient, at two tolerances: the tighter one takes
several times the steps, and the peak should not follow them (the adjoint recomputes the state
one output interval at a time).
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np
from scipy.integrate import quad, solve_ivp

from tests.benchmarks.bench_call import interleaved
from transpiler import grad

N = 50  # oscillators in a chain: 100 states
T_OUT = np.linspace(0.0, 10.0, 200)
_rng = np.random.default_rng(0)
Y0 = np.concatenate([_rng.normal(size=N), np.zeros(N)])
STIFFNESS = 1.0 + _rng.uniform(size=N)


def chain(t, y, k, c):
    x, v = y[:N], y[N:]
    left = np.concatenate([x[:1] * 0.0, x[:-1]])
    right = np.concatenate([x[1:], x[-1:] * 0.0])
    return np.concatenate([v, k * (left - 2.0 * x + right) - c * v])


def energy(k, c, rtol=1e-6, atol=1e-8):
    sol = solve_ivp(chain, (0.0, 10.0), Y0, t_eval=T_OUT, args=(k, c), rtol=rtol, atol=atol)
    return np.sum(sol.y[:N] ** 2)


def gaussian(s, c):
    return quad(lambda t: np.exp(-s * t * t) * np.cos(c * t), 0.0, 3.0)[0]


def table(title: str, rows: dict, number: int, rounds: int, base: str) -> None:
    best = interleaved(rows, number, rounds)
    print(f"\n{title}")
    for name, t in best.items():
        print(f"  {name:34s} {t * 1e3:10.2f} ms  {t / best[base]:6.2f}x {base}")


def peak(call) -> int:
    tracemalloc.start()
    call()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def main(quick: bool) -> None:
    rounds = 2 if quick else 5
    g = grad(energy, wrt=(0, 1))
    g(STIFFNESS, 0.1)
    table(f"solve_ivp: {N} oscillators, {len(T_OUT)} output times, RK45 rtol 1e-6", {
        "forward solve": lambda: energy(STIFFNESS, 0.1),
        "gradient (adjoint)": lambda: g(STIFFNESS, 0.1),
    }, 1, rounds, "forward solve")
    print("\nsolve_ivp memory: peak traced during one gradient")
    for rtol, atol in ((1e-5, 1e-7), (1e-9, 1e-11)):
        steps = solve_ivp(chain, (0.0, 10.0), Y0, args=(STIFFNESS, 0.1), rtol=rtol,
                          atol=atol).t.size
        g(STIFFNESS, 0.1, rtol, atol)
        top = peak(lambda r=rtol, a=atol: g(STIFFNESS, 0.1, r, a))
        print(f"  rtol {rtol:.0e}: {steps:5d} solver steps, peak {top / 1e6:7.2f} MB")
    q = grad(gaussian, wrt=(0, 1))
    q(0.7, 1.3)
    table("quad: a Gaussian times a cosine, two parameters", {
        "quad": lambda: gaussian(0.7, 1.3),
        "gradient (under the integral)": lambda: q(0.7, 1.3),
    }, 5, rounds, "quad")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
