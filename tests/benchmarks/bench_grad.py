"""Side-by-side gradient benchmark: this compiler vs. hand-written NumPy, autograd and JAX.

Run from the repository root::

    python -m tests.benchmarks.bench_grad            # full run (under ~3 minutes)
    python -m tests.benchmarks.bench_grad --quick    # fewer repeats, for a smoke test (< ~40 s)

Not part of the test suite (pytest ignores tests/benchmarks). Peers that do not import
(autograd, jax) are skipped. Every gradient is checked against the hand-written adjoint (and
the hand-written adjoint against central finite differences) *before* anything is timed, so a
wrong gradient can never be measured silently. Sections 5-7 (loops, in-place updates, while) have
no hand-written adjoint: there our gradient is checked against central finite differences or the
analytic derivative, and every peer against ours.

Sections:
  1. f1(x) = sum(sin(x) * exp(-x**2)) over 10**6 float64 elements.
  2. A two-layer tanh MLP loss, gradient w.r.t. (W1, b1, W2, b2).
  3. Compile time of the first call for a 20-statement straight-line function (target < 50 ms).
  4. Per-call overhead of the cached ``grad(h)`` wrapper vs. the generated function (target <~1 us).
  5. RK4 damped oscillator, 1000 steps in plain Python floats; gradient w.r.t. (k, c, x0).
  6. Explicit 1-D heat equation, 200 cells x 500 steps, in-place slice update and concatenate
     formulations; gradient w.r.t. (u0, r), plus the bytes our generated code puts on its tape.
  7. Newton iteration in a ``while`` loop to tolerance; gradient of the root w.r.t. (a, b).
  8. Hessian-vector product of the MLP loss (forward over reverse; target <= 5x the primal) and
     a forward-mode JVP of it, beside autograd's and JAX's.

Timing: warm-up calls first, then ``timeit`` repeats (gc disabled during a repeat, as timeit
does); repeats of all rows of a section are interleaved round-robin; each row reports the best and
the median per-call time; ratios use the best-of (robust to load from elsewhere).
A row whose single call takes longer than ``Config.slow_call`` (un-jitted JAX or autograd on
long loops) is not warmed up again (its correctness check was its warm-up call) and gets only as
many repeats as fit in ``Config.slow_row_budget`` seconds; the tables show the repeat count.
The environment (including OPENBLAS_CORETYPE, if set) is left exactly as it is and printed.
"""

from __future__ import annotations

import argparse
import ast
import gc
import inspect
import math
import os
import platform
import re
import statistics
import sys
import textwrap
import time
import timeit

import numpy as np

from transpiler import cache, check_grad, grad

# --------------------------------------------------------------------------------------------
# Optional peers
# --------------------------------------------------------------------------------------------

try:
    import autograd
    import autograd.numpy as anp
    from autograd import grad as ag_grad
except Exception as exc:  # noqa: BLE001  (any import failure means: skip the peer)
    autograd = anp = ag_grad = None
    _AUTOGRAD_ERROR = f"{type(exc).__name__}: {exc}"
else:
    _AUTOGRAD_ERROR = None

try:
    import jax

    jax.config.update("jax_enable_x64", True)  # compare like with like: float64 everywhere
    import jax.numpy as jnp
except Exception as exc:  # noqa: BLE001
    jax = jnp = None
    _JAX_ERROR = f"{type(exc).__name__}: {exc}"
else:
    _JAX_ERROR = None


# --------------------------------------------------------------------------------------------
# The functions (one body, written once per array library)
# --------------------------------------------------------------------------------------------

def f1(x):
    return np.sum(np.sin(x) * np.exp(-x ** 2))


def f1_hand(x):
    """Hand-written adjoint of f1: d/dx = exp(-x^2) * (cos x - 2 x sin x)."""
    e = np.exp(-x * x)
    return e * (np.cos(x) - 2.0 * x * np.sin(x))


