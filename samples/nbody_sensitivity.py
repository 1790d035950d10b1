"""Sensitivity of a gravitational three-body simulation to its initial velocities.

Three equal masses start on the figure-eight choreography (Chenciner & Montgomery, G = 1) and
are integrated with the leapfrog (kick-drift-kick) scheme, with a small softening length, in a
Python loop over time steps. ``grad`` gives, in one backward sweep each:

* d E_final / d v_initial, the sensitivity of the final total energy. Leapfrog nearly conserves
  energy, so it is close to d E_initial / d v_initial = m v_initial: a physics check;
* d x_final / d v_initial, the sensitivity of the final x coordinate of body 0.

Both are checked against central finite differences.

Run:  python samples/nbody_sensitivity.py [plot.png]
(the plot is written only when a PNG path is given and matplotlib is installed)
"""

import sys

import numpy as np

from transpiler import check_grad, grad

G = 1.0
SOFTENING = 0.01
DT = 0.01
STEPS = 200


def accelerations(pos, masses):
    """Softened gravitational acceleration of every body; ``pos`` has shape (n, 2)."""
    diff = pos[None, :, :] - pos[:, None, :]          # diff[i, j] = pos[j] - pos[i]
    r2 = np.sum(diff ** 2, axis=-1) + SOFTENING ** 2
    inv_r3 = r2 ** -1.5
    return G * np.sum(masses[None, :, None] * diff * inv_r3[:, :, None], axis=1)


def total_energy(pos, vel, masses):
    kinetic = 0.5 * np.sum(masses[:, None] * vel ** 2)
    diff = pos[None, :, :] - pos[:, None, :]
    r = np.sqrt(np.sum(diff ** 2, axis=-1) + SOFTENING ** 2)
    potential = -G * np.sum(np.triu(np.outer(masses, masses) / r, k=1))  # pairs i < j
    return kinetic + potential


def leapfrog(pos, vel, masses):
    acc = accelerations(pos, masses)
    for _ in range(STEPS):
        vel = vel + 0.5 * DT * acc
        pos = pos + DT * vel
        acc = accelerations(pos, masses)
        vel = vel + 0.5 * DT * acc
    return pos, vel


def final_energy(vel0, pos0, masses):
    pos, vel = leapfrog(pos0, vel0, masses)
    return total_energy(pos, vel, masses)


def final_x_of_body0(vel0, pos0, masses):
    pos, vel = leapfrog(pos0, vel0, masses)
    return pos[0, 0]


def initial_conditions():
    pos0 = np.array([[0.97000436, -0.24308753], [-0.97000436, 0.24308753], [0.0, 0.0]])
    v3 = np.array([-0.93240737, -0.86473146])
    vel0 = np.array([-0.5 * v3, -0.5 * v3, v3])
    masses = np.ones(3)
    return pos0, vel0, masses


def main() -> None:
    np.set_printoptions(precision=6, suppress=True)
    pos0, vel0, masses = initial_conditions()
    pos_final, vel_final = leapfrog(pos0, vel0, masses)
    e0, e1 = total_energy(pos0, vel0, masses), final_energy(vel0, pos0, masses)
    print(f"{len(masses)} bodies, {STEPS} leapfrog steps of {DT}, softening {SOFTENING}")
    print(f"total energy: initial {e0:.8f}  final {e1:.8f}  "
          f"(relative drift {abs(e1 - e0) / abs(e0):.1e})")

    g_energy = grad(final_energy)(vel0, pos0, masses)
    print("d E_final / d v_initial =")
    print(g_energy)
    print("m * v_initial (= d E_initial / d v_initial) =")
    print(masses[:, None] * vel0)
    check_grad(final_energy, vel0, pos0, masses)
    print("check_grad(final_energy): agrees with central finite differences")

    g_x = grad(final_x_of_body0)(vel0, pos0, masses)
    print(f"final x of body 0: {pos_final[0, 0]:.8f}")
    print("d x_final[body 0] / d v_initial =")
    print(g_x)
    # central difference on one component, by hand: nudge body 2's initial x velocity
    h = 1e-6
    plus, minus = vel0.copy(), vel0.copy()
    plus[2, 0] += h
    minus[2, 0] -= h
    fd = (final_x_of_body0(plus, pos0, masses) - final_x_of_body0(minus, pos0, masses)) / (2 * h)
    print(f"d x_final[body 0] / d v_initial[2, 0]: gradient {g_x[2, 0]:.8f}  "
          f"central difference {fd:.8f}  difference {abs(fd - g_x[2, 0]):.1e}")

    if len(sys.argv) > 1:
        plot(sys.argv[1], pos0, vel0, masses)


def plot(path, pos0, vel0, masses):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pos, vel = pos0, vel0
    acc = accelerations(pos, masses)
    track = [pos]
    for _ in range(STEPS):
        vel = vel + 0.5 * DT * acc
        pos = pos + DT * vel
        acc = accelerations(pos, masses)
        vel = vel + 0.5 * DT * acc
        track.append(pos)
    track = np.array(track)
    fig, ax = plt.subplots(figsize=(6, 4))
    for body in range(len(masses)):
        (line,) = ax.plot(track[:, body, 0], track[:, body, 1], label=f"body {body}")
        ax.plot(track[0, body, 0], track[0, body, 1], "o", mfc="none", color=line.get_color())
        ax.plot(track[-1, body, 0], track[-1, body, 1], "o", color=line.get_color())
    ax.set_aspect("equal")
    ax.set_title(f"leapfrog, t = 0 (open) to {STEPS * DT:g} (filled)")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
