"""Integrators taking the right-hand side as an argument, the way they are usually written."""

from tests.userpkg import physics


def euler_step(rhs, y, dt):
    return y + dt * rhs(y)


def rk4_step(rhs, y, dt):
    k1 = rhs(y)
    k2 = rhs(y + 0.5 * dt * k1)
    k3 = rhs(y + 0.5 * dt * k2)
    k4 = rhs(y + dt * k3)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def integrate(step, rhs, y, dt, n):
    for _ in range(n):
        y = step(rhs, y, dt)
    return y


def stiff_rhs(x):
    return physics.stiff_force(x)
