"""The compile cache under concurrency and change: threads compile a gradient once, options never
share an entry, re-executed functions recompile, closures never share baked values, and entries
go away with their functions."""

from __future__ import annotations

import gc
import linecache
import threading
import time
import weakref

import numpy as np
import pytest

import transpiler.gradient
import transpiler.pipeline
from tests.util import make
from transpiler import cache, check_grad, grad, value_and_grad

THREADS = 8


@pytest.fixture
def compiles(monkeypatch):
    """Every compile_function call as (function, mode, wrt); each one sleeps a little so that
    threads racing for the same entry overlap inside the compile."""
    calls: list[tuple] = []
    original = transpiler.pipeline.compile_function

    def counting(fn, wrt, mode, *args, **kwargs):
        calls.append((fn, mode, tuple(wrt)))
        time.sleep(0.02)
        return original(fn, wrt, mode, *args, **kwargs)

    monkeypatch.setattr(transpiler.pipeline, "compile_function", counting)  # helpers (calls.py)
    monkeypatch.setattr(transpiler.gradient, "compile_function", counting)  # grad, value_and_grad
    return calls


def _together(work, n=THREADS):
    """Run ``work(i)`` in ``n`` threads released at once; return the results in order."""
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list = []

    def run(i):
        try:
            barrier.wait(timeout=30)
            results[i] = work(i)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    if errors:
        raise errors[0]
    return results


_SOURCES = iter(range(10 ** 9))


def _register(source: str) -> str:
    filename = f"<concurrency source {next(_SOURCES)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


# --- compiled once by racing threads ---------------------------------------------------------

@pytest.mark.parametrize("shared", [True, False], ids=["one grad object", "grad per thread"])
@pytest.mark.parametrize("scalar", [False, True], ids=["arrays", "floats"])
def test_threads_racing_for_one_gradient_compile_it_once(compiles, shared, scalar):
    f = make("def f(x, w):\n    return np.sum(np.sin(x) * x * w)\n")
    g = grad(f, wrt=(0, 1))
    rng = np.random.default_rng(1)
    inputs = [(float(v), 1.5) if scalar else (rng.uniform(-2, 2, 5), 1.5)
              for v in rng.uniform(-2, 2, THREADS)]

    def work(i):
        return (g if shared else grad(f, wrt=(0, 1)))(*inputs[i])

    results = _together(work)
    assert [c for c in compiles if c[0] is f] == [(f, "grad", ("x", "w"))]
    for (x, w), (gx, gw) in zip(inputs, results, strict=True):
        np.testing.assert_allclose(gx, (np.cos(x) * x + np.sin(x)) * w, rtol=1e-14)
        np.testing.assert_allclose(gw, np.sum(np.sin(x) * x), rtol=1e-14)
        assert type(gx) is (float if scalar else np.ndarray)


def test_threads_compiling_different_functions_share_one_helper(compiles):
    """Eight new functions calling one helper, compiled at once: the helper's forward/backward
    pair is compiled once and every gradient is right."""
    namespace = make("def helper(z, k):\n    return np.exp(z * k)\n", name="helper").__globals__
    functions = []
    for i in range(THREADS):
        source = f"def f{i}(x):\n    return np.sum(helper(x, {i + 1}.0) * x)\n"
        exec(compile(source, _register(source), "exec"), namespace)
        functions.append(namespace[f"f{i}"])
    x = np.array([0.1, -0.2, 0.3])
    results = _together(lambda i: grad(functions[i])(x))
    helper = namespace["helper"]
    assert sorted(c[1] for c in compiles if c[0] is helper) == ["split"]
    assert len([c for c in compiles if c[0] in functions]) == THREADS
    for i, got in enumerate(results):
        k = i + 1.0
        np.testing.assert_allclose(got, np.exp(k * x) * (1.0 + k * x), rtol=1e-14, atol=1e-15)


