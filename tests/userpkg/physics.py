"""Physics helpers of the user's package: module constants, helpers calling helpers."""

import functools
import math

import numpy as np

GRAVITY = 9.81
_WEIGHTS = np.array([1.0, 0.5, 0.25])


def _kinetic(v, m):
    return 0.5 * m * np.sum(v * v)


def potential(q, m, *, g=GRAVITY):
    return m * g * np.sum(_WEIGHTS[: np.size(q)] * q)


def energy(q, v, m=2.0):
    return _kinetic(v, m) + potential(q, m)


def spring_force(x, k, *, c=0.0):
    return -k * x - c * x ** 3


stiff_force = functools.partial(spring_force, k=4.0, c=0.5)


def pendulum(theta, length):
    return -GRAVITY / length * math.sin(theta)
