"""Calls and values (tests/corpus/functions.py runs in both modes through the corpus tests):
second derivatives through functions passed to helpers, what the generated code passes, the
refusals that remain, and that rebinding a function passed as a value recompiles."""

from __future__ import annotations

import functools
import re
import textwrap

import numpy as np
import pytest

from tests.corpus import functions as corpus
from tests.test_forward import check_hessian
from tests.util import make
from transpiler import TranspileError, check_grad, grad, hvp, jvp


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_hessian_through_functions_passed_as_values(name):
    """hessian == central differences of grad w.r.t. the first argument, hvp == hessian @ v."""
    f, args, _ = corpus.CASES[name]
    if np.ndim(args[0]) == 0:
        pytest.skip("check_hessian differentiates an array argument")
    check_hessian(f, args, seed=len(name))


@pytest.mark.parametrize("name", ["passes_a_closure", "passes_a_lambda", "passes_partials"])
def test_hvp_wrt_a_value_a_closure_captures(name):
    f, (y0, k), _ = corpus.CASES[name]
    h = 1e-5
    g = grad(f, wrt=1)
    expected = (g(y0, k + h) - g(y0, k - h)) / (2 * h)
    assert float(hvp(f, wrt=1)(y0, k, 1.0)) == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_the_helper_receives_what_the_closure_captures():
    source = grad(corpus.passes_a_closure, wrt=(0, 1)).source_for(np.ones(2), 0.5)
    assert re.search(r"integrate_vjp\w*\.forward\(rhs\w*, y, 3, 0\.1, f_k=k\)", source)
    assert "rhs_vjp.forward(y0, k=k)" in source  # rk4, inlined, calls rhs itself
    assert "bk = " in source  # the gradient of k comes back from the helper


def test_a_module_function_passed_to_an_inlined_helper_is_inlined_too():
    source = grad(corpus.passes_a_module_function).source_for(np.ones(2))
    assert "decay_y = " in source and "rk4_f" not in source and "decay_vjp" not in source


def test_partial_arguments_and_inputs_are_not_modified():
    y0 = np.array([0.4, -0.3])
    before = y0.copy()
    check_grad(corpus.passes_partials, y0, 0.7, wrt=(0, 1))
    jvp(corpus.passes_partials, (y0, 0.7), (np.ones(2), 1.0))
    np.testing.assert_array_equal(y0, before)


def test_rebinding_a_function_passed_as_a_value_recompiles():
    f = make("""
        def rhs(y):
            return -y

        def f(y0):
            return np.sum(integrate(rhs, y0, 2, 0.1))
    """, integrate=corpus.integrate)
    g = grad(f)
    y0 = np.array([0.5, 1.0])
    first = g(y0)
    f.__globals__["rhs"] = make("def rhs(y):\n    return -2.0 * y\n")
    step = 1.0 - 0.2 + 0.2 ** 2 / 2 - 0.2 ** 3 / 6 + 0.2 ** 4 / 24  # RK4 of y' = -2 y, dt 0.1
    np.testing.assert_allclose(g(y0), step ** 2 * np.ones(2), rtol=1e-12)
    assert not np.allclose(first, g(y0))


class _Model:
    scale = 2.0

    def __init__(self, k):
        self.k = k

    @property
    def boom(self):
        raise RuntimeError("a property ran at compile time")

    def rhs(self, y):
        return -self.k * y * y

    @staticmethod
    def static_rhs(y):
        return -0.3 * y

    @classmethod
    def class_rhs(cls, y):
        return -0.1 * cls.scale * y


