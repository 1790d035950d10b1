"""Branches and loops, each checked against finite differences by tests/test_gradients.py.

``CASES`` maps a name to ``(function, args, wrt)``.
"""

import math

import numpy as np


def branch_scalar(x, y):
    if x > y:
        z = x * y
    else:
        z = x + math.sin(y)
    return z * x


def elif_chain(x):
    if x < -1.0:
        y = -x * 2.0
    elif x < 1.0:
        y = x * x
    else:
        y = math.exp(x)
    return y + x


def branch_only_one_side(x, w):
    y = x * w
    if np.sum(x) > 0.0:
        y = y * 3.0
    return np.sum(y * y)


def branch_on_array_reduction(x):
    s = np.sum(x)
    if s > 1.0 and s < 100.0:
        x = x / s
    return np.sum(np.sin(x))


def for_range_tanh(x, w):
    for i in range(4):
        x = np.tanh(x * w + i)
    return np.sum(x)


def for_range_bounds_step(x):
    acc = 0.0
    for k in range(7, 1, -2):
        acc = acc + x ** k / k
    return acc


def for_accumulates_into_invariant(x, w):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.sin(w * x) * i)
    return total


def nested_loops(x):
    y = x
    for i in range(3):
        for j in range(i + 1):
            y = y * 0.9 + np.cos(y) * 0.1
    return np.sum(y)


def branch_in_loop(x):
    y = x
    for i in range(5):
        if np.sum(y) > 2.0:
            y = y * 0.5
        else:
            y = y + np.exp(-y)
    return np.sum(y * y)


def loop_in_branch(x):
    if np.sum(x) > 0.0:
        for i in range(3):
            x = x * x + 0.1
    else:
        x = -x
    return np.sum(x)


def while_data_dependent(x):
    y = x
    while y < 10.0:
        y = y * 1.5 + x
    return y


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def bisection_like(x):
    lo = 0.0
    hi = x
    steps = 0
    while steps < 8:
        mid = 0.5 * (lo + hi)
        if mid * mid > x:
            hi = mid
        else:
            lo = mid
        steps = steps + 1
    return lo * hi


def while_with_array_state(x, w):
    n = 0
    while n < 4:
        x = np.tanh(x @ w)
        n = n + 1
    return np.sum(x)


def rk4_oscillator(k, c, x0):
    x = x0
    v = 0.0
    dt = 0.01
    for step in range(50):
        a1 = -k * x - c * v
        x2 = x + 0.5 * dt * v
        v2 = v + 0.5 * dt * a1
        a2 = -k * x2 - c * v2
        x3 = x + 0.5 * dt * v2
        v3 = v + 0.5 * dt * a2
        a3 = -k * x3 - c * v3
        x4 = x + dt * v3
        v4 = v + dt * a3
        a4 = -k * x4 - c * v4
        x = x + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return x * x + v * v


def loop_carried_not_read(x):
    y = 0.0
    for i in range(3):
        y = x * i
    return y


def augmented_in_loop(x):
    s = 0.0
    for i in range(4):
        s += np.sum(x) * i
        s *= 0.5
    return s


_rng = np.random.default_rng(7)
_VEC = _rng.uniform(-1.0, 1.0, 3)
_MAT = _rng.uniform(-0.5, 0.5, (3, 3))

CASES = {
    "branch_scalar_true": (branch_scalar, (1.3, 0.5), (0, 1)),
    "branch_scalar_false": (branch_scalar, (0.3, 0.5), (0, 1)),
    "elif_low": (elif_chain, (-1.5,), (0,)),
    "elif_mid": (elif_chain, (0.4,), (0,)),
    "elif_high": (elif_chain, (1.7,), (0,)),
    "branch_one_side_taken": (branch_only_one_side, (np.abs(_VEC), 0.7), (0, 1)),
    "branch_one_side_skipped": (branch_only_one_side, (-np.abs(_VEC), 0.7), (0, 1)),
    "branch_bool_ops": (branch_on_array_reduction, (np.abs(_VEC) + 1.0,), (0,)),
    "for_range_tanh": (for_range_tanh, (_VEC, 0.7), (0, 1)),
    "for_range_bounds_step": (for_range_bounds_step, (0.9,), (0,)),
    "for_invariant_accumulates": (for_accumulates_into_invariant, (_VEC, 0.3), (0, 1)),
    "nested_loops": (nested_loops, (_VEC,), (0,)),
    "branch_in_loop": (branch_in_loop, (np.abs(_VEC),), (0,)),
    "loop_in_branch_true": (loop_in_branch, (np.abs(_VEC) * 0.5,), (0,)),
    "loop_in_branch_false": (loop_in_branch, (-np.abs(_VEC),), (0,)),
    "while_data_dependent": (while_data_dependent, (0.8,), (0,)),
    "newton_sqrt": (newton_sqrt, (2.0,), (0,)),
    "bisection_like": (bisection_like, (2.0,), (0,)),
    "while_array_state": (while_with_array_state, (_VEC, _MAT), (0, 1)),
    "rk4_oscillator": (rk4_oscillator, (4.0, 0.3, 1.0), (0, 1, 2)),
    "loop_carried_not_read": (loop_carried_not_read, (0.7,), (0,)),
    "augmented_in_loop": (augmented_in_loop, (_VEC,), (0,)),
}


def conditional_expressions(x, y):
    z = x * y if x > y else math.sin(x) + y
    return (z if z > 0.5 else -z) * x


def conditional_expression_arrays(x):
    s = np.sum(x)
    return np.sum(x * 2.0 if s > 0.0 else x * x) + (s if s > 1.0 else 0.0)