def mlp_loss(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp_loss_hand(W1, b1, W2, b2, X, y):
    """Hand-written adjoint of mlp_loss w.r.t. (W1, b1, W2, b2)."""
    h = np.tanh(X @ W1 + b1)
    r = h @ W2 + b2 - y
    dout = r * (2.0 / r.size)
    dW2 = h.T @ dout
    db2 = dout.sum(axis=0)
    dz = (dout @ W2.T) * (1.0 - h * h)
    dW1 = X.T @ dz
    db1 = dz.sum(axis=0)
    return dW1, db1, dW2, db2


if anp is not None:
    def f1_autograd(x):
        return anp.sum(anp.sin(x) * anp.exp(-x ** 2))

    def mlp_loss_autograd(W1, b1, W2, b2, X, y):
        h = anp.tanh(X @ W1 + b1)
        out = h @ W2 + b2
        return anp.mean((out - y) ** 2)

    def _mlp_autograd_packed(params, X, y):
        return mlp_loss_autograd(*params, X, y)


if jnp is not None:
    def f1_jax(x):
        return jnp.sum(jnp.sin(x) * jnp.exp(-x ** 2))

    def mlp_loss_jax(W1, b1, W2, b2, X, y):
        h = jnp.tanh(X @ W1 + b1)
        out = h @ W2 + b2
        return jnp.mean((out - y) ** 2)


def straight20(x, y, W):
    """20 straight-line statements (the compile-time benchmark)."""
    a = np.sin(x) * np.cos(y) + x / (1.0 + y ** 2)
    b = np.exp(-a ** 2) - np.log1p(x * x)
    c = np.tanh(W @ b) + np.sqrt(1.0 + y * y)
    d = np.arctan2(c, 1.0 + np.abs(x)) * np.hypot(x, y)
    e = np.maximum(d, -1.0) + np.minimum(c, 1.0)
    f = np.where(x > 0.0, e, -e)
    g = np.expm1(0.1 * f) + np.log(1.0 + np.square(y))
    h = np.reciprocal(2.0 + np.cosh(g)) * np.sinh(0.5 * a)
    k = np.arctan(h) + np.tan(0.1 * x)
    m = np.reshape(k, (-1, 1))
    p = np.dot(W.T, m)
    q = np.transpose(p) @ m
    r = np.matmul(W, k) - y
    s = np.sum(q) + np.mean(r * r)
    t = np.sum(np.tanh(W) * W.T) / x.size
    u = s - t + np.sum(x ** 3) * 0.01
    v = u * np.cos(np.mean(x)) + np.sum(np.sinh(0.1 * y)) / 7.0
    w = v - np.mean(np.cosh(0.1 * x) * np.tan(0.1 * y))
    z = w + np.sum(np.minimum(np.abs(x), 0.5) * np.maximum(y, 0.0))
    return z * 1.5 - np.sum(np.log(2.0 + np.tanh(x)))


def h_trivial(x):
    return x * 2.0


def rk4(k, c, x0):
    """Damped oscillator x'' = -k x - c x', classical RK4, 1000 steps, in plain Python floats."""
    x = x0
    v = 0.0
    dt = 0.01
    for step in range(1000):
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


HEAT_STEPS = 500  # the loop count written in heat / heat_concat (the tape probe divides by it)


def heat(u0, r):
    """Explicit 1-D heat equation, fixed ends, in-place slice update."""
    u = u0.copy()
    for step in range(500):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_hand(u0, r):
    """The hand-written adjoint of ``heat``: each step's Laplacian kept (d/dr needs it), then
    one sweep back, in place."""
    u = u0.copy()
    laplacians = []
    for step in range(HEAT_STEPS):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        laplacians.append(lap)
        u[1:-1] = u[1:-1] + r * lap
    bu, br = 2.0 * u, 0.0
    for lap in reversed(laplacians):
        g = bu[1:-1].copy()
        br += np.dot(g, lap)
        rg = r * g
        bu[1:-1] -= 2.0 * rg
        bu[2:] += rg
        bu[:-2] += rg
    return bu, br


def heat_concat(u0, r):
    """The same scheme, each step building a new array with np.concatenate."""
    u = u0
    for step in range(500):
        u = np.concatenate((u[:1], u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]), u[-1:]))
    return np.sum(u * u)


def newton_cubic(a, b):
    """The real root of x**3 + a*x - b (a > 0) by Newton's method from x = 1, to |f(x)| <= 1e-12."""
    x = 1.0
    fx = x * x * x + a * x - b
    while abs(fx) > 1e-12:
        x = x - fx / (3.0 * x * x + a)
        fx = x * x * x + a * x - b
    return x


def newton_cubic_analytic(a, b):
    """d root / d(a, b) by the implicit function theorem: f(x, a, b) = 0, dx = -f_p / f_x."""
    x = newton_cubic(a, b)
    fx = 3.0 * x * x + a
    return -x / fx, 1.0 / fx


if anp is not None:
    def heat_autograd(u0, r):
        u = u0
        for step in range(500):
            u = anp.concatenate((u[:1], u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]),
                                 u[-1:]))
        return anp.sum(u * u)


if jnp is not None:
    def heat_jax(u0, r):
        u = u0
        for step in range(500):
            u = u.at[1:-1].set(u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        return jnp.sum(u * u)

    # Rewritten with lax.fori_loop (a rolled loop), which is how jit is usable on these: jit of
    # the Python loops above unrolls 500/1000 steps into one huge XLA program.
    def rk4_jax_fori(k, c, x0):
        dt = 0.01

        def step(i, state):
            x, v = state
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
            return (x + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4),
                    v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4))

        x, v = jax.lax.fori_loop(0, 1000, step, (x0, jnp.zeros_like(x0)))
        return x * x + v * v

    def heat_jax_fori(u0, r):
        def step(i, u):
            return u.at[1:-1].set(u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]))

        u = jax.lax.fori_loop(0, 500, step, u0)
        return jnp.sum(u * u)


# --------------------------------------------------------------------------------------------
# Timing and checking helpers
# --------------------------------------------------------------------------------------------

class Config:
    repeat = 9           # timeit repeats per row
    target = 0.15        # seconds per repeat (the number of calls per repeat is chosen to fit)
    warmup = 2           # warm-up calls before calibration
    compiles = 10        # fresh compiles for section 3
    overhead_calls = 200_000
    slow_call = 0.5      # a row whose single call takes longer than this (s) is a "slow row":
    slow_row_budget = 12.0  # ... it gets as many repeats as fit in this many seconds (>= 1)
    quick = False


