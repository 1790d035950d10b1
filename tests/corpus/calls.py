"""Calls to the user's own functions: helpers, keywords and defaults, tuple results, loops,
closures, recursion, helpers calling helpers."""

import math

import numpy as np


def scaled_sine(a, b, scale=2.0):
    return np.sin(a) * b * scale


def euler_step(x, v, dt):
    a = -x
    return x + dt * v, v + dt * a


def calls_with_keywords_and_tuples(x, y):
    z = scaled_sine(x, y) + scaled_sine(y, x, scale=0.5)
    total = 0.0
    for i in range(3):
        total = total + np.sum(scaled_sine(z, x))
    p, q = euler_step(x, y, 0.1)
    return total + np.sum(p * q)


def power_recursive(x, n):
    if n == 0:
        return 1.0
    return x * power_recursive(x, n - 1)


def uses_recursion(x):
    return power_recursive(x, 4) + math.sin(x)


def inner_helper(u):
    return u * u + 1.0


def outer_helper(u, w):
    s = 0.0
    for i in range(2):
        s = s + inner_helper(u * w)
        if s > 100.0:
            return s
    return s


def nested_helpers(x, w):
    return outer_helper(x, w) * outer_helper(w, x)


def make_closure(k):
    def spring(x):
        return 0.5 * k * x * x
    return spring


_spring = make_closure(3.0)


def calls_closure(x):
    return _spring(x) + _spring(2.0 * x)


def simulate(x0, v0):
    x, v = x0, v0
    for step in range(20):
        x, v = euler_step(x, v, 0.05)
    return x * x + v * v


CASES = {
    "calls_keywords_tuples": (calls_with_keywords_and_tuples,
                              (np.array([0.3, 0.7]), np.array([1.1, -0.4])), (0, 1)),
    "recursion": (uses_recursion, (0.8,), (0,)),
    "nested_helpers": (nested_helpers, (0.7, 1.3), (0, 1)),
    "closure_helper": (calls_closure, (0.6,), (0,)),
    "helper_in_loop_tuple_state": (simulate, (1.0, 0.2), (0, 1)),
}


def nested_def_and_lambda(x, k):
    def spring(a):
        return 0.5 * k * a * a

    damp = lambda v, c=0.1: c * v * v  # noqa: E731
    total = 0.0
    for i in range(3):
        total = total + spring(x * i) + damp(x)
    k = k * 2.0
    return total + spring(x)


CASES["nested_def_and_lambda"] = (nested_def_and_lambda, (0.7, 1.3), (0, 1))


# Regressions found by random-program testing.


def reshaped_rows(p):
    return np.reshape(p.T, (2, 3))


def unpacks_an_array_result(x, z):
    first, second = reshaped_rows(z * x)
    return np.sum(second)


def stacked_and_raw(p):
    return (np.stack(p), p)


def ignores_one_output(x):
    stacked, raw = stacked_and_raw(x * np.array([0.5, 1.0, 2.0]))
    return np.mean(raw)


def broadcast_against_0d(x):
    a = x
    return np.sum(a[None] * (0.3 * np.array(0.5)))


def defined_on_one_path_then_returned(x):
    k = 0.5
    if k > 0.2 and k < 0.2:
        u, v = 1.0, 2.0  # noqa: F841
    else:
        return 0.5 * np.sum(x)
    v = v > 0.3
    return np.sum(x)


CASES.update({
    "unpacks_an_array_result": (unpacks_an_array_result,
                                (0.4, np.arange(6.0).reshape(2, 3) * 0.1), (0, 1)),
    "ignores_one_output": (ignores_one_output, (np.array([0.3, 0.2, 0.1]),), (0,)),
    "broadcast_against_0d": (broadcast_against_0d, (np.array([-0.7, 1.1, 0.8]),), (0,)),
    "defined_on_one_path_then_returned": (defined_on_one_path_then_returned,
                                          (np.array([-0.5, 0.8, 0.3]),), (0,)),
})


# --- *args and **kwargs: helpers that take them, calls that forward them -------------------------

def weighted(x, *weights, power=2.0, **terms):
    total = 0.0
    for i, w in enumerate(weights):
        total = total + w * np.sum(x ** power) * (i + 1.0)
    return total + terms["bias"] * np.sum(x) + terms.get("extra", 0.0)


def forward_all(*args, **kwargs):
    return weighted(*args, **kwargs)


def calls_with_varargs(x, w):
    plain = weighted(x, w, 0.5, power=3.0, bias=w)
    params = (w, w * w)
    options = {"bias": 0.5, "extra": w}
    return plain + forward_all(x, *params, **options) + forward_all(x, bias=w)


def forwards_own_varargs(x, *args):
    first, *rest = args
    return np.sum(x * first) + sum(r * np.sum(x) for r in rest)


CASES.update({
    "calls_with_varargs": (calls_with_varargs, (np.array([0.5, -0.3, 0.8]), 0.7), (0, 1)),
    "forwards_own_varargs": (forwards_own_varargs, (np.array([0.2, 0.4]), 1.5, 2.0, 0.5), (0,)),
})