def test_threads_run_one_compiled_gradient_with_different_inputs():
    """The tape is local: concurrent calls of a looping gradient never see each other's values."""
    f = make("""
def f(x, k, n):
    v = 0.0 * x
    for step in range(n):
        v = v - 0.01 * k * np.sin(x)
        x = x + 0.01 * v
    return np.sum(0.5 * v * v + k * (1.0 - np.cos(x)))
""")
    g = value_and_grad(f, wrt=(0, 1))
    rng = np.random.default_rng(2)
    inputs = [(rng.uniform(-1, 1, 4), float(rng.uniform(1, 3)), 200 + 10 * i)
              for i in range(THREADS)]
    sequential = [g(*args) for args in inputs]

    def work(i):
        return [g(*inputs[i]) for _ in range(5)]

    for results, (value, (gx, gk)) in zip(_together(work), sequential, strict=True):
        for v, (rx, rk) in results:
            assert v == value
            np.testing.assert_array_equal(rx, gx)
            assert rk == gk
    check_grad(f, *inputs[0], wrt=(0, 1), rtol=1e-4)


# --- options ----------------------------------------------------------------------------------

def test_distinct_wrt_and_options_never_share_an_entry(compiles):
    f = make("def f(x, y):\n    t = x * y\n    return np.sum(np.sin(t) + y * y)\n")
    x, y = np.array([0.3, 0.4]), np.array([1.1, -0.5])
    gx, gy = y * np.cos(x * y), x * np.cos(x * y) + 2.0 * y
    variants = {
        "wrt=0": (grad(f), gx),
        "wrt=1": (grad(f, wrt=1), gy),
        "wrt=(0, 1)": (grad(f, wrt=(0, 1)), (gx, gy)),
        "wrt=(1, 0)": (grad(f, wrt=(1, 0)), (gy, gx)),
        "optimize=False": (grad(f, optimize=False), gx),
        "optimize=False, wrt=1": (grad(f, wrt=1, optimize=False), gy),
        "value_and_grad": (value_and_grad(f), (f(x, y), gx)),
    }
    sources = {}
    for name, (g, want) in variants.items():
        got = g(x, y)
        for a, b in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-14, err_msg=name)
        sources[name] = g.source_for(x, y)
    assert len(set(sources.values())) == len(variants), "two option sets share generated code"
    assert len([c for c in compiles if c[0] is f]) == len(variants)
    # the same options spelled differently do share one entry
    np.testing.assert_allclose(grad(f, wrt="x")(x, y), gx, rtol=1e-14)
    np.testing.assert_allclose(grad(f, wrt=(-1,))(x, y)[0], gy, rtol=1e-14)
    assert len([c for c in compiles if c[0] is f]) == len(variants)
    # the scalar variant is an entry of its own and gives the same numbers
    assert grad(f)(0.3, 1.1) == pytest.approx(1.1 * np.cos(0.33), rel=1e-14)
    assert len([c for c in compiles if c[0] is f]) == len(variants) + 1


# --- re-executed functions ---------------------------------------------------------------------

def test_redefined_function_gets_a_new_compile_and_old_gradients_keep_working(compiles):
    old = make("def f(x):\n    return np.sum(x * x * 3.0)\n")
    g_old = grad(old)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(g_old(x), 6.0 * x)
    new = make("def f(x):\n    return np.sum(x * x * 5.0)\n")  # the same name, new code
    assert new.__code__ is not old.__code__
    np.testing.assert_array_equal(grad(new)(x), 10.0 * x)
    np.testing.assert_array_equal(g_old(x), 6.0 * x)
    np.testing.assert_array_equal(grad(old)(x), 6.0 * x)
    assert [c[0] for c in compiles] == [old, new]
    # re-executed into the same namespace, as a module or notebook cell is
    namespace = old.__globals__
    source = "def f(x):\n    return np.sum(x * x * 7.0)\n"
    exec(compile(source, _register(source), "exec"), namespace)
    newest = namespace["f"]
    np.testing.assert_array_equal(grad(newest)(x), 14.0 * x)
    np.testing.assert_array_equal(g_old(x), 6.0 * x)
    assert [c[0] for c in compiles] == [old, new, newest]
    # the same function object given new code: the old grad object follows it
    old.__code__ = make("def f(x):\n    return np.sum(x * x * 9.0)\n").__code__
    np.testing.assert_array_equal(g_old(x), 18.0 * x)
    assert [c[0] for c in compiles] == [old, new, newest, old]


