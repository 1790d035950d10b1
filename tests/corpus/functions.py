"""Calls and values: functions passed to helpers (module-level, defined inside, lambdas,
partials), container literals passed to helpers, keyword-only arguments, helpers from other
modules of the user's package, and arrays built from differentiated values (np.full,
np.linspace, np.arange)."""

import functools
import math

import numpy as np

import tests.userpkg.physics as ph
from tests.userpkg import integrators
from tests.userpkg.integrators import rk4_step
from tests.userpkg.physics import energy, spring_force

# --- a function passed to a helper ------------------------------------------------------------


def decay(y):
    return -0.7 * y + 0.1 * np.sin(y)


def rk4(f, y, dt):
    k1 = f(y)
    k2 = f(y + 0.5 * dt * k1)
    k3 = f(y + 0.5 * dt * k2)
    k4 = f(y + dt * k3)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def integrate(f, y, n, dt):
    for i in range(n):
        y = rk4(f, y, dt)
    return y


def passes_a_module_function(y0):
    y = y0
    for i in range(3):
        y = rk4(decay, y, 0.1)  # inlined: rk4's f(y) is decay(y)
    return np.sum(integrate(decay, y, 2, 0.1) ** 2)  # through integrate's pair


def passes_a_closure(y0, k):
    def rhs(y):
        return -k * y + 0.2 * np.sin(y)

    y = rk4(rhs, y0, 0.1)
    # (a method of the helper's result: it returns an array, whatever function it is given)
    return np.sum(integrate(rhs, y, 3, 0.1) ** 2) + integrate(decay, y, 1, 0.1).sum()


def passes_a_lambda(y0, k):
    y = integrate(lambda u: -k * u * u, y0, 3, 0.1)
    return np.sum(y) + np.sum(rk4(lambda u: k * np.cos(u), y0, 0.2))


def passes_lambdas_within_lambdas(y0, k):
    def rhs(u):
        return rk4(lambda v: -v * k, u, 0.1) - u

    y = integrate(lambda u: -k * rk4(lambda v: -v * k, u, 0.1), y0, 2, 0.1)
    return np.sum(integrate(rhs, y, 2, 0.1))


def force(y, k, c=0.0):
    return -k * y - c * y ** 3


PARTIAL_FORCE = functools.partial(force, k=1.5, c=0.2)


def passes_partials(y0, k):
    f = functools.partial(force, k=k, c=0.1)
    k = 2.0 * k  # f keeps the k it was made with
    y = integrate(f, y0, 2, 0.1)
    y = integrate(functools.partial(force, k=0.5, c=k), y, 2, 0.1)
    return np.sum(y * y) + np.sum(f(y0)) + np.sum(PARTIAL_FORCE(y)) + np.sum(
        integrate(PARTIAL_FORCE, y0, 1, 0.1))


def partial_of_a_closure(x, k):
    def rhs(y, s):
        return -k * y * s

    f = functools.partial(rhs, s=2.0)
    k = 3.0 * k  # f(x) reads this k, as Python's closure does
    return np.sum(f(x) * x) + np.sum(integrate(f, x, 2, 0.1))


def scaled(x, s):
    return s * x


def passes_a_positional_partial(x, s):
    g = functools.partial(scaled, s=s)
    h = functools.partial(force, x)
    return np.sum(g(x) * h(s)) + np.sum(integrate(h, x, 1, 0.1))


def passes_a_ufunc(x):
    return np.sum(integrate(np.sin, x, 2, 0.1)) + np.sum(rk4(np.tanh, x, 0.3))


def dynamic(y, k):
    return integrators.integrate(integrators.euler_step, functools.partial(spring_force, k=k),
                                 y, 0.05, 4)


