"""Compiler bugs found by the random-program tester (tests/test_random_programs.py), reduced.

Each test is a minimal program and the seed it came from; bugs not fixed yet are strict xfails
(they start failing, as XPASS, once the compiler is fixed: then drop the mark).
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pytest

from tests.util import make
from transpiler import check_grad, converged, grad, jvp

# Seed 191 (default run): an early return, then a write into an argument, then the argument's
# name bound to a view of another array. Nothing aliases at the write; it was refused, in both
# modes, for some ``wrt``, until the alias check followed rebinding (analysis/aliases.py).
EARLY_RETURN_WRITE_THEN_VIEW = """
def f(x, y):
    if y[0] > 0.0:
        return 0.5
    x[1] = 0.5
    x = np.reshape({source}, (3,))
    return np.sum(x)
"""


def _run(mode: str, src: str, wrt: int):
    f = make(src, name="f")
    args = (-np.ones(3), -np.ones(3))
    if mode == "reverse":
        return grad(f, wrt=wrt)(*args)
    return jvp(f, args, tuple(np.ones(3) if i == wrt else None for i in range(2)))[1]


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_early_return_write_then_view_of_a_temporary_accepted_for_y(mode):
    src = EARLY_RETURN_WRITE_THEN_VIEW.format(source="y * 2.0")
    expected = 6.0 if mode == "forward" else 2.0 * np.ones(3)
    np.testing.assert_allclose(_run(mode, src, 1), expected)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_early_return_write_then_view_of_a_temporary(mode):
    src = EARLY_RETURN_WRITE_THEN_VIEW.format(source="y * 2.0")
    np.testing.assert_allclose(_run(mode, src, 0), 0.0)


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_early_return_write_then_view_of_an_argument(mode, wrt):
    src = EARLY_RETURN_WRITE_THEN_VIEW.format(source="y")
    expected = (0.0 if wrt == 0 else 3.0) if mode == "forward" else \
        (np.zeros(3) if wrt == 0 else np.ones(3))
    np.testing.assert_allclose(_run(mode, src, wrt), expected)


# Seed 301714 (soak): forward mode rewrites branch and loop bodies in place, with tangent
# statements that read tangent parameters not defined yet; the analysis of which values may be
# objects, solved lazily at the first method call after such a block, took them for unknown
# globals, so every value was "maybe an object" and ``w.mean()`` was refused in forward mode.
METHOD_AFTER_A_BRANCH = """
def f(x, y, z):
    n = 0
    if n > -0.5:
        w = y
        w[n] = n * np.mean(y)
    k = w.mean()
    return k
"""


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_method_of_an_array_after_a_branch_is_numpys_in_both_modes(mode):
    f = make(METHOD_AFTER_A_BRANCH, name="f")
    x, y, z = np.array([0.3, -0.2, 0.5]), np.array([0.5, -0.9, 0.4]), 0.7
    expected = np.array([0.0, 1.0, 1.0]) / 3.0  # w[0] = 0 * mean(y): only y[1], y[2] count
    if mode == "forward":
        v = np.array([0.2, -0.7, 1.3])
        assert jvp(f, (x, y, z), (None, v, None))[1] == pytest.approx(expected @ v, rel=1e-12)
    else:
        np.testing.assert_allclose(grad(f, wrt=1)(x, y.copy(), z), expected, rtol=1e-12)


# Seed 310623 (soak): the ``range`` desugar writes for ``for i, v in enumerate(y)`` is the
# compiler's own builtin (no resolved object): the analysis of which values may be objects took
# its result for one, and refused ``x.mean()`` of a value computed from the counter.
METHOD_OF_A_VALUE_FROM_A_COUNTER = """
def f(x, y):
    for i, v in enumerate(y):
        x = np.sqrt(i + 1.0) * x
    return x.mean()
