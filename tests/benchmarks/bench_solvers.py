"""What a library solver's derivative costs beside the solve: an ODE's adjoint (solve_ivp), an
integral's derivative under the integral sign (quad), and a fixed point's by the implicit
function theorem (a loop marked converged).

Run from the repository root::

    python -m tests.benchmarks.bench_solvers            # ~1 min
    python -m tests.benchmarks.bench_solvers --quick

Not part of the test suite. The primal and its gradient are timed round-robin in one process
(the minimum over rounds), so their ratio is measured under the same load. The ODE's memory is
the peak traced by ``tracemalloc`` during one gradient, at two tolerances: the tighter one takes
several times the steps, and the peak should not follow them (RK45's adjoint keeps at most as
many of the steps' states as there are outputs, and recomputes the steps between). The fixed
point (a mean field over 10,000 sites, about 1,000 damped iterations) is timed the same way: its
gradient's cost beyond the primal is reported in primal iterations, twice: from the usual start
(the difference of two times of about 1,000 iterations, within the machine's noise) and from a
start at the fixed point (one iteration: the implicit derivative's own cost, measured alone),
and its peak memory at two tolerances (about 600 and 1,000 iterations).
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np
from scipy.integrate import quad, solve_ivp

from tests.benchmarks.bench_call import interleaved
from transpiler import converged, grad

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


FIELD = 0.3 * _rng.normal(size=10_000)  # the sites' fields of the mean-field fixed point


def magnetization(beta, h, tol=1e-15, m=0.5):
    """The mean field ``m = mean(tanh(beta (m + h)))``, by damped iterations from ``m``."""
    for _ in converged(range(10000)):
        m_new = 0.8 * m + 0.2 * np.mean(np.tanh(beta * (m + h)))
        if abs(m_new - m) < tol:
            break
        m = m_new
    return (m - 0.01) ** 2


def iterations(beta, h, tol=1e-15) -> int:
    m, k = 0.5, 0
    while True:
        k += 1
        m_new = 0.8 * m + 0.2 * np.mean(np.tanh(beta * (m + h)))
        if abs(m_new - m) < tol:
            return k
        m = m_new


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
    f = grad(magnetization, wrt=(0, 1))
    f(0.9, FIELD)
    count = iterations(0.9, FIELD)
    best = interleaved({"primal": lambda: magnetization(0.9, FIELD),
                        "gradient": lambda: f(0.9, FIELD)}, 1, 4 * rounds)
    one = best["primal"] / count
    print(f"\nfixed point (a loop marked converged): a mean field over {FIELD.size} sites, "
          f"{count} iterations ({one * 1e6:.1f} us each)")
    print(f"  primal {best['primal'] * 1e3:8.2f} ms, gradient {best['gradient'] * 1e3:8.2f} ms: "
          f"{(best['gradient'] - best['primal']) / one:5.1f} iterations beyond the primal")
    m = 0.5
    for _ in range(count):
        m = 0.8 * m + 0.2 * np.mean(np.tanh(0.9 * (m + FIELD)))
    near = interleaved({"primal": lambda: magnetization(0.9, FIELD, 1e-15, m),
                        "gradient": lambda: f(0.9, FIELD, 1e-15, m)}, 20, 4 * rounds)
    print(f"  from the fixed point (one iteration): primal {near['primal'] * 1e3:6.3f} ms, "
          f"gradient {near['gradient'] * 1e3:6.3f} ms: "
          f"{(near['gradient'] - near['primal']) / one:5.1f} iterations beyond the primal")
    for tol in (1e-9, 1e-15):
        f(0.9, FIELD, tol)
        top = peak(lambda t=tol: f(0.9, FIELD, t))
        print(f"  tol {tol:.0e}: {iterations(0.9, FIELD, tol):5d} iterations, gradient's peak "
              f"{top / 1e6:6.2f} MB")
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