def integrates_from_the_package(y0, k):
    y = dynamic(y0, k)
    y = integrators.integrate(rk4_step, ph.stiff_force, y, 0.05, 2)
    y = integrators.integrate(rk4_step, lambda u: -k * u, y, 0.1, 3)
    return np.sum(y ** 2) + np.sum(rk4_step(integrators.stiff_rhs, y0, 0.1))


def solve(y, n, f=decay, dt=0.1):
    for i in range(n):
        y = rk4(f, y, dt)
    return y


def uses_a_default_function(y0, k):
    return np.sum(solve(y0, 3) ** 2) + np.sum(solve(y0, 2, lambda u: -k * u))


CASES = {
    "passes_lambdas_within_lambdas": (passes_lambdas_within_lambdas, (np.array([0.3, 0.6]), 0.7),
                                      (0, 1)),
    "partial_of_a_closure": (partial_of_a_closure, (np.array([0.5, -1.0]), 0.4), (0, 1)),
    "uses_a_default_function": (uses_a_default_function, (np.array([0.3, 0.9]), 0.6), (0, 1)),
    "passes_a_module_function": (passes_a_module_function, (np.array([1.0, -0.4]),), (0,)),
    "passes_a_closure": (passes_a_closure, (np.array([0.9, 0.3]), 0.8), (0, 1)),
    "passes_a_closure_floats": (passes_a_closure, (0.9, 0.8), (0, 1)),
    "passes_a_lambda": (passes_a_lambda, (np.array([0.5, 0.2]), 0.6), (0, 1)),
    "passes_partials": (passes_partials, (np.array([0.4, -0.3]), 0.7), (0, 1)),
    "passes_a_positional_partial": (passes_a_positional_partial, (np.array([0.4, 1.1]), 0.7),
                                    (0, 1)),
    "passes_a_ufunc": (passes_a_ufunc, (np.array([0.4, 1.1]),), (0,)),
    "integrates_from_the_package": (integrates_from_the_package, (np.array([0.3, -0.2]), 0.9),
                                    (0, 1)),
}


# --- container literals passed to helpers -----------------------------------------------------

def pair_energy(q):
    x, y = q
    return x * y + np.sin(x)


def listed_energy(qs):
    return qs[0] * qs[1] * qs[2]


def model(params, X):
    return np.sum(np.tanh(X @ params["w"] + params["b"]))


def passes_literals(x, y, w, b):
    X = np.array([[0.5, -0.2], [0.3, 0.8], [-1.0, 0.1]])
    total = pair_energy((x, y)) + 2.0 * pair_energy((y * x, x))
    total = total + listed_energy([x, y, x * y]) + model({"w": w, "b": b}, X)
    total = total + model(params={"w": w * x, "b": b}, X=X)
    nested = ((x, y), [y])
    return total + pair_energy(nested[0]) + np.sum(listed_energy([w, w, nested[1][0]]))


CASES["passes_literals"] = (passes_literals, (0.7, -0.4, np.array([0.3, -0.6]), 0.2),
                            (0, 1, 2, 3))


# --- keyword-only arguments -------------------------------------------------------------------

def damped(x, *, k, c=0.1):
    return -k * x - c * x ** 3


def keyword_only(x, *, k=1.5, scale=2.0):
    v = damped(x, k=k) + damped(x * scale, c=k, k=0.5)
    return np.sum(v * v) + ph.potential(x, k, g=scale)


CASES["keyword_only"] = (keyword_only, (np.array([0.3, -0.5, 0.8]),), (0,))


# --- helpers of another module ----------------------------------------------------------------

def from_another_module(q, v):
    return energy(q, v) + ph.energy(q * 0.5, v, m=3.0) + ph.pendulum(q[0], 2.0) + math.cos(
        ph.GRAVITY * q[1])


CASES["from_another_module"] = (from_another_module,
                                (np.array([0.3, -0.2, 0.4]), np.array([1.0, 0.5, -0.5])), (0, 1))


# --- arrays built from differentiated values --------------------------------------------------

