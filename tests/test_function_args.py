"""Functions given as arguments of the differentiated function (transpiler/function_args.py;
the corpus cases ``given_*`` in tests/corpus/functions.py run in both modes, optimized and not,
and through hessian/hvp): a variant per function, never a stale one, the functions' own
conventions (keyword, default, forwarded to a helper), and what is refused."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.corpus.functions import (
    QUADRATIC,
    classic_rk4,
    explicit_euler,
    force,
    linear_decay,
)
from tests.util import make
from transpiler import (
    TranspileError,
    check_grad,
    forward,
    grad,
    hessian,
    hvp,
    jvp,
    value_and_grad,
    vjp,
)
from transpiler.cache import BOUNDED

Y0 = np.array([0.8, -0.4])


def cubic(y, k):
    return -k * y ** 3


def _fd(f, args, i, h=1e-6):
    """Central differences of a scalar f in its float argument ``args[i]``."""
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h, args[i] - h
    return (f(*up) - f(*down)) / (2 * h)


def test_another_function_on_the_next_call_gets_its_own_gradient():
    g = grad(explicit_euler, wrt=1)
    first = g(Y0, 0.7, linear_decay)
    second = g(Y0, 0.7, cubic)
    assert first == pytest.approx(_fd(explicit_euler, (Y0, 0.7, linear_decay), 1), rel=1e-6)
    assert second == pytest.approx(_fd(explicit_euler, (Y0, 0.7, cubic), 1), rel=1e-6)
    assert first != pytest.approx(second, rel=1e-3)
    assert g(Y0, 0.7, linear_decay) == first  # and back: each keeps its variant
    _, tangent = jvp(explicit_euler, (Y0, 0.7, cubic), (None, 1.0, None))
    assert tangent == pytest.approx(second, rel=1e-10)


def test_a_lambda_made_anew_at_each_call_reuses_its_variant():
    g = grad(explicit_euler, wrt=(0, 1))
    made = [g.compiled_for(Y0, 0.7, lambda y, k: -k * y * np.cos(y)) for _ in range(3)]
    assert made[0] is made[1] is made[2]
    results = []
    for c in (0.1, 0.5):  # a closure over a loop variable: the same cell, read when it runs
        results.append(g(Y0, 0.7, lambda y, k: -k * y - c * y ** 3))  # noqa: B023
        check_grad(explicit_euler, Y0, 0.7, lambda y, k: -k * y - c * y ** 3,  # noqa: B023
                   wrt=(0, 1))
    assert not np.allclose(results[0][0], results[1][0])


def test_closures_and_defaults_of_their_own_are_other_functions():
    def damping(c):
        return lambda y, k: -k * y - c * y ** 3

    g = grad(explicit_euler, wrt=(0, 1))
    for c in (0.1, 0.4):
        for rhs in (damping(c), lambda y, k, c=c: -k * y - c * y ** 3,
                    functools.partial(force, c=c)):
            got = g(Y0, 0.7, rhs)
            assert got[1] == pytest.approx(_fd(explicit_euler, (Y0, 0.7, rhs), 1), rel=1e-6)
            check_grad(explicit_euler, Y0, 0.7, rhs, wrt=(0, 1), optimize=False)


def test_many_new_functions_keep_a_bounded_cache():
    def f(y0, rhs):
        return np.sum(rhs(y0) ** 2)

    g = grad(f)
    for i in range(BOUNDED + 8):
        rhs = functools.partial(np.multiply, float(i))
        np.testing.assert_allclose(g(Y0, rhs), 2.0 * i * i * Y0)
    assert len(f.__transpiler_cache__) <= BOUNDED + 2


def test_keyword_default_and_forwarded_to_a_helper():
    g = grad(classic_rk4, wrt=(0, 1))
    by_default = g(Y0, 0.6)
    with pytest.raises(TranspileError, match="calling f, a function not known"):
        g(Y0, 0.6, rhs=None)  # not the variant of the default
    np.testing.assert_allclose(g(Y0, 0.6, linear_decay)[0], by_default[0], rtol=1e-12)
    given = g(Y0, k=0.6, rhs=cubic)
    assert given[1] == pytest.approx(_fd(lambda y, k: classic_rk4(y, k, cubic), (Y0, 0.6), 1),
                                     rel=1e-6)
    np.testing.assert_allclose(g(Y0, 0.6, rhs=cubic)[0], given[0], rtol=1e-12)
    value, (gy, gk) = value_and_grad(classic_rk4, wrt=(0, "k"))(Y0, 0.6, QUADRATIC)
    assert value == classic_rk4(Y0, 0.6, QUADRATIC)
    check_grad(classic_rk4, Y0, 0.6, QUADRATIC, wrt=(0, 1))
    v = np.array([1.0, -0.5])
    _, tangent = forward(classic_rk4, wrt=(0, 1))(Y0, 0.6, QUADRATIC, dy0=v, dk=0.3)
    assert tangent == pytest.approx(gy @ v + 0.3 * gk, rel=1e-10)


def test_a_keyword_only_function_parameter():
    def relax(x, *, step, n=3, scale=1.0):
        for _ in range(n):
            x = x - scale * step(x)
        return np.sum(x ** 2)

    h = 1e-6
    for step in (np.sin, np.tanh):
        gx, gs = grad(relax, wrt=("x", "scale"))(Y0, step=step, scale=0.5)
        assert gs == pytest.approx((relax(Y0, step=step, scale=0.5 + h)
                                    - relax(Y0, step=step, scale=0.5 - h)) / (2 * h), rel=1e-6)
        e = np.array([h, 0.0])
        assert gx[0] == pytest.approx((relax(Y0 + e, step=step, scale=0.5)
                                       - relax(Y0 - e, step=step, scale=0.5)) / (2 * h),
                                      rel=1e-6)


def test_a_method_of_an_object():
    class Model:
        def __init__(self, c):
            self.c = c

        def rhs(self, y, k):
            return -k * self.c * y - 0.1 * y ** 3

    for optimize in (True, False):
        check_grad(explicit_euler, Y0, 0.7, Model(0.5).rhs, wrt=(0, 1), optimize=optimize)
    g = grad(explicit_euler, wrt=1)
    assert g(Y0, 0.7, Model(0.5).rhs) != pytest.approx(g(Y0, 0.7, Model(2.0).rhs))
    _, tangent = jvp(explicit_euler, (Y0, 0.7, Model(0.5).rhs), (np.ones(2), None, None))
    assert tangent == pytest.approx(np.sum(grad(explicit_euler)(Y0, 0.7, Model(0.5).rhs)),
                                    rel=1e-10)


def test_second_derivatives_and_vjp():
    for rhs in (cubic, QUADRATIC, functools.partial(force, c=0.2)):
        H = hessian(explicit_euler)(Y0, 0.7, rhs)
        g = grad(explicit_euler)
        h = 1e-5
        fd = np.stack([(g(Y0 + h * e, 0.7, rhs) - g(Y0 - h * e, 0.7, rhs)) / (2 * h)
                       for e in np.eye(2)])
        np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-8)
        v = np.array([0.3, -1.0])
        np.testing.assert_allclose(hvp(explicit_euler)(Y0, 0.7, rhs, v), H @ v, rtol=1e-10)
        value, pullback = vjp(explicit_euler, Y0, 0.7, rhs)
        gy, gk, grhs = pullback(1.0)
        assert grhs is None and value == explicit_euler(Y0, 0.7, rhs)
        np.testing.assert_allclose(gy, g(Y0, 0.7, rhs), rtol=1e-12)


def test_the_generated_source_calls_the_function_given():
    source = grad(explicit_euler, wrt=(0, 1)).source_for(Y0, 0.7, cubic)
    assert "cubic_vjp.forward(y_1, k)" in source and "cubic_vjp.backward(" in source
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any("rhs(" in line for line in code)
    inlined = grad(classic_rk4).source_for(Y0, 0.6, QUADRATIC)
    assert "lambda_fn_y = " in inlined  # inlined where rk4_k is (a whole statement)
    assert "rk4_k_vjp.forward(lambda_fn, y0, k, 0.2)" in inlined  # a pair elsewhere


def test_inputs_are_not_modified():
    y0 = Y0.copy()
    p = functools.partial(force, c=np.array([0.2, 0.1]))
    check_grad(classic_rk4, y0, 0.6, p, wrt=(0, 1))
    jvp(classic_rk4, (y0, 0.6, p), (np.ones(2), 1.0, None))
    np.testing.assert_array_equal(y0, Y0)
    np.testing.assert_array_equal(p.keywords["c"], [0.2, 0.1])


def test_a_function_is_never_differentiated():
    with pytest.raises(TypeError, match="'rhs'.*functions given as arguments are never"):
        grad(explicit_euler, wrt=2)(Y0, 0.7, cubic)
    with pytest.raises(TypeError, match="argument 'rhs' is function and cannot have a "
                       "tangent"):
        jvp(explicit_euler, (Y0, 0.7, cubic), (None, 1.0, 1.0))


def test_a_parameter_given_a_function_and_rebound_is_refused():
    f = make("""
        def f(y, rhs, flag):
            if flag:
                rhs = np.cos
            return np.sum(rhs(y))
    """)
    with pytest.raises(TranspileError, match="calling rhs, a function not known") as e:
        grad(f)(Y0, np.sin, True)
    assert e.value.lineno == 4
    helper = make("""
        def helper(f, y, flag):
            if flag:
                f = np.cos
            return f(y)

        def g(y, flag):
            return np.sum(helper(np.sin, y, flag))
    """)
    with pytest.raises(TranspileError, match="calling f, a function not known"):
        grad(helper)(Y0, True)


def test_an_object_with_call_is_called_as_its_class_s_method():
    class Scale:
        def __init__(self, c):
            self.c = c

        def __call__(self, y, k):
            return self.c * k * y

    check_grad(explicit_euler, Y0, 0.7, Scale(1.3), wrt=(0, 1))
    assert grad(explicit_euler, wrt=2)(Y0, 0.7, Scale(1.3)).c != 0.0  # (its field's gradient)


def test_lambdas_are_read_from_their_line():
    double, cube = (lambda x: np.sin(x) * 2.0, lambda x: np.sin(x) ** 3)
    assert grad(double)(0.3) == pytest.approx(2.0 * np.cos(0.3), rel=1e-12)
    assert grad(cube)(0.3) == pytest.approx(3.0 * np.sin(0.3) ** 2 * np.cos(0.3), rel=1e-12)
    assert smooth(np.array([0.2, 0.5]), lambda u: u * np.cos(u)) is not None


def smooth(x, f):
    check_grad(lambda x, f: np.sum(f(x) ** 2), x, f)
    value, tangent = jvp(lambda x, f: np.sum(f(x) ** 2), (x, f), (np.ones(2), None))
    assert tangent == pytest.approx(np.sum(grad(lambda x, f: np.sum(f(x) ** 2))(x, f)))
    return value


def test_a_lambda_calling_another_function_each_time_is_compiled_for_each():
    run = make("""
        def run(g, y0):
            global f
            out = []
            for f in (np.sin, np.cos):  # a global the lambda calls
                out.append(g(y0, 0.7, lambda y, k: -k * f(y)))
            for h in (np.sin, np.cos):  # a closure cell the lambda calls
                out.append(g(y0, 0.7, lambda y, k: -k * h(y)))
            return out
    """)
    got = run(grad(explicit_euler, wrt=1), Y0)
    for result, func in zip(got, (np.sin, np.cos) * 2, strict=True):
        rhs = lambda y, k, func=func: -k * func(y)  # noqa: E731
        assert result == pytest.approx(_fd(explicit_euler, (Y0, 0.7, rhs), 1), rel=1e-6)


def test_a_helper_calling_a_rebound_global_is_compiled_again():
    top = make("""
        def helper(y):
            return f(y)

        def top(y):
            return np.sum(helper(y) * 2.0)
    """, f=np.sin)
    g = grad(top)
    np.testing.assert_allclose(g(Y0), 2.0 * np.cos(Y0))
    top.__globals__["f"] = np.cos
    np.testing.assert_allclose(g(Y0), -2.0 * np.sin(Y0))
    check_grad(top, Y0)
    top.__globals__["f"] = np.sin  # and with floats, through the fast path
    assert g(0.3) == pytest.approx(2.0 * np.cos(0.3), rel=1e-12)
    top.__globals__["f"] = np.tanh
    assert g(0.3) == pytest.approx(2.0 / np.cosh(0.3) ** 2, rel=1e-12)
    sim = make("""
        def rhs(y, k):
            return -k * f(y)

        def sim(y0, k, r):
            return explicit_euler(y0, k, r, steps=3)
    """, f=np.sin, explicit_euler=explicit_euler)
    rhs = sim.__globals__["rhs"]
    g = grad(sim, wrt=1)
    before = g(Y0, 0.7, rhs)
    sim.__globals__["f"] = np.cos  # the same function given, calling another one now
    assert g(Y0, 0.7, rhs) == pytest.approx(_fd(sim, (Y0, 0.7, rhs), 1), rel=1e-6)
    assert before != pytest.approx(g(Y0, 0.7, rhs), rel=1e-3)
    _, tangent = jvp(sim, (Y0, 0.7, rhs), (None, 1.0, None))
    assert tangent == pytest.approx(g(Y0, 0.7, rhs), rel=1e-10)


def test_a_table_of_functions_changed_later_picks_by_what_it_holds():
    acts = {"relu": lambda v: np.maximum(v, 0.0), "tanh": np.tanh}
    f = make("def f(w, name):\n    return np.sum(ACTS[name](w * 2.0) * w)\n", ACTS=acts)
    w = np.array([0.3, -0.5, 1.2])
    check_grad(f, w, "tanh")
    acts["tanh"] = acts["relu"]  # (one it held then: its own branch)
    np.testing.assert_allclose(grad(f)(w, "tanh"), np.where(w > 0, 4.0 * w, 0.0))
    acts["tanh"] = np.sin  # (one it never held: the gradient says so)
    with pytest.raises(TypeError, match=r"ACTS\[name\] is <ufunc 'sin'>, which it did not hold"):
        grad(f)(w, "tanh")
    with pytest.raises(KeyError, match="'cosh'"):
        grad(make("def f(w, k):\n    return np.sum({'tanh': np.tanh}[k](w))\n"))(w, "cosh")