def test_methods_and_numpy_functions_passed_to_a_helper():
    f = make("""
        def f(y0):
            total = np.sum(integrate(model.rhs, y0, 3, 0.1)) + np.sum(rk4(model.rhs, y0, 0.2))
            total = total + np.sum(integrate(Model.static_rhs, y0, 2, 0.1))
            total = total + np.sum(integrate(model.class_rhs, y0, 1, 0.1))
            return total + np.sum(rk4(np.cumsum, y0, 0.1)) + np.sum(rk4(np.tanh, y0, 0.1))
    """, integrate=corpus.integrate, rk4=corpus.rk4, model=_Model(0.6), Model=_Model)
    for optimize in (True, False):
        check_grad(f, np.array([0.3, 0.8]), optimize=optimize)
    y0, v = np.array([0.3, 0.8]), np.array([1.0, -0.5])
    _, tangent = jvp(f, (y0,), (v,))
    assert tangent == pytest.approx(np.dot(grad(f)(y0), v), rel=1e-10)
    # (hvp through a method reading its object's attributes is the objects' limitation)


def test_grad_wrt_a_keyword_only_parameter():
    def f(x, *, k, c=0.1):
        return np.sum(corpus.damped(x, k=k, c=c) ** 2) * k

    x = np.array([0.3, -0.5])
    h = 1e-6
    gx, gk, gc = grad(f, wrt=("x", "k", "c"))(x, k=1.5, c=0.3)
    assert gk == pytest.approx((f(x, k=1.5 + h, c=0.3) - f(x, k=1.5 - h, c=0.3)) / (2 * h),
                               rel=1e-6)
    assert gc == pytest.approx((f(x, k=1.5, c=0.3 + h) - f(x, k=1.5, c=0.3 - h)) / (2 * h),
                               rel=1e-6)


class _Scaler:
    def __call__(self, y):
        return 2.0 * y


def test_an_object_with_call_given_is_called_as_its_class_s_method():
    f = make("def f(y0, rhs):\n    return np.sum(rhs(y0) ** 2)\n")
    check_grad(f, np.array([0.5, -1.5]), _Scaler(), wrt=(0,))


REFUSED = [
    ("""
        def f(y0, k):
            g = functools.partial(np.multiply, k)
            if k > 0.0:
                g = np.sin
            return np.sum(g(y0))
    """, (np.ones(2), 0.5), "calling g, a function not known"),
    ("""
        def f(y0, k):
            def rhs(y):
                return -k * y
            h = rhs
            return np.sum(h(y0))
    """, (np.ones(2), 0.5), "may only be called or passed as an argument"),
    ("""
        def f(y0, k):
            def rhs(y, s):
                return -k * y * s
            g = functools.partial(rhs, s=2.0)
            k = 3.0 * k
            return np.sum(g(y0)) + len([g])
    """, (np.ones(2), 0.5), "reads 'k', which is assigned again later"),
]


@pytest.mark.parametrize("source, args, message", REFUSED)
def test_what_remains_refused_is_refused_at_its_line(source, args, message):
    f = make(source, functools=functools)
    with pytest.raises(TranspileError, match=message) as e:
        grad(f)(*args)
    assert e.value.lineno > 0


def test_the_lifted_lambda_name_does_not_leak_into_errors():
    f = make(textwrap.dedent("""
        def f(y0, k):
            return np.sum(integrate(lambda u: -k * u.tolist(), y0, 1, 0.1))
    """), integrate=corpus.integrate)
    with pytest.raises(TranspileError, match="tolist"):
        grad(f)(np.ones(2), 0.5)


def _picks_with(f, y, grid):
    best = min(grid, key=f)  # f used as a value: a library function calls it
    return y * best + f(y)


def test_a_function_passed_on_as_a_value_is_the_same_function():
    """A closure or a method given to a helper that hands it to a library (not followed)
    reaches the library as the function it is, with what it binds."""
    y = np.array([1.0, 2.0])
    f = make("""
        def f(y, k):
            def g(t):
                return (t - k) ** 2
            grid = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
            return np.sum(picks(g, y, grid)) + np.sum(picks(model.rhs, y, grid))
    """, picks=_picks_with, model=_Model(2.0))
    expected = 3.0 + 2.0 * (y - 3.0) + 5.0 - 4.0 * y  # min at t = k = 3 and at t = 5
    np.testing.assert_allclose(grad(f)(y, 3.0), expected, rtol=1e-12)