def grid_values(a, b, h):
    xs = np.linspace(a, b, 7)
    mid, step = np.linspace(a, b, 4, endpoint=False, retstep=True)
    fill = np.full(xs.shape, h) + np.full_like(xs, a * b)
    steps = np.arange(a, a + 1.0, h)
    return np.sum(np.sin(xs) * fill) + step * np.sum(mid ** 2) + np.sum(steps ** 2)


CASES["grid_values"] = (grid_values, (0.3, 1.7, 0.23), (0, 1, 2))


# --- functions given as arguments of the differentiated function ------------------------------

def explicit_euler(y0, k, rhs, dt=0.1, steps=12):
    y = y0
    for _ in range(steps):
        y = y + dt * rhs(y, k)
    return np.sum(y ** 2)


def rk4_k(f, y, k, dt):
    k1 = f(y, k)
    k2 = f(y + 0.5 * dt * k1, k)
    k3 = f(y + 0.5 * dt * k2, k)
    k4 = f(y + dt * k3, k)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def linear_decay(y, k):
    return -k * y


def classic_rk4(y0, k, rhs=linear_decay, dt=0.1, steps=4):
    y = y0
    for _ in range(steps):
        y = rk4_k(rhs, y, k, dt)  # (inlined: rk4_k's f(y, k) is rhs(y, k))
    return np.sum(y * y) + np.sum(rk4_k(rhs, y0, k, 0.2))


def _damping(c):
    return lambda y, k: -k * y - c * np.sin(y)


QUADRATIC = lambda y, k: -k * y * y  # noqa: E731  (a lambda given as an argument)
DAMPED = _damping(0.3)  # a closure


def smooth_with(x, f, w):
    return np.sum(f(x) * w) + np.sum(f(w * x))


for _name, _rhs in [("module_function", linear_decay), ("lambda", QUADRATIC),
                    ("closure", DAMPED), ("partial", functools.partial(force, c=0.2)),
                    ("ufunc", np.multiply)]:
    CASES[f"given_{_name}"] = (explicit_euler, (np.array([0.8, -0.4]), 0.7, _rhs), (0, 1))
    CASES[f"given_{_name}_to_a_helper"] = (classic_rk4, (np.array([0.5, 1.2]), 0.6, _rhs),
                                           (0, 1))
CASES["given_a_function_by_default"] = (classic_rk4, (np.array([0.5, 1.2]), 0.6), (0, 1))
CASES["given_a_function_floats"] = (explicit_euler, (0.8, 0.7, QUADRATIC), (0, 1))
CASES["given_a_ufunc_of_one"] = (smooth_with, (np.array([0.3, -0.9]), np.tanh,
                                               np.array([1.5, 0.5])), (0, 2))
CASES["given_a_math_function"] = (smooth_with, (0.4, math.exp, 0.7), (0, 2))


# --- functions held in tables: picked by key or position -------------------------------------

def _relu(x):
    return np.maximum(x, 0.0)


def _softplus(x):
    return np.log1p(np.exp(x))


ACTIVATIONS = {"relu": _relu, "tanh": np.tanh, "softplus": _softplus}
STAGES = [np.sin, _softplus]


def activated_layer(w, x, name):
    h = ACTIVATIONS[name](w * x)
    return np.sum(STAGES[1](h) * w) + np.sum(STAGES[0](w))


def activation_by_literal(w, kind="tanh"):
    return np.sum({"tanh": np.tanh, "sin": np.sin, "own": _softplus}[kind](w) ** 2)


for _name in ACTIVATIONS:
    CASES[f"table_of_activations_{_name}"] = (
        activated_layer, (np.array([0.3, -0.5, 1.2]), np.array([1.1, 0.4, -0.7]), _name),
        (0, 1))
for _kind in ("tanh", "own"):
    CASES[f"table_literal_{_kind}"] = (activation_by_literal, (np.array([0.3, -0.5]), _kind),
                                      (0,))
