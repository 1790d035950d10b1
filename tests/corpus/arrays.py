"""Indexing, slicing, methods and assembly of arrays, alone and inside loops."""

import numpy as np


def index_and_slices(x, idx):
    a = x[0] * x[-1]
    b = np.sum(x[1:3] ** 2) + np.sum(x[idx])
    m = x[x > 0.5]
    return a + b + np.sum(m) + x[::2][1]


def matrix_indexing(w):
    return np.sum(w[:2, 0] * w[1, :2]) + w[1][2] * w[-1, -1]


def methods(x, w):
    y = x.reshape(2, 3).T.dot(w)
    z = y.sum(axis=0) + x.copy().mean() + x.ravel().sum()
    return z.sum() + y.squeeze().sum() + x.reshape((3, 2)).transpose(1, 0).sum(0).sum()


def heat_equation(u0, r):
    u = u0
    for step in range(30):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = np.concatenate((u[:1], u[1:-1] + r * lap, u[-1:]))
    return np.sum(u * u)


def loop_over_rows(x):
    total = 0.0
    for i in range(x.shape[0]):
        row = x[i]
        total = total + np.sum(np.tanh(row) * (i + 1))
    return total


def running_max_free_recurrence(x):
    h = 0.0
    for t in range(len(x)):
        h = np.tanh(0.5 * h + x[t])
    return h


def nondiff_methods(x):
    k = x.argmax()
    return x[k] * 2.0 + np.sum(x)


def stack_rows(a, b):
    s = np.stack((a, b * 2.0, a * b), axis=1)
    return np.sum(np.sin(s))


_rng = np.random.default_rng(3)
_X6 = np.array([0.3, 0.9, 1.2, 0.7, 0.1, 0.45])

CASES = {
    "index_and_slices": (index_and_slices, (_X6[:5], np.array([0, 0, 3])), (0,)),
    "matrix_indexing": (matrix_indexing, (_rng.uniform(-1, 1, (3, 3)),), (0,)),
    "methods": (methods, (_X6, np.full((2, 1), 0.5)), (0, 1)),
    "heat_equation": (heat_equation, (np.sin(np.linspace(0.0, 3.0, 12)), 0.2), (0, 1)),
    "loop_over_rows": (loop_over_rows, (_rng.uniform(-1, 1, (4, 3)),), (0,)),
    "recurrence_over_elements": (running_max_free_recurrence, (_X6,), (0,)),
    "nondiff_methods": (nondiff_methods, (_X6,), (0,)),
    "stack_rows": (stack_rows, (_X6[:3], _X6[3:]), (0, 1)),
}


def broadcast_inside_a_sum(x):
    """A value broadcast against a larger one inside a sum: its gradient counts the copies."""
    k = x * x
    return np.sum(k * k - np.concatenate([k[None], k[None]]))


CASES["broadcast_inside_a_sum"] = (broadcast_inside_a_sum, (
    np.array([[-1.296, 0.246, 0.491], [-1.414, 0.416, 1.212]]),), (0,))


def powers_by_products(x, c):
    """Products of one value with itself (``x * x * x``, ``3.0 * x * x``) get one partial
    each (``3 x**2``, ``6 x``); a factor read again, or a base reassigned between the two
    products, keeps the step-by-step partials."""
    cube = x * x * x
    quartic = 2.0 * x * x * x * x
    square = x * x
    reused = square * x + square  # square is read twice: no power partial for it
    y = 3.0 * c * c
    for i in range(2):
        c = c * 0.5
    z = y * c  # y = 3 c0**2 and the c of this line is another value
    return np.sum(cube + quartic + reused) + np.sum(z * x)


CASES["powers_by_products"] = (powers_by_products, (np.array([0.7, -1.3, 0.4]), 0.9), (0, 1))
CASES["powers_of_a_float"] = (powers_by_products, (0.7, -0.9), (0, 1))