def test_gradient_follows_a_helper_re_executed_in_the_same_namespace():
    f = make("def helper(z):\n    return z * z\n\ndef f(x):\n    return np.sum(helper(x) * 2.0)\n",
             name="f")
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(grad(f)(x), 4.0 * x)
    source = "def helper(z):\n    return z * z * z\n"
    exec(compile(source, _register(source), "exec"), f.__globals__)
    assert f(x) == 18.0
    value, fresh = value_and_grad(f)(x)
    assert value == 18.0
    np.testing.assert_array_equal(fresh, 6.0 * x ** 2)
    np.testing.assert_array_equal(grad(f)(x), 6.0 * x ** 2)


# --- closures -----------------------------------------------------------------------------------

def _scaled(k):
    def f(x):
        return np.sum(k * x * x)
    return f


def _with_local_helper(k):
    def helper(z):
        return np.exp(z * k)

    def f(x):
        return np.sum(helper(x) * x)
    return f


def _with_lambda(k):
    def f(x):
        h = lambda z: z * k  # noqa: E731 - a lambda assigned to a name is lifted
        return np.sum(h(x) * x)
    return f


@pytest.mark.parametrize("factory,closed_form", [
    (_scaled, lambda k, x: 2.0 * k * x),
    (_with_local_helper, lambda k, x: np.exp(k * x) * (1.0 + k * x)),
    (_with_lambda, lambda k, x: 2.0 * k * x),
])
def test_closures_over_different_values_never_share_baked_code(factory, closed_form):
    ks = [0.5, 2.0, -3.0, 7.25]
    functions = [factory(k) for k in ks]
    assert len({f.__code__ for f in functions}) == 1  # one code object, different cells
    x = np.array([0.3, -0.7])
    for _ in range(2):  # interleaved calls, after every one is compiled
        for k, f in zip(ks, functions, strict=True):
            np.testing.assert_allclose(grad(f)(x), closed_form(k, x), rtol=1e-14)
            assert grad(f)(0.3) == pytest.approx(float(closed_form(k, np.array(0.3))), rel=1e-14)
    fresh = [factory(ks[i % len(ks)]) for i in range(THREADS)]  # compiled by the threads
    results = _together(lambda i: grad(fresh[i])(x))
    for i, got in enumerate(results):
        np.testing.assert_allclose(got, closed_form(ks[i % len(ks)], x), rtol=1e-14)


def test_closure_cells_are_read_live():
    def outer():
        k = 2.0
        w = np.array([1.0, 2.0])

        def f(x):
            return np.sum(k * w * x * x)

        def set_(new_k, new_w):
            nonlocal k, w
            k, w = new_k, new_w
        return f, set_

    f, set_ = outer()
    g = grad(f)
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(g(x), 2.0 * 2.0 * np.array([1.0, 2.0]) * x, rtol=1e-14)
    set_(3.0, np.array([-1.0, 4.0]))
    np.testing.assert_allclose(g(x), 2.0 * 3.0 * np.array([-1.0, 4.0]) * x, rtol=1e-14)
    assert g(0.5) == pytest.approx(2.0 * 3.0 * 0.5 * (-1.0 + 4.0), rel=1e-14)


# --- entries go away with their functions --------------------------------------------------------

def _generated_sources() -> int:
    return sum(1 for name in linecache.cache if name.startswith("<grad of"))


def test_cache_entries_go_away_with_closures():
    gc.collect()
    entries, sources = cache.size(), _generated_sources()
    f = _scaled(3.0)
    assert grad(f)(1.0) == 6.0
    np.testing.assert_array_equal(grad(f)(np.ones(2)), [6.0, 6.0])
    assert cache.size() == entries + 1
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None
    assert cache.size() == entries
    assert _generated_sources() == sources
    for i in range(1000):
        g = grad(_with_local_helper(float(i % 7)))
        assert g(0.0) == 1.0
    del g
    gc.collect()
    assert cache.size() == entries
    assert _generated_sources() == sources


def test_cache_entries_go_away_with_module_level_functions():
    gc.collect()
    entries, sources = cache.size(), _generated_sources()
    f = make("def f(x):\n    return np.sum(x * x)\n")
    np.testing.assert_array_equal(grad(f)(np.ones(2)), [2.0, 2.0])
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None
    for i in range(1000):
        g = grad(make(f"def f(x):\n    return x * {i}.0\n"))
        assert g(1.0) == float(i)
    del g
    gc.collect()
    assert cache.size() == entries
    assert _generated_sources() == sources
