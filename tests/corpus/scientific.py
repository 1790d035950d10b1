"""Functions written the way scientists write them: input checks, context managers, returns in
branches, explicit time-stepping schemes, parameter objects, integrators taking a right-hand side.
Nothing here was rewritten to please the compiler."""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import warnings
from typing import NamedTuple

import numpy as np

log = logging.getLogger(__name__)
_rng = np.random.default_rng(15)


# --- input checks and statements that leave the mathematics alone ------------------------------

def rosenbrock_checked(x):
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    if len(x) < 2:
        raise ValueError("need at least two coordinates")
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def log_likelihood(mu, sigma, data):
    assert sigma > 0, "sigma must be positive"
    if not np.all(np.isfinite(data)):
        warnings.warn("non-finite data ignored", stacklevel=2)
    n = data.size
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (data - mu) / sigma
        ll = -0.5 * np.sum(z ** 2) - n * np.log(sigma) - 0.5 * n * math.log(2.0 * math.pi)
    return ll


def huber(r, delta=1.0):
    a = abs(r)
    if a <= delta:
        return 0.5 * r * r
    else:
        return delta * (a - 0.5 * delta)


def huber_total(x):
    total = 0.0
    for r in x:
        total = total + huber(r, 0.5)
    return total


def piecewise(x):
    if x < -1.0:
        return -x - 0.5
    elif x < 1.0:
        return 0.5 * x * x
    return x - 0.5


def first_crossing(v, dt):
    """Free fall with drag: the height when the velocity first exceeds 1, else at the end."""
    h = 10.0
    for _ in range(200):
        v = v + dt * (9.81 - 0.3 * v * v)
        h = h - dt * v
        if not math.isfinite(h):
            raise FloatingPointError("height diverged")
        if v > 1.0:
            return h
    return h


def logged_energy(x, k):
    e = 0.5 * k * np.sum(x ** 2)
    log.debug("energy %s", e)
    print(f"energy: {e:.3f}")
    return e