def measure_group(candidates, cfg: Config, counts: dict | None = None) -> dict:
    """{name: (median, best)} seconds per call for each ``(name, fn)``, measured side by side.

    Each callable is warmed up, then the number of calls per repeat is chosen so that one
    repeat takes about ``cfg.target`` seconds. The repeats are interleaved round-robin (with a
    rotating order), so that load from elsewhere on the machine hits every row alike and the
    ratios stay meaningful even when the absolute times wobble.

    A row whose first call here takes longer than ``cfg.slow_call`` is not warmed up further
    (every caller runs each row once for its correctness check before timing it, so this first
    call is already warm) and that call counts as its first repeat, of one call; it then gets
    as many further repeats (one call each) as fit in ``cfg.slow_row_budget`` seconds, spread
    over the rounds. ``counts``, if given, receives {name: number of repeats}.
    """
    timers, numbers, runs = [], [], []  # runs: timed repeats still to do for each row
    per_call = [[] for _ in candidates]
    for i, (_, fn) in enumerate(candidates):
        timer = timeit.Timer(fn)
        timers.append(timer)
        first = timer.timeit(number=1)
        if first > cfg.slow_call:  # slow row: this (warm) call is its first repeat
            per_call[i].append(first)
            numbers.append(1)
            runs.append(max(1, min(cfg.repeat, int(cfg.slow_row_budget / first))) - 1)
            continue
        for _ in range(cfg.warmup - 1):
            fn()
        t0 = time.perf_counter()
        fn()
        single = max(time.perf_counter() - t0, 1e-7)
        numbers.append(max(1, int(cfg.target / single)))
        runs.append(cfg.repeat)
    k, rounds = len(candidates), cfg.repeat
    for r in range(rounds):
        for j in range(k):
            i = (j + r) % k
            # a row with fewer runs than rounds gets them spread evenly over the rounds
            if (r + 1) * runs[i] // rounds > r * runs[i] // rounds:
                per_call[i].append(timers[i].timeit(number=numbers[i]) / numbers[i])
    if counts is not None:
        counts.update({name: len(ts) for (name, _), ts in zip(candidates, per_call)})
    return {name: (statistics.median(ts), min(ts))
            for (name, _), ts in zip(candidates, per_call)}


def _as_tuple(g):
    return tuple(g) if isinstance(g, (tuple, list)) else (g,)


def assert_same_grad(label, got, expected, rtol=1e-9, atol=1e-12, ref="hand-written"):
    got, expected = _as_tuple(got), _as_tuple(expected)
    assert len(got) == len(expected), f"{label}: {len(got)} gradients, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        assert g.shape == np.shape(e), f"{label}[{i}]: shape {g.shape} != {np.shape(e)}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol,
                                   err_msg=f"{label}: gradient {i} disagrees with {ref}")


def assert_fd(label, f, args, wrt, grads, seed=1, rtol=1e-6):
    """Central finite difference along one random direction vs. <grad, direction>."""
    rng = np.random.default_rng(seed)
    grads = _as_tuple(grads)
    dirs = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    eps = 1e-6

    def shifted(sign):
        a = list(args)
        for i, v in zip(wrt, dirs):
            a[i] = args[i] + sign * eps * v
        return f(*a)

    fd = (shifted(+1) - shifted(-1)) / (2 * eps)
    an = sum(float(np.sum(g * v)) for g, v in zip(grads, dirs))
    assert math.isclose(fd, an, rel_tol=rtol, abs_tol=1e-8), \
        f"{label}: finite difference {fd!r} != analytic {an!r}"


def _blocker():
    if jax is None:
        return None
    if hasattr(jax, "block_until_ready"):
        return jax.block_until_ready
    return lambda t: jax.tree_util.tree_map(lambda a: a.block_until_ready(), t)


PRIMAL, OURS, HAND = "primal (NumPy)", "ours: grad", "hand-written adjoint"


def print_table(title, names, results, skipped, ours_name=OURS, hand_name=HAND):
    """One section's table; ``results`` from measure_group, ``skipped``: [(name, reason)]."""
    base, hand = results[PRIMAL][1], results[hand_name][1]
    print_header(title, f"  {'':26s} {'best ms':>10s} {'median ms':>10s} {'best/primal':>12s} "
                        f"{'best/hand':>10s}")
    for name in names:
        med, best = results[name]
        print(f"  {name:26s} {best * 1e3:10.3f} {med * 1e3:10.3f} {best / base:12.2f} "
              f"{best / hand:10.2f}")
    for name, reason in skipped:
        print(f"  {name:26s} {'skipped':>10s}  ({reason})")
    ours = results[ours_name][1]
    print(f"  => ours / hand-written = {ours / hand:.2f}x  (best-of; medians: "
          f"{results[ours_name][0] / results[hand_name][0]:.2f}x);  ours / primal = "
          f"{ours / base:.2f}x, hand-written / primal = {hand / base:.2f}x")


def _run_section(title, candidates, skipped, cfg, ours_name=OURS, hand_name=HAND):
    results = measure_group(candidates, cfg)
    print_table(title, [name for name, _ in candidates], results, skipped, ours_name, hand_name)
    return results


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------

