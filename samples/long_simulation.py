"""The gradient of a long 2-D reaction-diffusion simulation, in bounded memory.

The model is Fisher-KPP on a periodic square grid, u_t = D (u_xx + u_yy) + u (1 - u), stepped
explicitly for STEPS time steps. The loss compares the final state with one observed (made
here with D = 0.25); its
gradient with respect to the initial state and the diffusion coefficient D is what a
sensitivity study or an inverse problem needs. Taped whole, that gradient keeps every time
step's state (and a few values per step besides): memory grows with the number of steps. The
loop is marked ``checkpoint(range(STEPS), snapshots=16)``: the gradient then keeps at most 16
states, recomputes the others from them (the binomial schedule needs the fewest
recomputations for 16 snapshots), and is the same gradient.

The script prints the memory report of both gradients (``grad(f).memory(*args)``), their traced
peak memory and time, and checks that they agree.

Run:  python samples/long_simulation.py [steps]
"""

import sys
import time
import tracemalloc

import numpy as np

from transpiler import checkpoint, grad

N = 96           # grid points per side
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 400
DT = 0.02


def laplacian(u):
    return (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
            + np.roll(u, -1, axis=1) - 4.0 * u)


def advance(u, D):
    """One explicit time step."""
    return u + DT * (D * laplacian(u) + u * (1.0 - u))


def simulate(u0, D):
    u = u0
    for _ in range(STEPS):
        u = advance(u, D)
    return u


def loss(u0, D, measured):
    u = u0
    for _step in checkpoint(range(STEPS), snapshots=16):
        u = advance(u, D)
    return 0.5 * np.sum((u - measured) ** 2)


def peak_and_time(gradient, *args):
    gradient(*args)  # compiled once, outside the measurement
    tracemalloc.start()
    start = time.perf_counter()
    result = gradient(*args)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak, seconds


def main():
    y, x = np.mgrid[0:N, 0:N] / N
    u0 = 0.2 + 0.6 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.02)
    measured = simulate(u0, 0.25)  # an observation made with D = 0.25
    D = 0.2
    checkpointed = grad(loss, wrt=(0, 1))
    taped = grad(loss, wrt=(0, 1), checkpoint=False)  # the same loop, taped whole

    print(f"Fisher-KPP on a {N} x {N} grid, {STEPS} steps: gradient wrt (u0, D)\n")
    print("taped whole:")
    print(taped.memory(u0, D, measured))
    print("\nmarked checkpoint(range(STEPS), snapshots=16):")
    print(checkpointed.memory(u0, D, measured))

    (g_plain, dD_plain), peak_plain, t_plain = peak_and_time(taped, u0, D, measured)
    (g, dD), peak, t = peak_and_time(checkpointed, u0, D, measured)
    rel = max(np.max(np.abs(g - g_plain)) / np.max(np.abs(g_plain)),
              abs(dD - dD_plain) / abs(dD_plain))
    print(f"\ntraced peak: taped whole {peak_plain / 1e6:.1f} MB, checkpointed {peak / 1e6:.1f} "
          f"MB ({peak / peak_plain:.3f}x)")
    print(f"time: taped whole {t_plain:.2f} s, checkpointed {t:.2f} s ({t / t_plain:.2f}x)")
    print(f"d loss / d D = {dD:.10g} (taped whole: {dD_plain:.10g}); largest relative "
          f"difference {rel:.1e}")


if __name__ == "__main__":
    main()