def quiet_log(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.log(np.abs(x) + 1.0)
    return np.sum(y * y)


# --- explicit schemes -----------------------------------------------------------------------------

def heat_explicit(u, alpha):
    for _ in range(20):
        un = u.copy()
        un[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = un
    return np.sum(u ** 2)


def wave_leapfrog(u0, c):
    u_prev = u0.copy()
    u = u0.copy()
    un = np.zeros_like(u0)
    for _ in range(15):
        un[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_prev, u, un = u, un, u_prev
    return np.sum(u * u) + u[-1]


def oscillator_dict_state(k, x0):
    state = {"x": x0, "v": 0.0}
    dt = 0.01
    for _ in range(100):
        state["v"] = state["v"] - dt * k * state["x"]
        state["x"] = state["x"] + dt * state["v"]
    return state["x"] ** 2 + state["v"] ** 2


def _leapfrog_step(state, k, dt):
    """Updates the dict it is given; returns nothing."""
    state["v"] = state["v"] - dt * k * state["x"]
    state["x"] = state["x"] + dt * state["v"]


def _record(history, value):
    history.append(value * value)


def leapfrog_helper(k, x0):
    state = {"x": x0, "v": 0.0}
    history = []
    for _ in range(20):
        _leapfrog_step(state, k, 0.05)
        _record(history, state["x"])
    return state["x"] ** 2 + state["v"] ** 2 + sum(history) * 0.1


def trajectory_end(w):
    traj = [w]
    for _ in range(5):
        w = w - 0.1 * np.sin(w)
        traj.append(w)
    return traj[-1][-1] + np.sum(traj[2])


# --- parameter objects ------------------------------------------------------------------------

@dataclasses.dataclass
class Material:
    k: float
    c: float
    name: str = "steel"
    n_modes: int = 3


def material_energy(p, x):
    return 0.5 * p.k * np.sum(x ** 2) + p.c * np.sum(x) * p.n_modes


class Params(NamedTuple):
    a: float
    b: np.ndarray


def named_params(p, x):
    return p.a * np.sum(np.sin(p.b * x))


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float
    offset: float


def frozen_replace(cfg, x):
    cfg2 = dataclasses.replace(cfg, scale=cfg.scale * 2.0)
    return np.sum(cfg2.scale * x + cfg2.offset)


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Model:
    hidden: Layer
    out: Layer
    extras: dict


def nested_model(m, X):
    h = np.tanh(X @ m.hidden.w + m.hidden.b)
    y = h @ m.out.w + m.out.b
    return np.mean(y ** 2) + m.extras["decay"] * np.sum(m.out.w ** 2)


class Spring:
    def __init__(self, k, rest=1.0):
        self.k = k
        self.rest = rest

    def energy(self, x):
        return 0.5 * self.k * (x - self.rest) ** 2

    @property
    def stiffness(self):
        return self.k

    @staticmethod
    def clamp(x):
        return min(x, 10.0)

    @classmethod
    def unit(cls):
        return cls(1.0)


def spring_energy(k, x):
    s = Spring(k)
    return s.energy(x) + s.stiffness * Spring.clamp(x) + Spring.unit().energy(x)


class Integrator:
    def __init__(self, x, v, dt):
        self.x = x
        self.v = v
        self.dt = dt

    def accel(self, k):
        return -k * self.x

    def step(self, k):
        self.v = self.v + self.dt * self.accel(k)
        self.x = self.x + self.dt * self.v


def integrate_object(k, x0):
    it = Integrator(x0, 0.0, 0.05)
    for _ in range(40):
        it.step(k)
    return it.x


# --- integrators and helpers taking functions and containers -----------------------------------

def decay_rhs(y, k):
    return -k * y


def rk4_step(rhs, y, dt, k):
    k1 = rhs(y, k)
    k2 = rhs(y + 0.5 * dt * k1, k)
    k3 = rhs(y + 0.5 * dt * k2, k)
    k4 = rhs(y + dt * k3, k)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rk4_solve(y0, k):
    y = y0
    for _ in range(10):
        y = rk4_step(decay_rhs, y, 0.1, k)
    return np.sum(y)


def pair_energy(q):
    x, y = q
    return x * y + x ** 2


def tuple_to_helper(x, y):
    return pair_energy((x, y)) + pair_energy((y, 2.0))


def predict(params, X):
    return np.tanh(X @ params["w"] + params["b"])


def dict_to_helper(w, b, X):
    return np.mean(predict({"w": w, "b": b}, X) ** 2)


def scaled(x, *, scale=2.0, shift=0.0):
    return scale * x + shift


def keyword_only_and_partial(x):
    f = functools.partial(scaled, scale=3.0)
    return np.sum(f(x) * scaled(x, shift=1.0))


def grid_integral(L, a):
    n = 51
    xs = np.linspace(0.0, L, n)
    dx = L / (n - 1)
    f = np.exp(-a * xs ** 2)
    return dx * (np.sum(f) - 0.5 * (f[0] + f[-1]))


def filled_start(x, c):
    u = np.full(x.shape, c)
    v = np.full_like(x, 2.0 * c)
    return np.sum(u * x + v)


def arange_grid(h):
    t = np.arange(0.0, 1.0, 0.125) * h
    return np.sum(np.sin(t))


class Linear:
    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return self.w * x

    def loss(self, x, y):
        return np.sum((self.predict(x) - y) ** 2)


class Ridge(Linear):
    """A subclass whose __init__ and loss call the base class's through super()."""

    def __init__(self, w, alpha):
        super().__init__(w)
        self.alpha = alpha

    def loss(self, x, y):
        return super().loss(x, y) + self.alpha * np.sum(self.w ** 2)


class Shifted(Ridge):
    def __init__(self, w, alpha, shift):
        super().__init__(w * shift, alpha)
        self.shift = shift

    def predict(self, x):
        return super().predict(x) + self.shift

    @property
    def size(self):
        return np.sum(self.w ** 2)


def inherited_models(p, x, y):
    ridge = Ridge(p[0], p[1])
    shifted = Shifted(p[0], p[1], p[2])
    return ridge.loss(x, y) + shifted.loss(x, y) + shifted.size


class Chain:
    """Methods calling methods on each other's results."""

    def __init__(self, k):
        self.k = k

    def square(self, x):
        return self.k * x * x

    def damped(self, x):
        return np.tanh(x) / self.k

    def both(self, x):
        return self.damped(self.square(x)) + self.square(self.damped(x))


def chained_methods(k, x):
    c = Chain(k)
    total = np.sum(c.both(x)) + np.sum(c.square(c.damped(x) + 1.0))
    for word in "spring mass damper".split():  # a loop over a method call's result
        total = total + len(word) * np.sum(c.damped(x))
    for r in rates_of(x):  # over a function's result
        total = total + r * k
    return total


def rates_of(x):
    return [1.0 + 0.5 * v * v for v in x]


def spring_chain(ks, x):
    """A list of objects built by a comprehension and by append, each one's method called."""
    springs = [Spring(k, rest) for k, rest in zip(ks, [0.5, 1.0, 1.5])]
    more = []
    for i in range(2):
        more.append(Spring(ks[i] * ks[i + 1]))
    total = springs[0].k * springs[-1].energy(x)
    for s in springs:
        total = total + s.energy(x) + s.stiffness
    for i, s in enumerate(more):
        total = total + s.energy(x * (i + 1))
    return total


CASES = {
    "chained_methods": (chained_methods, (1.3, _rng.uniform(-1, 1, 3)), (0, 1)),
    "spring_chain": (spring_chain, (_rng.uniform(0.5, 1.5, 3), 0.8), (0, 1)),
    "inherited_models": (inherited_models, (_rng.uniform(0.5, 1.5, 3), _rng.normal(size=4),
                                            _rng.normal(size=4)), (0, 1)),
    "rosenbrock_checked": (rosenbrock_checked, (_rng.uniform(-1, 1, 5),), (0,)),
    "log_likelihood": (log_likelihood, (0.3, 1.7, _rng.normal(size=8)), (0, 1)),
    "huber_total": (huber_total, (np.array([0.2, -0.9, 1.7, -0.1]),), (0,)),
    "piecewise_low": (piecewise, (-1.7,), (0,)),
    "piecewise_mid": (piecewise, (0.3,), (0,)),
    "piecewise_high": (piecewise, (1.4,), (0,)),
    "first_crossing": (first_crossing, (0.2, 0.01), (0, 1)),
    "logged_energy": (logged_energy, (_rng.uniform(-1, 1, 4), 2.0), (0, 1)),
    "quiet_log": (quiet_log, (_rng.uniform(-1, 1, 4),), (0,)),
    "heat_explicit": (heat_explicit, (np.sin(np.linspace(0.0, 3.0, 12)), 0.2), (0, 1)),
    "wave_leapfrog": (wave_leapfrog, (np.sin(np.linspace(0.0, 3.0, 10)), 0.3), (0, 1)),
    "oscillator_dict_state": (oscillator_dict_state, (2.0, 1.0), (0, 1)),
    "leapfrog_helper": (leapfrog_helper, (2.0, 0.8), (0, 1)),
    "trajectory_end": (trajectory_end, (_rng.uniform(-1, 1, 3),), (0,)),
    "material_energy": (material_energy, (Material(2.0, 0.5), _rng.uniform(-1, 1, 3)), (0, 1)),
    "named_params": (named_params, (Params(1.5, _rng.uniform(-1, 1, 3)), 0.7), (0, 1)),
    "frozen_replace": (frozen_replace, (Config(1.5, 0.2), _rng.uniform(-1, 1, 3)), (0, 1)),
    "nested_model": (nested_model, (Model(Layer(_rng.uniform(-1, 1, (3, 4)),
                                                _rng.uniform(-1, 1, 4)),
                                          Layer(_rng.uniform(-1, 1, (4, 2)),
                                                _rng.uniform(-1, 1, 2)),
                                          {"decay": 0.1, "label": "m"}),
                                    _rng.uniform(-1, 1, (5, 3))), (0,)),
    "spring_energy": (spring_energy, (2.0, 1.7), (0, 1)),
    "integrate_object": (integrate_object, (3.0, 1.0), (0, 1)),
    "rk4_solve": (rk4_solve, (_rng.uniform(0.5, 1.5, 3), 0.7), (0, 1)),
    "tuple_to_helper": (tuple_to_helper, (0.7, -1.2), (0, 1)),
    "dict_to_helper": (dict_to_helper, (_rng.uniform(-1, 1, 3), 0.2,
                                        _rng.uniform(-1, 1, (4, 3))), (0, 1)),
    "keyword_only_and_partial": (keyword_only_and_partial, (_rng.uniform(-1, 1, 3),), (0,)),
    "grid_integral": (grid_integral, (2.0, 0.8), (0, 1)),
    "filled_start": (filled_start, (_rng.uniform(-1, 1, 3), 0.6), (0, 1)),
    "arange_grid": (arange_grid, (1.3,), (0,)),
}