"""


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_a_method_of_a_value_computed_from_a_loop_counter(mode):
    f = make(METHOD_OF_A_VALUE_FROM_A_COUNTER, name="f")
    x, y = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0])
    scale = np.sqrt(1.0) * np.sqrt(2.0)
    if mode == "forward":
        v = np.array([0.2, -0.7, 1.3])
        assert jvp(f, (x, y), (v, None))[1] == pytest.approx(scale * v.mean(), rel=1e-12)
    else:
        np.testing.assert_allclose(grad(f)(x, y), np.full(3, scale / 3.0), rtol=1e-12)


# Seed 730418: a value recomputed in the adjoint loop (``i3 = _i + 0``) read the outer loop's
# counter, which its tape did not keep (the adjoint read only i3): the adjoint ran with the
# last counter on every iteration, a wrong gradient, until the counter joined the tape.
COUNTER_READ_BY_A_RECOMPUTED_VALUE = """
def f(x):
    for i, e in enumerate(x):
        for k in range(2):
            x = x * 0.9 + ((x * i) ** 3) * k
    return np.sum(x)
"""


def test_a_value_computed_again_in_the_adjoint_keeps_its_loop_counter():
    f = make(COUNTER_READ_BY_A_RECOMPUTED_VALUE, name="f")
    x = np.array([1.477, -0.714, 0.19])
    from transpiler import check_grad
    check_grad(f, x)


# Seed 730339: an array written in a loop, bound before the loop only on the path that does not
# return (``return`` inside the loop is a flag): the private copy made before the loop read it
# unbound (UnboundLocalError). A value bound on some paths only is now written into a copy.
BOUND_ON_SOME_PATHS = """
def f(x, y):
    for row in np.array([[1.0], [-0.5]]) * x:
        if -1.0 < float(row.mean()) < 1.0:
            return np.sum(x) + np.sum(row)
        else:
            w = row.copy()
            w[:] = y * w
        if w.mean() < 0.0:
            continue
    return np.sum(x) + np.sum(y)
"""


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_an_array_bound_on_some_paths_before_a_loop_that_writes_it(scale):
    from transpiler import check_grad
    f = make(BOUND_ON_SOME_PATHS, name="f")
    check_grad(f, scale * np.array([-0.646, 0.009, 1.257]), np.array([-1.115, 0.733, 1.111]),
               wrt=(0, 1))


# Seed 477 (quick suite, NumPy 2.5): a tuple's gradient holds the gradient it was given, here a
# read-only broadcast (rt.unreduce); its element became x's gradient, which an integer-array
# read then added into in place: "array to perform in place operation on is read-only". A
# container's gradient from rt.unindex is no new array (passes/inplace.py).
CONTAINER_GRADIENT_THEN_INDEX_ARRAY_READ = """
def f(x, y, z):
    for i1 in range(0):
        y *= y
        for i2 in range(1):
            w3 = np.ones((2, 3))
            w3[i1 % 2] = ((-z) + np.where(np.sum(z) > 0.2, i1, z.mean()))
            if w3[1][2] < 0.5:
                break
        w4 = np.copy(x)
        w4[i1 % 3] += (np.mean(z) / 0.5)
    w5 = np.ones(3)
    w5[-1] = ((y * y) ** 3)
    a6 = np.abs(np.mean(w5))
    xs8 = ((+z[1:]), np.where(y > 0.0, x[[0, 2]], y),)
    k7 = xs8[0] * xs8[-1]
    p11 = (np.sum(np.where(a6 > 0.0, a6, k7) ** 2), x * 1.0)
    u9, u10 = p11
    if (np.arctan(y) / (1.0 + y * y)) <= 0.5:
        xs13 = (sum([(u9 ** 3) for t14 in (np.array([[1.0], [-0.5]]) * z)]),
                np.sum(w5[w5 > 0.1]), a6 * 1.0,)
        k12 = xs13[0] * xs13[-1]
        s15 = (np.array([[1.0], [-0.5]]) * w5)
    else:
        q18 = (u9 * np.array([0.5, -1.0, 2.0]))
        for i16, e17 in zip(q18, z):
            k7 = k7 * 0.9 + (k7 * (y * a6))
            if ((y + float(e17)) > 0.5 and w5.mean() < 0.5):
                break
        else:
            u9 = u9 + (-1.2)
    return np.sum(k7) + np.sum(u10) + np.sum(w5) + (-np.tanh(a6))
