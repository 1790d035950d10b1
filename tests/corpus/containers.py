"""Tuples, lists and dicts of differentiated values: literals, unpacking, indexing, sum, and
container arguments whose gradient has the same structure."""

import math

import numpy as np


def dict_of_parameters(params, x, y):
    pred = np.tanh(x @ params["w"] + params["b"])
    return np.mean((pred - y) ** 2)


def tuple_argument(wb, x):
    w, b = wb
    return np.sum(np.sin(w * x + b))


def list_argument(xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(x * x)
    return total + xs[0][1]


def literal_containers(x):
    p = (x * 2.0, math.exp(x))
    a, b = p
    d = {"first": a, "second": b * x}
    return d["first"] * d["second"] + sum([a, b, 1.0])


def nested_literals(x, y):
    pairs = ((x, 2.0), (x * y, 3.0))
    total = 0.0
    for value, weight in pairs:
        total = total + value * weight
    return total


def state_tuple_in_loop(x0, v0):
    state = (x0, v0)
    for step in range(10):
        x, v = state
        state = (x + 0.1 * v, v - 0.1 * math.sin(x))
    return state[0] * state[1]


_rng = np.random.default_rng(11)
_X = _rng.uniform(-1, 1, (5, 3))
_Y = _rng.uniform(-1, 1, 5)

CASES = {
    "dict_of_parameters": (dict_of_parameters,
                           ({"w": _rng.uniform(-1, 1, 3), "b": 0.3}, _X, _Y), (0,)),
    "tuple_argument": (tuple_argument, ((_rng.uniform(-1, 1, 3), 0.2), _X[0]), (0,)),
    "list_argument": (list_argument, ([_X[0], _X[1], _X[2]],), (0,)),
    "literal_containers": (literal_containers, (0.7,), (0,)),
    "nested_literals": (nested_literals, (0.7, -1.3), (0, 1)),
    "state_tuple_in_loop": (state_tuple_in_loop, (0.5, 1.0), (0, 1)),
}


def comprehension_sum(x, w):
    terms = [np.sum(np.sin(x * k)) * w for k in range(1, 4)]
    return sum(terms) + sum(v * v for v in x if v > -5.0)


def list_built_with_append(x):
    states = []
    s = x
    for i in range(4):
        s = np.tanh(s * 1.5 + 0.1)
        states.append(s)
    return np.sum(np.stack(states)) + np.sum(states[-1] * states[0])


def nested_comprehension(x):
    grid = [[xi * xj for xj in x] for xi in x]
    return sum(sum(row) for row in grid)


CASES.update({
    "comprehension_sum": (comprehension_sum, (_rng.uniform(-1, 1, 4), 0.7), (0, 1)),
    "list_built_with_append": (list_built_with_append, (_rng.uniform(-1, 1, 3),), (0,)),
    "nested_comprehension": (nested_comprehension, (_rng.uniform(-1, 1, 3),), (0,)),
})


# --- dicts walked by loops ------------------------------------------------------------------------

def walks_a_dict(params, scale):
    total = 0.0
    for key in params:
        total = total + np.sum(params[key] ** 2) * scale
    for name, value in params.items():
        if name == "w":
            total = total + np.sum(np.sin(value))
    return total + sum(np.sum(v) for v in params.values()) + len(list(params.keys()))


CASES.update({
    "walks_a_dict": (walks_a_dict, ({"w": np.array([0.5, -0.3]), "b": np.array([0.2])}, 1.5),
                     (0, 1)),
})


# --- dict and set comprehensions, sorted, pop -----------------------------------------------------

def dict_comprehension(x, scale):
    d = {k: x[i] ** 2 * scale for i, k in enumerate(["a", "b", "c"]) if k != "b"}
    squares = {i: {j: x[i] * x[j] for j in range(2)} for i in range(2)}
    return d["a"] + 2.0 * d["c"] + squares[1][0] + len({int(v > 0) for v in x})


def sorted_items(x, y):
    ys = sorted([x[0] * 2.0, y, x[2] ** 2, x[1] - y])
    by_size = sorted(x, key=abs, reverse=True)
    return ys[0] + 3.0 * ys[-1] + by_size[0] * by_size[1] + sum(sorted(x * y)[1:])


def popped_stack(x):
    stack = [x, x * 2.0]
    for i in range(3):
        stack.append(np.sin(stack[-1]) + x[i])
    first = stack.pop(0)
    total = np.sum(first)
    while stack:
        top = stack.pop()
        total = total + np.sum(top ** 2)
    weights = {"a": x[0], "b": x[1] ** 2, "c": x[2]}
    b = weights.pop("b")
    return total + b * weights["a"] + sum(weights.values())


CASES.update({
    "dict_comprehension": (dict_comprehension, (_rng.uniform(-1, 1, 3), 0.7), (0, 1)),
    "sorted_items": (sorted_items, (_rng.uniform(-1, 1, 3), 0.4), (0, 1)),
    "popped_stack": (popped_stack, (_rng.uniform(-1, 1, 3),), (0,)),
})