def bench_f1(cfg: Config) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 3.0, size=10 ** 6)
    ours = grad(f1)
    g_ours = ours(x)  # compiles
    g_hand = f1_hand(x)
    assert_fd("f1 hand-written", f1, (x,), (0,), g_hand)
    assert_same_grad("f1 ours", g_ours, g_hand)

    cands = [(PRIMAL, lambda: f1(x)), (OURS, lambda: ours(x)), (HAND, lambda: f1_hand(x))]
    skipped = []
    if ag_grad is not None:
        ag = ag_grad(f1_autograd)
        assert_same_grad("f1 autograd", ag(x), g_hand)
        cands.append(("autograd.grad", lambda: ag(x)))
    else:
        skipped.append(("autograd.grad", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        xj = jax.device_put(x)
        jg = jax.grad(f1_jax)
        jgj = jax.jit(jax.grad(f1_jax))
        assert_same_grad("f1 jax.grad", np.asarray(jg(xj)), g_hand)
        assert_same_grad("f1 jax.jit(jax.grad)", np.asarray(jgj(xj)), g_hand)
        cands.append(("jax.grad (un-jitted)", lambda: block(jg(xj))))
        cands.append(("jax.jit(jax.grad)", lambda: block(jgj(xj))))
    else:
        skipped.append(("jax.grad", f"not importable: {_JAX_ERROR}"))

    _run_section("1. f1(x) = np.sum(np.sin(x) * np.exp(-x ** 2)), x: 10^6 float64",
                 cands, skipped, cfg)


def bench_mlp(cfg: Config) -> None:
    rng = np.random.default_rng(0)
    n, d_in, d_hidden, d_out = 256, 32, 64, 1
    X = rng.standard_normal((n, d_in))
    y = rng.standard_normal((n, d_out))
    W1 = rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)
    b1 = 0.1 * rng.standard_normal(d_hidden)
    W2 = rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)
    b2 = 0.1 * rng.standard_normal(d_out)
    args = (W1, b1, W2, b2, X, y)
    wrt = (0, 1, 2, 3)

    ours = grad(mlp_loss, wrt=wrt)
    g_ours = ours(*args)
    g_hand = mlp_loss_hand(*args)
    assert_fd("mlp hand-written", mlp_loss, args, wrt, g_hand)
    assert_same_grad("mlp ours", g_ours, g_hand)

    cands = [(PRIMAL, lambda: mlp_loss(*args)), (OURS, lambda: ours(*args)),
             (HAND, lambda: mlp_loss_hand(*args))]
    skipped = []
    if ag_grad is not None:
        ag = ag_grad(_mlp_autograd_packed)
        params = (W1, b1, W2, b2)
        assert_same_grad("mlp autograd", ag(params, X, y), g_hand)
        cands.append(("autograd.grad", lambda: ag(params, X, y)))
    else:
        skipped.append(("autograd.grad", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        jargs = tuple(jax.device_put(a) for a in args)
        jg = jax.grad(mlp_loss_jax, argnums=wrt)
        jgj = jax.jit(jax.grad(mlp_loss_jax, argnums=wrt))
        assert_same_grad("mlp jax.grad", [np.asarray(g) for g in jg(*jargs)], g_hand)
        assert_same_grad("mlp jax.jit(jax.grad)", [np.asarray(g) for g in jgj(*jargs)], g_hand)
        cands.append(("jax.grad (un-jitted)", lambda: block(jg(*jargs))))
        cands.append(("jax.jit(jax.grad)", lambda: block(jgj(*jargs))))
    else:
        skipped.append(("jax.grad", f"not importable: {_JAX_ERROR}"))

    _run_section(f"2. two-layer tanh MLP loss, X {n}x{d_in}, hidden {d_hidden}, out {d_out}; "
                 f"grad w.r.t. (W1, b1, W2, b2)", cands, skipped, cfg)


def mlp_hvp_hand(W1, b1, W2, b2, X, y, V):
    """Hand-written Hessian-vector product of mlp_loss w.r.t. W1 along V."""
    h = np.tanh(X @ W1 + b1)
    r = h @ W2 + b2 - y
    dout = r * (2.0 / r.size)
    s = 1.0 - h * h
    dh = s * (X @ V)
    ddout = (dh @ W2) * (2.0 / r.size)
    return X.T @ ((ddout @ W2.T) * s - (dout @ W2.T) * (2.0 * h * dh))


def bench_hvp(cfg: Config) -> None:
    """Forward mode and forward-over-reverse on the MLP loss of section 2, w.r.t. W1."""
    from transpiler import forward, hvp

    rng = np.random.default_rng(0)
    n, d_in, d_hidden, d_out = 256, 32, 64, 1
    X = rng.standard_normal((n, d_in))
    y = rng.standard_normal((n, d_out))
    W1 = rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)
    b1 = 0.1 * rng.standard_normal(d_hidden)
    W2 = rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)
    b2 = 0.1 * rng.standard_normal(d_out)
    V = rng.standard_normal(W1.shape)
    args = (W1, b1, W2, b2, X, y)

    ours_hvp = hvp(mlp_loss, wrt=0)
    expected = mlp_hvp_hand(*args, V)
    gradient = grad(mlp_loss, wrt=0)
    h = 1e-6
    numeric = (gradient(W1 + h * V, *args[1:]) - gradient(W1 - h * V, *args[1:])) / (2 * h)
    assert np.allclose(expected, numeric, rtol=1e-5, atol=1e-8), "hand-written hvp is wrong"
    assert_same_grad("mlp hvp ours", ours_hvp(*args, V), expected)
    ours_jvp = forward(mlp_loss, wrt=0)
    tangent = ours_jvp(*args, dW1=V)[1]
    assert np.isclose(tangent, np.sum(gradient(*args) * V), rtol=1e-10), "jvp is wrong"

    cands = [(PRIMAL, lambda: mlp_loss(*args)), ("ours: hvp", lambda: ours_hvp(*args, V)),
             ("hand-written hvp", lambda: mlp_hvp_hand(*args, V)),
             ("ours: forward (jvp)", lambda: ours_jvp(*args, dW1=V)),
             (OURS, lambda: gradient(*args))]
    skipped = []
    if autograd is not None:
        from autograd import hessian_vector_product

        ag = hessian_vector_product(mlp_loss_autograd, argnum=0)
        assert_same_grad("mlp hvp autograd", ag(*args, V), expected)
        cands.append(("autograd hvp", lambda: ag(*args, V)))
    else:
        skipped.append(("autograd hvp", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        jargs = tuple(jax.device_put(a) for a in args)

        def jhvp(*a):
            return jax.jvp(lambda w: jax.grad(mlp_loss_jax)(w, *a[1:-1]), (a[0],), (a[-1],))[1]

        jhvp_jit = jax.jit(jhvp)
        assert_same_grad("mlp hvp jax", np.asarray(jhvp(*jargs, V)), expected)
        cands.append(("jax jvp(grad) (un-jitted)", lambda: block(jhvp(*jargs, V))))
        cands.append(("jax.jit(jvp(grad))", lambda: block(jhvp_jit(*jargs, V))))
    else:
        skipped.append(("jax hvp", f"not importable: {_JAX_ERROR}"))
    _run_section("8. Hessian-vector product of the MLP loss of section 2 w.r.t. W1 "
                 "(forward over reverse), and a forward-mode JVP", cands, skipped, cfg,
                 "ours: hvp", "hand-written hvp")


def bench_compile(cfg: Config) -> None:
    rng = np.random.default_rng(0)
    n = 8  # tiny arrays: the first call is (almost) all compile time
    x = rng.uniform(-1.0, 1.0, n)
    y = rng.uniform(-1.0, 1.0, n)
    W = 0.3 * rng.uniform(-1.0, 1.0, (n, n))
    wrt = (0, 1, 2)

    def first_call() -> float:
        cache.clear()
        gc.collect()
        g = grad(straight20, wrt=wrt)
        t0 = time.perf_counter()
        g(x, y, W)
        return time.perf_counter() - t0

    cold = first_call()  # first compile in this process (lazy imports, linecache, ...)
    times = [first_call() for _ in range(cfg.compiles)]
    # sanity: the compiled gradient is right (finite differences, the project's own checker)
    cache.clear()
    check_grad(straight20, x, y, W, wrt=wrt)
    g = grad(straight20, wrt=wrt)
    g(x, y, W)
    run_med, _ = measure_group([("run", lambda: g(x, y, W))], cfg)["run"]
    n_stmts = _count_statements(straight20)
    med = statistics.median(times)
    print(f"\n3. compile time of the first call, {n_stmts}-statement straight-line function "
          f"(wrt 3 arrays, n={n}), {cfg.compiles} fresh compiles (cache.clear() + new grad)")
    print(f"  median {med * 1e3:.2f} ms   min {min(times) * 1e3:.2f} ms   "
          f"max {max(times) * 1e3:.2f} ms   (first in process: {cold * 1e3:.2f} ms)")
    print(f"  (included in each: one run of the gradient, cached: {run_med * 1e3:.3f} ms)")
    verdict = "OK" if med < 0.050 else "ABOVE TARGET"
    print(f"  target < 50 ms: {verdict} ({med / 0.050:.2f}x the target)")


def _count_statements(fn) -> int:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    body = tree.body[0].body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return len(body) - has_doc


def bench_overhead(cfg: Config) -> None:
    g = grad(h_trivial)
    g(1.0)
    raw = g.compiled_for(1.0).function  # the scalar variant that grad(h)(1.0) runs
    assert g(1.0) == raw(1.0) == 2.0
    npf = np.float64(1.0)  # a NumPy scalar takes the wrapper's dtype-check path
    assert g(npf) == raw(npf) == 2.0
    number = cfg.overhead_calls
    # timeit statements, not lambdas, so no extra Python call layer is measured
    stmts = [("h(1.0)  (plain function)", "h(1.0)"),
             ("raw(1.0)  (generated fn)", "raw(1.0)"),
             ("grad(h)(1.0)  (wrapper)", "g(1.0)"),
             ("raw(np.float64(1.0))", "raw(a)"),
             ("grad(h)(np.float64(1.0))", "g(a)")]
    ns = {"h": h_trivial, "raw": raw, "g": g, "a": npf}
    timers = [timeit.Timer(stmt, globals=ns) for _, stmt in stmts]
    for t in timers:
        t.timeit(number=max(1, number // 10))  # warm-up
    runs = [[] for _ in stmts]
    for r in range(cfg.repeat):  # interleaved, rotating order
        for j in range(len(stmts)):
            i = (j + r) % len(stmts)
            runs[i].append(timers[i].timeit(number=number) / number * 1e6)
    stats = [(min(us), statistics.median(us)) for us in runs]

    print(f"\n4. per-call overhead of the cached path, h(x) = x * 2.0 "
          f"({number} calls x {cfg.repeat} repeats, interleaved)")
    print(f"  {'':26s} {'best us':>10s} {'median us':>10s}")
    for (name, _), (best, med) in zip(stmts, stats):
        print(f"  {name:26s} {best:10.3f} {med:10.3f}")
    d_best, d_med = stats[2][0] - stats[1][0], stats[2][1] - stats[1][1]
    a_best = stats[4][0] - stats[3][0]
    print(f"  => wrapper overhead (grad(h)(1.0) - raw(1.0)): {d_best:.3f} us best-of, "
          f"{d_med:.3f} us median;  with a np.float64 argument: {a_best:.3f} us best-of")
    verdict = "OK" if d_best <= 1.0 else "ABOVE TARGET"
    print(f"  target <~ 1 us: {verdict}")



# --------------------------------------------------------------------------------------------
# Sections 5-7: loops, in-place updates, while (no hand-written adjoint: checked against finite
# differences / the analytic derivative, and every peer against ours)
# --------------------------------------------------------------------------------------------

JAX_FORI = "jax.jit(grad), lax.fori_loop *"
FORI_NOTE = ("* JAX peer rewritten with jax.lax.fori_loop (a rolled loop, not the same source): "
             "what jit needs here")


def _ratio(x: float) -> str:
    return f"{x:.0f}x" if x >= 100 else f"{x:.2f}x"


def print_header(title: str, header: str) -> None:
    """A table's title, its column header and a rule under it."""
    print(f"\n{title}")
    print(header)
    print("  " + "-" * (len(header) - 2))


def _fmt_time(seconds: float) -> str:
    """A time with its own unit, so rows from microseconds to seconds share one column."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def print_peer_table(title, results, counts, skipped, primal, ours_rows, notes=()):
    """A section table with best/primal and best/ours columns (relative to ``primal`` and to
    the first ours row) and one summary line per ``(ours_row, its_primal_row)`` in
    ``ours_rows``; peers are the rows not named there."""
    names = list(results)
    base = results[primal][1]
    ref_ours = results[ours_rows[0][0]][1]
    print_header(title, f"  {'':34s} {'best':>11s} {'median':>11s} {'best/primal':>12s} "
                        f"{'best/ours':>10s} {'repeats':>8s}")
    for name in names:
        med, best = results[name]
        print(f"  {name:34s} {_fmt_time(best)} {_fmt_time(med)} {best / base:12.2f} "
              f"{best / ref_ours:10.2f} {counts[name]:8d}")
    for name, reason in skipped:
        print(f"  {name:34s} {'skipped':>10s}  ({reason})")
    for note in notes:
        print(f"  {note}")
    own = {o for o, _ in ours_rows} | {p for _, p in ours_rows}
    peers = [n for n in names if n not in own]
    for ours_name, primal_name in ours_rows:
        (om, ob), (pm, pb) = results[ours_name], results[primal_name]
        versus = ", ".join(f"{p} {_ratio(results[p][1] / ob)}" for p in peers)
        print(f"  => {ours_name}: ours / primal = {ob / pb:.2f}x (medians: {om / pm:.2f}x)"
              + (f";  peer / ours (best-of, > 1: ours faster): {versus}" if versus else ""))


def _timed(fn):
    """(fn(), seconds) for one call."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_rk4(cfg: Config) -> None:
    args, wrt = (2.0, 0.3, 1.0), (0, 1, 2)  # k, c, x0: Python floats
    ours = grad(rk4, wrt=wrt)
    g_ours = ours(*args)  # compiles (the scalar variant)
    assert all(type(g) is float for g in g_ours), "rk4: a float argument gets a float gradient"
    assert_fd("rk4 ours", rk4, args, wrt, g_ours)

    primal = "primal (Python floats)"
    cands = [(primal, lambda: rk4(*args)), (OURS, lambda: ours(*args))]
    skipped, notes = [], []
    if ag_grad is not None:
        ag = ag_grad(rk4, argnum=wrt)
        assert_same_grad("rk4 autograd", [float(g) for g in ag(*args)], g_ours, ref="ours")
        cands.append(("autograd.grad", lambda: ag(*args)))
    else:
        skipped.append(("autograd.grad", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        if cfg.quick:
            skipped.append(("jax.grad (un-jitted)", "not run with --quick: ~35,000 scalar "
                                                   "primitives dispatched per call, seconds each"))
        else:
            jg = jax.grad(rk4, argnums=wrt)
            res, secs = _timed(lambda: block(jg(*args)))
            assert_same_grad("rk4 jax.grad", [float(g) for g in res], g_ours, ref="ours")
            cands.append(("jax.grad (un-jitted)", lambda: block(jg(*args))))
        skipped.append(("jax.jit(jax.grad)", "not run: jit compile of an unrolled 1000-step loop "
                                             "too slow (when tried: tracing ~14 s, lowering "
                                             "~2.5 s, XLA compile > 280 s)"))
        jf = jax.jit(jax.grad(rk4_jax_fori, argnums=wrt))
        res, secs = _timed(lambda: block(jf(*args)))
        assert_same_grad("rk4 jax.jit(grad) fori_loop", [float(g) for g in res], g_ours,
                         ref="ours")
        cands.append((JAX_FORI, lambda: block(jf(*args))))
        notes.append(f"{FORI_NOTE}; its first call (trace + compile) took {secs:.2f} s")
    else:
        skipped.append(("jax.grad", f"not importable: {_JAX_ERROR}"))

    counts = {}
    results = measure_group(cands, cfg, counts)
    print_peer_table("5. RK4 damped oscillator, 1000 steps in Python floats, loss x*x + v*v; "
                     "grad w.r.t. (k, c, x0)", results, counts, skipped, primal,
                     [(OURS, primal)], notes)


class _TapeRecorder(list):
    """A list that, for each item appended (a tuple or a single value), adds up the bytes it
    holds: ``nbytes`` of ndarrays owning their data, 0 for zero-strided stand-ins
    (``rt.shape_of``, i.e. ``np.broadcast_to`` views), 8 for a Python float or int; ndarray
    views with real strides (which keep a base alive) are tallied separately."""

    def __init__(self):
        super().__init__()
        self.pushes = self.owned_bytes = self.view_bytes = 0
        self.kinds: dict[str, int] = {}

    def append(self, item):
        self.pushes += 1
        for value in (item if isinstance(item, tuple) else (item,)):
            if isinstance(value, np.ndarray):
                if value.flags.owndata:
                    kind, self.owned_bytes = "array owning data", self.owned_bytes + value.nbytes
                elif all(st == 0 for st in value.strides):
                    kind = "zero-strided stand-in"
                else:
                    kind, self.view_bytes = "strided view", self.view_bytes + value.nbytes
            elif isinstance(value, np.generic):
                kind, self.owned_bytes = "NumPy scalar", self.owned_bytes + value.nbytes
            elif isinstance(value, (float, int)) and not isinstance(value, bool):
                kind, self.owned_bytes = "Python number", self.owned_bytes + 8
            else:
                kind = type(value).__name__
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        super().append(item)


def tape_probe(g, *args):
    """Run a copy of the generated source ``g`` runs for ``args`` whose tapes (each loop's
    ``_tape = []``) are _TapeRecorders; return (the recorder, the copy's result). ``g`` must
    already have run on these arguments."""
    compiled = g.compiled_for(*args)
    source, fn = compiled.source, compiled.function
    tapes = re.findall(r"^ *(_tape(?:_\d+)?) = \[\]$", source, re.M)
    if not tapes:  # nothing is taped
        return _TapeRecorder(), fn(*args)
    assert len(tapes) == 1, f"tape probe: expected one loop with a tape, found {tapes}"
    recorders = []

    def make():
        recorders.append(_TapeRecorder())
        return recorders[-1]

    ns = dict(fn.__globals__)
    ns.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    ns["_make_tape_recorder"] = make
    probed = re.sub(rf"^( *){tapes[0]} = \[\]$", rf"\1{tapes[0]} = _make_tape_recorder()",
                    source, flags=re.M)
    exec(compile(probed, f"<tape probe of {fn.__name__}>", "exec"), ns)
    out = ns[fn.__name__](*args)
    assert len(recorders) == 1
    return recorders[0], out


def bench_heat(cfg: Config) -> None:
    n, r = 200, 0.2
    u0 = np.sin(np.pi * np.linspace(0.0, 1.0, n))  # a sine bump, zero at the fixed ends
    u0_before = u0.copy()
    args, wrt = (u0, r), (0, 1)
    ours = grad(heat, wrt=wrt)
    g_ours = ours(*args)
    assert_fd("heat ours", heat, args, wrt, g_ours)
    ours_cat = grad(heat_concat, wrt=wrt)
    g_cat = ours_cat(*args)
    assert_fd("heat_concat ours", heat_concat, args, wrt, g_cat)
    assert_same_grad("heat_concat ours", g_cat, g_ours, ref="ours (slice update)")
    assert np.array_equal(u0, u0_before), "heat: the argument was modified"

    assert_same_grad("heat hand-written", heat_hand(*args), g_ours, ref="ours")
    p_slice, p_cat = "primal (NumPy, slice update)", "primal (NumPy, concatenate)"
    o_slice, o_cat = "ours: grad (slice update)", "ours: grad (concatenate)"
    h_slice = "hand-written adjoint (slice update)"
    cands = [(p_slice, lambda: heat(*args)), (p_cat, lambda: heat_concat(*args)),
             (o_slice, lambda: ours(*args)), (o_cat, lambda: ours_cat(*args)),
             (h_slice, lambda: heat_hand(*args))]
    skipped, notes = [], []
    if ag_grad is not None:
        ag = ag_grad(heat_autograd, argnum=wrt)
        assert_same_grad("heat autograd", ag(*args), g_ours, ref="ours")
        cands.append(("autograd.grad (concatenate)", lambda: ag(*args)))
    else:
        skipped.append(("autograd.grad", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        jargs = (jax.device_put(u0), r)
        jg = jax.grad(heat_jax, argnums=wrt)
        res, _ = _timed(lambda: block(jg(*jargs)))
        assert_same_grad("heat jax.grad", [np.asarray(g) for g in res], g_ours, ref="ours")
        cands.append(("jax.grad (un-jitted, .at[].set)", lambda: block(jg(*jargs))))
        if cfg.quick:
            skipped.append(("jax.jit(jax.grad) (.at[].set)", "not run with --quick: the "
                                                             "unrolled 500-step loop compiles "
                                                             "for seconds"))
        else:
            jgj = jax.jit(jax.grad(heat_jax, argnums=wrt))
            res, secs = _timed(lambda: block(jgj(*jargs)))
            assert_same_grad("heat jax.jit(jax.grad)", [np.asarray(g) for g in res], g_ours,
                             ref="ours")
            cands.append(("jax.jit(jax.grad) (.at[].set)", lambda: block(jgj(*jargs))))
            notes.append(f"jax.jit(jax.grad) of the unrolled 500-step loop: first call "
                         f"(trace + compile) took {secs:.2f} s")
        jf = jax.jit(jax.grad(heat_jax_fori, argnums=wrt))
        res, secs = _timed(lambda: block(jf(*jargs)))
        assert_same_grad("heat jax.jit(grad) fori_loop", [np.asarray(g) for g in res], g_ours,
                         ref="ours")
        cands.append((JAX_FORI, lambda: block(jf(*jargs))))
        notes.append(f"{FORI_NOTE}; its first call (trace + compile) took {secs:.2f} s")
    else:
        skipped.append(("jax.grad", f"not importable: {_JAX_ERROR}"))

    counts = {}
    results = measure_group(cands, cfg, counts)
    print_peer_table(f"6. explicit 1-D heat equation, {n} cells x {HEAT_STEPS} steps, loss "
                     f"sum(u*u); grad w.r.t. (u0, r)", results, counts, skipped, p_slice,
                     [(o_slice, p_slice), (o_cat, p_cat)], notes)
    ratio = results[o_slice][1] / results[h_slice][1]
    print(f"  => ours (slice update) / hand-written adjoint = {ratio:.2f}x (best-of; target "
          f"<= 1.25x: {'OK' if ratio <= 1.25 else 'NOT MET'})")

    # What our generated code keeps per loop iteration (the tape), by formulation and wrt.
    state = n * u0.itemsize
    print(f"  tape of our generated gradient, per loop iteration (one state vector = {n} "
          f"float64 = {state} B):")
    probes = [("slice update, wrt (u0, r)", ours), ("concatenate, wrt (u0, r)", ours_cat)]
    for f, form in ((heat, "slice update"), (heat_concat, "concatenate")):
        g = grad(f, wrt=0)
        assert_same_grad(f"{f.__name__} ours wrt u0", g(*args), g_ours[0], ref="ours")
        probes.append((f"{form}, wrt u0 only", g))
    per_iteration = {}
    for label, g in probes:
        rec, out = tape_probe(g, *args)
        assert_same_grad(f"tape probe {label}", out, g(*args), rtol=0, atol=0, ref="ours")
        assert rec.pushes in (0, HEAT_STEPS), f"tape probe {label}: {rec.pushes} pushes"
        per = per_iteration[label] = rec.owned_bytes / HEAT_STEPS
        kinds = ", ".join(f"{k} x{c // HEAT_STEPS}" for k, c in sorted(rec.kinds.items())) \
            or "nothing is pushed"
        views = (f" + {rec.view_bytes / HEAT_STEPS:.0f} B in strided views (they keep a base "
                 f"alive)" if rec.view_bytes else "")
        print(f"    {label:28s} {per:7.0f} B/iteration = {per / state:.2f} state vectors"
              f"{views};  per push: {kinds}")
    met = [label for label, per in per_iteration.items() if per < state / 2]
    missed = [label for label in per_iteration if label not in met]
    print(f"  target (the update is linear in u: no state vectors on the tape): "
          f"met for {'; '.join(met) or 'none'}")
    if missed:
        print(f"  not met for {'; '.join(missed)}: d/dr = sum over steps of <adjoint, "
              f"u[2:] - 2u[1:-1] + u[:-2]>,\n  so that {n - 2}-vector of every step is kept "
              f"(or would have to be recomputed)")


def bench_newton(cfg: Config) -> None:
    args, wrt = (2.0, 5.0), (0, 1)  # root of x**3 + 2x - 5 (x = 1.328...), from x = 1
    ours = grad(newton_cubic, wrt=wrt)
    g_ours = ours(*args)
    exact = newton_cubic_analytic(*args)
    dev = max(abs(g - e) for g, e in zip(g_ours, exact))
    assert dev <= 1e-8, f"newton ours: {g_ours} vs analytic {exact}"
    assert all(type(g) is float for g in g_ours)

    primal = "primal (Python floats)"
    cands = [(primal, lambda: newton_cubic(*args)), (OURS, lambda: ours(*args))]
    skipped = []
    if ag_grad is not None:
        ag = ag_grad(newton_cubic, argnum=wrt)
        assert_same_grad("newton autograd", [float(g) for g in ag(*args)], g_ours, ref="ours")
        cands.append(("autograd.grad", lambda: ag(*args)))
    else:
        skipped.append(("autograd.grad", f"not importable: {_AUTOGRAD_ERROR}"))
    if jax is not None:
        block = _blocker()
        jg = jax.grad(newton_cubic, argnums=wrt)
        assert_same_grad("newton jax.grad", [float(g) for g in block(jg(*args))], g_ours,
                         ref="ours")
        cands.append(("jax.grad (un-jitted)", lambda: block(jg(*args))))
        skipped.append(("jax.jit(jax.grad)", "not possible: a Python while on a traced value "
                                             "cannot be jitted, and lax.while_loop has no "
                                             "reverse-mode rule"))
    else:
        skipped.append(("jax.grad", f"not importable: {_JAX_ERROR}"))

    iters = _newton_iterations(*args)
    counts = {}
    results = measure_group(cands, cfg, counts)
    print_peer_table(f"7. Newton's method in a while loop (root of x**3 + a*x - b, a=2, b=5, "
                     f"{iters} iterations to |f| <= 1e-12); grad of the root w.r.t. (a, b)",
                     results, counts, skipped, primal, [(OURS, primal)],
                     [f"ours vs the implicit-function-theorem derivative: max |difference| = "
                      f"{dev:.1e} (required <= 1e-8)"])


def _newton_iterations(a, b) -> int:
    x, n = 1.0, 0
    fx = x * x * x + a * x - b
    while abs(fx) > 1e-12:
        x = x - fx / (3.0 * x * x + a)
        fx = x * x * x + a * x - b
        n += 1
    return n


def _environment() -> str:
    lines = [f"python {platform.python_version()} ({platform.machine()}), numpy {np.__version__}, "
             f"cpus {os.cpu_count()}"]
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        lines.append(f"BLAS: {blas.get('name')} {blas.get('version', '')}".rstrip())
    except Exception:  # noqa: BLE001  (older numpy: no dict mode)
        pass
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                "OMP_NUM_THREADS"):
        if var in os.environ:
            lines.append(f"{var}={os.environ[var]} (left as is)")
    lines.append("autograd " + (autograd.__version__ if autograd is not None and
                                hasattr(autograd, "__version__") else
                                ("installed" if autograd is not None
                                 else f"skipped ({_AUTOGRAD_ERROR})")))
    lines.append("jax " + (f"{jax.__version__} (x64 enabled, {jax.devices()[0].platform})"
                           if jax is not None else f"skipped ({_JAX_ERROR})"))
    return "\n".join("  " + line for line in lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
    parser.add_argument("--only", metavar="NAMES", default="",
                        help="comma-separated sections to run (e.g. heat,newton)")
    opts = parser.parse_args(argv)
    cfg = Config()
    if opts.quick:
        cfg.repeat, cfg.target, cfg.compiles, cfg.overhead_calls = 3, 0.03, 3, 20_000
        cfg.slow_row_budget, cfg.quick = 0.0, True  # slow rows: one timed call

    start = time.perf_counter()
    # glibc serves blocks above its mmap threshold (128 KiB at start) with fresh pages until a
    # large block has been freed once: without this, a section run alone (--only mlp) pays page
    # faults for every temporary that one run after f1 does not
    warm = np.ones(1 << 20)
    del warm
    print("transpiler gradient benchmark (times per call; ratios use best-of, medians shown)")
    print(_environment())
    sections = {"f1": bench_f1, "mlp": bench_mlp, "compile": bench_compile,
                "overhead": bench_overhead, "rk4": bench_rk4, "heat": bench_heat,
                "newton": bench_newton, "hvp": bench_hvp}
    chosen = opts.only.split(",") if opts.only else list(sections)
    for name in chosen:
        sections[name](cfg)
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