"""


def test_a_containers_gradient_is_not_written_in_place():
    from transpiler import check_grad
    f = make(CONTAINER_GRADIENT_THEN_INDEX_ARRAY_READ, name="f")
    check_grad(f, np.array([0.169, 0.874, -0.273]), -1.364, np.array([-0.495, -0.59, -0.247]))


# Seed 4200060: a helper returning a tuple, one of whose items scales an np.c_ join; the
# join's .T was read as an object's field (the helper's items may be objects), and the
# gradient refused it at run time. An array's .T (.mT, .real) has its linear adjoint there.
HELPER_ITEM_IN_A_JOIN = """
def h2(c):
    return (np.vectorize(math.atan)(c), 0.3)

def f(x):
    o3, o4 = h2(0.5)
    u = {join}.T
    return np.sum(u * u)
"""


@pytest.mark.parametrize("join", ["np.c_[x, o3 * x]", "np.stack([x, o3 * x], 1)"])
def test_the_transpose_of_a_join_holding_a_helper_s_item(join):
    import math
    f = make(HELPER_ITEM_IN_A_JOIN.format(join=join), name="f", math=math)
    x = np.array([0.8, -0.2, 0.9])
    c = 1.0 + math.atan(0.5) ** 2
    np.testing.assert_allclose(grad(f)(x), 2.0 * c * x, rtol=1e-13)
    np.testing.assert_allclose(jvp(f, (x,), (np.ones(3),))[1], 2.0 * c * np.sum(x), rtol=1e-13)


# Seed 4601118: a ufunc method (np.add.reduceat), whose __module__ is None, in a function that
# writes into its argument: the pass that decides which gradients may share an argument's memory
# read the module name as a string and crashed.
UFUNC_METHOD_BESIDE_AN_ARGUMENT_WRITE = """
def f(x):
    w1 = np.zeros(3)
    a2 = 0.5
    x *= a2 * x
    s3 = np.add.reduceat(([[1.0], [0.5]] * w1).ravel(), [0, 2, 5])
    return x
