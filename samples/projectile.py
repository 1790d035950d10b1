"""Aim a projectile with quadratic air drag at a target, by gradient descent on the launch angle.

Shooting method: the flight is simulated with explicit Euler steps in a ``while`` loop that runs
until the projectile falls below the ground (a data-dependent number of steps); the landing point
is interpolated linearly between the last two steps. The loss is the squared miss distance, and
``grad`` differentiates it, loop and all, with respect to the launch angle.

Run:  python samples/projectile.py [plot.png]
(the plot is written only when a PNG path is given and matplotlib is installed)
"""

import math
import sys

from transpiler import check_grad, grad

GRAVITY = 9.81  # m/s^2
DRAG = 0.02     # 1/m: drag acceleration = -DRAG * |v| * v
DT = 0.01       # s


def landing_distance(angle, speed):
    """Horizontal distance at which a projectile launched from the origin hits the ground."""
    x, y = 0.0, 0.0
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    x_prev, y_prev = x, y
    while y >= 0.0:
        x_prev, y_prev = x, y
        v = math.sqrt(vx * vx + vy * vy)
        ax = -DRAG * v * vx
        ay = -GRAVITY - DRAG * v * vy
        x = x + DT * vx
        y = y + DT * vy
        vx = vx + DT * ax
        vy = vy + DT * ay
    # the ground was crossed between the last two points: interpolate where y = 0
    return x_prev + (x - x_prev) * y_prev / (y_prev - y)


def miss(angle, speed, target):
    """Squared distance between the landing point and the target."""
    return (landing_distance(angle, speed) - target) ** 2


def trajectory(angle, speed):
    """The (x, y) points of the flight, for the plot."""
    x, y = 0.0, 0.0
    vx, vy = speed * math.cos(angle), speed * math.sin(angle)
    xs, ys = [x], [y]
    while y >= 0.0:
        v = math.sqrt(vx * vx + vy * vy)
        x, y = x + DT * vx, y + DT * vy
        vx, vy = vx - DT * DRAG * v * vx, vy - DT * (GRAVITY + DRAG * v * vy)
        xs.append(x)
        ys.append(y)
    return xs, ys


def main() -> None:
    speed = 30.0   # m/s
    target = 40.0  # m
    angle = math.radians(20.0)
    check_grad(miss, angle, speed, target)  # agrees with central finite differences

    dmiss = grad(miss)  # with respect to the angle
    learning_rate = 3e-4
    history = [angle]
    print(f"speed {speed} m/s, drag {DRAG} 1/m, target {target} m")
    for it in range(200):
        error = landing_distance(angle, speed) - target
        if abs(error) < 1e-6:
            break
        if it % 5 == 0:
            print(f"iteration {it:3d}  angle {math.degrees(angle):8.4f} deg  "
                  f"landing error {error:+.6f} m")
        angle = angle - learning_rate * dmiss(angle, speed, target)
        history.append(angle)

    error = landing_distance(angle, speed) - target
    print(f"launch angle found: {math.degrees(angle):.4f} deg after {it} iterations")
    print(f"landing distance: {landing_distance(angle, speed):.6f} m  "
          f"landing error: {error:+.2e} m")

    if len(sys.argv) > 1:
        plot(sys.argv[1], history, speed, target)


def plot(path, history, speed, target):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for i, angle in enumerate(history[:6] + history[-1:]):
        xs, ys = trajectory(angle, speed)
        last = i == min(6, len(history) - 1)
        ax.plot(xs, ys, "-" if last else ":", lw=2 if last else 1,
                label=f"{math.degrees(angle):.2f} deg")
    ax.axvline(target, color="k", lw=0.8)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