CASES.update({
    "ifexp_true": (conditional_expressions, (1.3, 0.5), (0, 1)),
    "ifexp_false_pos": (conditional_expressions, (0.2, 0.5), (0, 1)),
    "ifexp_false_neg": (conditional_expressions, (-1.0, 0.5), (0, 1)),
    "ifexp_arrays_pos": (conditional_expression_arrays, (np.abs(_VEC) + 0.5,), (0,)),
    "ifexp_arrays_neg": (conditional_expression_arrays, (-np.abs(_VEC),), (0,)),
})


def break_in_for(x):
    for i in range(20):
        x = x * 1.3 + 0.1
        if x > 5.0:
            break
    return x


def continue_in_for(x):
    total = 0.0
    for i in range(6):
        if i % 2 == 0:
            continue
        total = total + math.sin(x * i)
    return total


def early_return_in_branch(x):
    if x > 1.0:
        return x * x
    y = math.exp(x)
    return y * x


def return_from_nested_loop(x):
    y = x
    for i in range(5):
        for j in range(5):
            y = y * 1.1 + 0.05
            if y > 3.0:
                return y * x
    return y


def break_in_while_with_else(x):
    y = x
    n = 0
    while n < 10:
        y = y + math.sin(y)
        n = n + 1
        if y > 2.5:
            break
    else:
        y = y * 10.0
    return y


def for_else_without_break(x):
    y = x
    for i in range(3):
        y = y * y * 0.5
    else:
        y = y + 1.0
    return y


def break_nested_in_if_in_loop_arrays(x, w):
    h = x
    for step in range(10):
        h = np.tanh(h @ w)
        if np.sum(h * h) < 0.05:
            if step > 1:
                break
        h = h * 1.5
    return np.sum(h)


CASES.update({
    "break_in_for": (break_in_for, (0.7,), (0,)),
    "continue_in_for": (continue_in_for, (0.4,), (0,)),
    "early_return_taken": (early_return_in_branch, (1.5,), (0,)),
    "early_return_not_taken": (early_return_in_branch, (0.5,), (0,)),
    "return_from_nested_loop": (return_from_nested_loop, (0.9,), (0,)),
    "break_in_while_with_else_breaks": (break_in_while_with_else, (1.2,), (0,)),
    "break_in_while_with_else_runs_else": (break_in_while_with_else, (-0.5,), (0,)),
    "for_else_without_break": (for_else_without_break, (1.1,), (0,)),
    "break_nested_in_if_arrays": (break_nested_in_if_in_loop_arrays, (_VEC, _MAT), (0, 1)),
})


def loop_over_array_rows(x, w):
    total = 0.0
    for row in x:
        total = total + np.sum(np.tanh(row * w))
    return total


def loop_enumerate_zip_reversed(xs, ys):
    acc = 0.0
    for i, v in enumerate(xs, 1):
        acc = acc + v * i
    for a, b in zip(xs, ys):
        acc = acc + a * b
    for v in reversed(ys):
        acc = acc * 0.9 + math.sin(v)
    return acc


def loop_over_pairs(x):
    pairs = ((x, 2.0), (x * x, 3.0))
    total = 0.0
    for value, weight in pairs:
        total = total + value * weight
    return total


def unpack_a_pair(x):
    p = (x * 2.0, math.exp(x))
    a, b = p
    return a * b


CASES.update({
    "loop_over_array_rows": (loop_over_array_rows, (np.abs(_MAT), _VEC), (0, 1)),
    "loop_enumerate_zip_reversed": (loop_enumerate_zip_reversed, (_VEC, _VEC[::-1].copy()),
                                    (0, 1)),
})


# Regressions found by random-program testing: values defined on one path only, blocks whose
# adjoint is empty, and values used only in comparisons.


def defined_in_branch_else_returns(x):
    if x[0] > 5.0:
        a = np.sin(x)
    else:
        return np.sum(x)
    return np.sum(a)


def pass_branch_else_returns(x, y):
    if x > 1.0:
        pass
    else:
        return y * 2.0
    return y


def loop_return_and_break(x, z):
    for i in range(3):
        if np.sum(x) > 5.0:
            return np.sum(z)
        break
    return np.sum(z * x)


def value_only_compared(y):
    u = y * 1.0
    return np.sum(np.where(u > 0.0, 0.5, 1.0) * y)


def constant_conditional_expression(x):
    a = 0.5 if x[0] > 0.0 else x
    return np.sum(a) + np.sum(x)


CASES.update({
    "defined_in_branch_else_returns": (defined_in_branch_else_returns, (_VEC,), (0,)),
    "pass_branch_else_returns": (pass_branch_else_returns, (0.5, 1.5), (0, 1)),
    "loop_return_and_break": (loop_return_and_break, (_VEC, _VEC * 0.5), (0, 1)),
    "value_only_compared": (value_only_compared, (_VEC,), (0,)),
    "constant_conditional_expression": (constant_conditional_expression, (_VEC,), (0,)),
})


def returns_a_conditional_expression(x):
    y = x * 3.0
    return y * 2.0 if y > 0.0 else math.sin(y)


CASES.update({
    "return_ifexp_true": (returns_a_conditional_expression, (0.4,), (0,)),
    "return_ifexp_false": (returns_a_conditional_expression, (-0.4,), (0,)),
})


def while_min_of_where(x, y):
    """A carried array the loop's adjoint reads for its shape only, whose previous value (the
    copy-back's source) it reads in full: the tape must keep the value (random program 205706)."""
    n = 0
    while n < 5 and not (y.mean() * x) > 0.2:
        n += 1
        y = np.minimum(np.where(x > -0.3, n, y), 0.9)
    return x + np.sum(y * y)


CASES.update({
    "while_min_of_where": (while_min_of_where, (-0.388, np.array([-0.011, 0.391, -0.517])),
                           (1,)),
})
