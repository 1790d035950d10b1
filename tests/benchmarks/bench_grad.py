"""Side-by-side gradient benchmark: this compiler vs. hand-written NumPy, autograd and JAX.

Run from the repository root::

    python -m tests.benchmarks.bench_grad            # full run (well under 2 minutes)
    python -m tests.benchmarks.bench_grad --quick    # fewer repeats, for a smoke test

Not part of the test suite (pytest ignores tests/benchmarks). Peers that do not import
(autograd, jax) are skipped. Every gradient is checked against the hand-written adjoint (and
the hand-written adjoint against central finite differences) *before* anything is timed, so a
wrong gradient can never be measured silently.

Sections:
  1. f1(x) = sum(sin(x) * exp(-x**2)) over 10**6 float64 elements.
  2. A two-layer tanh MLP loss, gradient w.r.t. (W1, b1, W2, b2).
  3. Compile time of the first call for a 20-statement straight-line function (target < 50 ms).
  4. Per-call overhead of the cached ``grad(h)`` wrapper vs. the generated function (target <~1 us).

Timing: warm-up calls first, then ``timeit`` repeats (gc disabled during a repeat, as timeit
does); repeats of all rows of a section are interleaved round-robin; each row reports the best and
the median per-call time; ratios use the best-of (robust to load from elsewhere).
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


# --------------------------------------------------------------------------------------------
# Timing and checking helpers
# --------------------------------------------------------------------------------------------

class Config:
    repeat = 9           # timeit repeats per row
    target = 0.15        # seconds per repeat (the number of calls per repeat is chosen to fit)
    warmup = 2           # warm-up calls before calibration
    compiles = 10        # fresh compiles for section 3
    overhead_calls = 200_000


def measure_group(candidates, cfg: Config) -> dict:
    """{name: (median, best)} seconds per call for each ``(name, fn)``, measured side by side.

    Each callable is warmed up, then the number of calls per repeat is chosen so that one
    repeat takes about ``cfg.target`` seconds. The repeats are interleaved round-robin (with a
    rotating order), so that load from elsewhere on the machine hits every row alike and the
    ratios stay meaningful even when the absolute times wobble.
    """
    timers, numbers = [], []
    for _, fn in candidates:
        for _ in range(cfg.warmup):
            fn()
        t0 = time.perf_counter()
        fn()
        single = max(time.perf_counter() - t0, 1e-7)
        numbers.append(max(1, int(cfg.target / single)))
        timers.append(timeit.Timer(fn))
    per_call = [[] for _ in candidates]
    k = len(candidates)
    for r in range(cfg.repeat):
        for j in range(k):
            i = (j + r) % k
            per_call[i].append(timers[i].timeit(number=numbers[i]) / numbers[i])
    return {name: (statistics.median(ts), min(ts))
            for (name, _), ts in zip(candidates, per_call)}


def _as_tuple(g):
    return tuple(g) if isinstance(g, (tuple, list)) else (g,)


def assert_same_grad(label, got, expected, rtol=1e-9, atol=1e-12):
    got, expected = _as_tuple(got), _as_tuple(expected)
    assert len(got) == len(expected), f"{label}: {len(got)} gradients, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        assert g.shape == np.shape(e), f"{label}[{i}]: shape {g.shape} != {np.shape(e)}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol,
                                   err_msg=f"{label}: gradient {i} disagrees with hand-written")


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


def print_table(title, names, results, skipped):
    """One section's table; ``results`` from measure_group, ``skipped``: [(name, reason)]."""
    base, hand = results[PRIMAL][1], results[HAND][1]
    print(f"\n{title}")
    header = (f"  {'':26s} {'best ms':>10s} {'median ms':>10s} {'best/primal':>12s} "
              f"{'best/hand':>10s}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for name in names:
        med, best = results[name]
        print(f"  {name:26s} {best * 1e3:10.3f} {med * 1e3:10.3f} {best / base:12.2f} "
              f"{best / hand:10.2f}")
    for name, reason in skipped:
        print(f"  {name:26s} {'skipped':>10s}  ({reason})")
    ours = results[OURS][1]
    print(f"  => ours / hand-written = {ours / hand:.2f}x  (best-of; medians: "
          f"{results[OURS][0] / results[HAND][0]:.2f}x);  ours / primal = {ours / base:.2f}x, "
          f"hand-written / primal = {hand / base:.2f}x")


def _run_section(title, candidates, skipped, cfg):
    results = measure_group(candidates, cfg)
    print_table(title, [name for name, _ in candidates], results, skipped)


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
    raw = g._variants[1].function  # the scalar variant that grad(h)(1.0) runs
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
    opts = parser.parse_args(argv)
    cfg = Config()
    if opts.quick:
        cfg.repeat, cfg.target, cfg.compiles, cfg.overhead_calls = 3, 0.03, 3, 20_000

    start = time.perf_counter()
    print("transpiler gradient benchmark (times per call; ratios use best-of, medians shown)")
    print(_environment())
    bench_f1(cfg)
    bench_mlp(cfg)
    bench_compile(cfg)
    bench_overhead(cfg)
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