"""


def test_a_ufunc_method_beside_a_write_into_an_argument():
    f = make(UFUNC_METHOD_BESIDE_AN_ARGUMENT_WRITE, name="f")
    np.testing.assert_allclose(grad(f)(-0.462), 2 * 0.5 * -0.462, rtol=1e-13)
    np.testing.assert_allclose(jvp(f, (-0.462,), (1.0,))[1], -0.462, rtol=1e-13)


# Seed 4634418: a finally block whose loop (functools.reduce's) binds temporaries, written
# twice (the handler that cleans up and re-raises, then after the try): the second loop's
# entry copied the first one's variable, bound only on the raising path (UnboundLocalError
# with optimize=False), until ssa stopped joining a path that always raises.
def test_a_finally_block_with_a_loop_compiles_without_optimizing():
    f = make("""
        def f(x, y):
            try:
                pass
            finally:
                w = y.copy()
                w[0] = functools.reduce(operator.add, y)
            return np.sum(w) * x
    """, name="f", functools=functools, operator=operator)
    for optimize in (True, False):
        np.testing.assert_allclose(grad(f, wrt=(0, 1), optimize=optimize)(2.0, np.ones(3))[1],
                                   [2.0, 4.0, 4.0])


# Seed 4634032: a helper that changes the dict and list it is given, called as a statement
# inside a try, was refused as "called inside an expression" (the whole try was read as one).
def test_a_changing_helper_called_inside_a_try_is_a_statement():
    f = make("""
        def update(state, history, v):
            state["s"] = state["s"] * 0.5 + v
            history.append(np.tanh(v))

        def f(x):
            state = {"s": x * 1.0}
            history = []
            try:
                update(state, history, x * x)
            finally:
                done = 1
            return state["s"] + sum(history) * done
    """, name="f")
    np.testing.assert_allclose(grad(f)(0.7), 0.5 + 2 * 0.7 + 2 * 0.7 / np.cosh(0.49) ** 2)


# Seed 4635376: a module with a global ``rt_1`` read by a helper that is inlined, and a
# function of its own named ``rt``: the runtime, bound under a fresh name because ``rt`` was
# taken, was bound as ``rt_1`` and shadowed the global (a module where a number was expected).
def test_the_runtime_is_not_bound_under_a_name_a_helper_reads():
    f = make("""
        rt_1 = 0.5

        def rt(p):
            return rt_1

        def h(p):
            return math.erf(rt_1) * p

        def f(x):
            o = h(x)
            z = so.fixed_point(lambda t: 0.5, 3.0, xtol=1e-14)  # (binds the runtime first)
            d = {"a": rt(x)}
            return o * d["a"] + z
    """, name="f", so=pytest.importorskip("scipy.optimize"))
    assert grad(f)(2.0) == pytest.approx(0.5 * math.erf(0.5))  # (h(x) * rt(x) = erf(.5) x .5)


# Seed 4599220 (and by hand): a helper small enough to be inlined that calls map(...), or a
# solver, was inlined after the passes that rewrite those calls had run: "no gradient rule for
# map". Such a helper is compiled as a pair (its own front end rewrites them), and what it
# returns is analysed as compiled (map(f, xs) a comprehension: data, not an object).
def test_a_helper_calling_map_or_a_solver_is_not_inlined_before_its_rewrite():
    so = pytest.importorskip("scipy.optimize")
    f = make("""
        def h(p):
            return sum(map(math.tanh, p * 2.0)), p * p

        def residual(r, p):
            return r ** 3 + p * r - 1.0

        def root(p):
            r = so.brentq(residual, 0.0, 2.0, args=(p,))
            return r * p

        def f(x):
            a, b = h(x)
            return a + float(b.mean()) + root(x[0]) ** 2  # (b: an array, map or not)
    """, name="f", so=so)
    x = np.array([0.3, -1.2, 0.8])
    check_grad(f, x)


# Seed 4637041: a comprehension (here map(...), which is one) in a 'while' condition was refused;
# it is computed at each test.
def test_a_comprehension_in_a_while_condition_is_computed_at_each_test():
    f = make("""
        def f(x):
            r = x * 1.0
            n = 0
            while max(abs(v) for v in r) > 0.1 and sum(map(np.sin, r)) > -5.0 and n < 50:
                r = r * 0.5 + 0.01 * np.sin(r)
                n += 1
                if n == 2:
                    continue
                r = r * 0.9
            return np.sum(r * r) + n
    """, name="f")
    x = np.array([0.3, -1.2, 0.8])
    check_grad(f, x)
    _, tangent = jvp(f, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(grad(f)(x)), rel=1e-10)


# Seed 4637419: a module global named ``rt`` read by an inlined helper, in a function whose loop
# marked converged bound the runtime first, under ``rt`` (the function itself never reads it):
# the inlined helper's ``rt`` then meant the runtime ("unsupported operand ... 'module'").
def test_the_runtime_is_not_bound_under_a_global_name_of_the_module():
    f = make("""
        rt = 0.7

        def h(p):
            return (np.mean(p) - rt) ** 2

        def f(x):
            z = x[0] * 0.0
            n = 0
            while converged(n < 80):
                z = 0.5 * np.tanh(z) + 0.3 * np.sin(x[1])
                n = n + 1
            o = h(x * 2.0)
            return o + z
    """, name="f", converged=converged)
    check_grad(f, np.array([0.3, 0.9, -0.4]))


# Seed 4638869: an integral whose value was computed, then popped from its list unread: its
# adjoint, given a zero gradient, gave None for its arguments' gradients, to which the gradient
# of another use was added (TypeError). So did a minimum's and an ODE's. Zeros now.
def test_a_solve_or_integral_whose_value_is_not_read_gives_zero_gradients():
    si = pytest.importorskip("scipy.integrate")
    so = pytest.importorskip("scipy.optimize")
    f = make("""
        def f(x):
            u = np.sum(x)
            xs = [u.mean(), 2.0, si.quad(lambda t: u * t, 0.0, 1.5)[0]]
            xs.pop()
            m = so.minimize_scalar(lambda z: (z - u) ** 2, bracket=(-3.0, 3.0)).x
            y = si.solve_ivp(lambda t, y: -u * y, (0.0, 1.0), [1.0]).y
            ms = [m, y[0, -1], u * 2.0]
            return sum(xs) + ms[2]
    """, name="f", si=si, so=so)
    check_grad(f, np.array([0.3, 0.8]))
    np.testing.assert_allclose(grad(f)(np.array([0.3, 0.8])), [3.0, 3.0])
