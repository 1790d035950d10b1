"""Functions ported from another autodiff library's test suite, as a new user writes them: each
was silently wrong, crashed or was refused. Each is checked against central finite differences
in reverse mode and against reverse mode in forward mode, on floats and on arrays."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.util import central_differences as _fd
from tests.util import make, run_readme_block
from transpiler import grad, jvp


def check(f, x, expected=None, rtol=1e-6, atol=1e-8):
    """The gradient of ``f`` at ``x``: against ``expected`` (else central differences) in
    reverse mode, and forward mode's directional derivative against it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning from a 0 * inf on the way
        g = grad(f)(x)
        v = np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
        _, t = jvp(f, (x,), (v,))
    np.testing.assert_allclose(g, _fd(f, x) if expected is None else expected,
                               rtol=rtol, atol=atol)
    np.testing.assert_allclose(t, np.sum(np.asarray(g) * v), rtol=1e-10, atol=1e-12)
    return g


# --- np.std where all entries are equal ---------------------------------------------------------

STD = [
    ("np.std(x)", np.array([2.0])),  # one element: constant, gradient 0
    ("np.std(x)", 2.0),
    ("np.std(x)", np.array([1.5, 1.5, 1.5])),  # equal entries: a kink, 0 as norm at 0
    ("np.sum(np.std(x, axis=1))", np.array([[1.0], [2.0]])),
    ("np.sum(np.std(x, axis=0) ** 2)", np.array([[1.0, 2.0], [1.0, 3.0]])),
    ("np.nanstd(x)", np.array([2.0])),
    ("np.nanstd(np.r_[x, np.nan])", np.array([2.0, 2.0])),
    ("x.std()", np.array([0.3])),
]


@pytest.mark.parametrize("expr, x", STD)
def test_std_where_it_is_zero_has_gradient_zero(expr, x):
    f = make(f"def f(x):\n    return {expr}\n")
    g = check(f, x, expected=np.zeros_like(x) if "** 2" not in expr else None)
    assert np.all(np.isfinite(g))


def test_std_elsewhere_is_unchanged():
    check(make("def f(x):\n    return np.std(x) * np.std(x[:2], ddof=1)\n"),
          np.array([0.3, 1.2, -0.7]))


# --- the power family at 0 -----------------------------------------------------------------------

POWERS_AT_0 = [
    ("np.sum(np.power(x, 0.0) * x + x ** 0)", np.array([0.0, 1.0, 2.0]), [1.0, 1.0, 1.0]),
    ("np.power(x, 0.0)", 0.0, 0.0),
    ("math.pow(x, 0.0)", 0.0, 0.0),
    ("math.pow(x, 0)", 0.0, 0.0),
    ("x ** 0", 0.0, 0.0),
    ("x ** 0.0", 0.0, 0.0),
    ("np.float_power(x, 0)", 0.0, 0.0),
    ("np.sum(np.float_power(x, 0.0))", np.array([0.0, 2.0]), [0.0, 0.0]),
    ("x ** 1 + np.power(x, 1.0) + math.pow(x, 1) + np.float_power(x, 1)", 0.0, 4.0),
    ("np.sum(x ** 1 + np.power(x, 1) + np.float_power(x, 1.0))", np.array([0.0, -2.0]),
     [3.0, 3.0]),
    ("x ** 2 + np.power(x, 3) + math.pow(x, 2.0)", 0.0, 0.0),
    ("x ** 3 + np.power(x, 2) + math.pow(x, 3)", -2.0, 12.0 - 4.0 + 12.0),  # negative base
    ("np.sum(x ** 3 + np.power(x, 2) + np.float_power(x, 3))", np.array([-2.0, -0.5, 0.0]),
     None),
    ("x ** -2 + np.power(x, -1)", -2.0, None),
]


@pytest.mark.parametrize("expr, x, expected", POWERS_AT_0)
def test_powers_at_zero(expr, x, expected):
    f = make(f"def f(x):\n    return {expr}\n")
    check(f, x, expected)


@pytest.mark.parametrize("n", [0, 1, 2, 0.0, 1.0, 3])
@pytest.mark.parametrize("x", [0.0, -2.0, np.array([0.0, -1.5, 2.0])], ids=["0", "neg", "array"])
def test_a_power_whose_exponent_is_a_variable(n, x):
    f = make("def f(x, n):\n    return np.sum(x ** n + np.power(x, n))\n")
    expected = 2 * n * np.asarray(x, float) ** max(n - 1, 0) if n else np.zeros_like(x)
    g = grad(f)(x, n)
    np.testing.assert_allclose(g, expected)
    _, t = jvp(f, (x, n), (np.ones_like(x) if np.ndim(x) else 1.0, None))
    np.testing.assert_allclose(t, np.sum(expected))


def test_a_differentiated_exponent_at_a_zero_base():
    f = make("def f(y, x):\n    return np.sum(np.power(x, y))\n")
    x = np.array([0.0, 2.0])
    np.testing.assert_allclose(grad(f)(0.0, x), np.log(2.0))
    np.testing.assert_allclose(grad(f)(2.0, x), 4 * np.log(2.0))
    np.testing.assert_allclose(grad(f, wrt=1)(0.0, x), [0.0, 0.0])


# --- library calls that take a function ---------------------------------------------------------

def sq(t):
    return t * t + np.sin(t)


def two(a, b):
    return a * np.exp(b)


def row_norm(r, p=2.0):
    return np.sum(np.abs(r) ** p) ** (1.0 / p)


vsq = np.vectorize(sq)
X3 = np.array([0.3, -0.8, 1.2])
M23 = np.array([[0.3, -0.8, 1.2], [0.5, 0.1, -0.4]])

HIGHER_ORDER = [
    ("sum(map(np.sin, x))", X3),
    ("sum(list(map(lambda t: t ** 2, x)))", X3),
    ("sum(map(two, x, x[::-1]))", X3),
    ("sum(map(operator.mul, x, x))", X3),
    ("sum(tuple(map(sq, x)))", 0.7 * X3),
    ("functools.reduce(operator.mul, x)", X3),
    ("functools.reduce(lambda a, b: a + b * b, x, 0.0)", X3),
    ("functools.reduce(two, x, 1.5)", X3),
    ("functools.reduce(operator.add, map(np.tanh, x))", X3),
    ("np.sum(np.vectorize(sq)(x))", X3),
    ("np.sum(np.vectorize(two)(x, 2.0))", X3),
    ("np.sum(np.vectorize(two)(x, x[:, None]) ** 2)", X3),
    ("np.sum(vsq(x))", M23),
    ("np.vectorize(sq)(x)", 0.4),
    ("np.sum(np.vectorize(lambda t: t ** 3, otypes=[float])(x))", X3),
    ("np.sum(np.apply_along_axis(lambda r: np.sum(r ** 2), 1, x))", M23),
    ("np.sum(np.apply_along_axis(row_norm, 0, x) * np.arange(1.0, 4.0))", M23),
    ("np.sum(np.apply_along_axis(row_norm, -1, x, 3.0))", M23),
    ("np.sum(np.apply_along_axis(np.cumsum, 1, x) ** 2)", M23),
    ("np.sum(np.apply_along_axis(lambda r: r[::-1] * r, 0, x) ** 2)", M23),
    ("np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, lambda t: 3 * t]))", X3),
    ("np.sum(np.piecewise(x, [x < 0], [np.sin, lambda t: t ** 3]))", X3),
    ("np.sum(np.piecewise(x, [x < -0.5, x > 1.0], [sq, 2.0, np.cos]))", X3),
    ("np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t * t])", 0.6),
    ("np.sum(x.view() ** 2)", X3),
    ("np.sum(x.view(np.float64) * x)", M23),
    ("np.sum(sliding_window_view(x, 2) ** 2)", X3),
    ("np.sum(sliding_window_view(x, (2, 2)) * np.arange(8.0).reshape(1, 2, 2, 2))", M23),
    ("np.sum(np.lib.stride_tricks.sliding_window_view(x, 2, axis=0) ** 3)", M23),
]


@pytest.mark.parametrize("expr, x", HIGHER_ORDER)
def test_library_calls_that_take_a_function(expr, x):
    f = make(f"def f(x):\n    return {expr}\n", sq=sq, two=two, row_norm=row_norm, vsq=vsq,
             operator=__import__("operator"), functools=__import__("functools"),
             sliding_window_view=np.lib.stride_tricks.sliding_window_view)
    check(f, x)


def test_a_reduce_in_an_elif_test_and_an_argument_computed_once():
    f = make("def f(x):\n    if x[0] > 1.0:\n        return 0.0\n"
             "    elif functools.reduce(operator.add, x) > 0.0:\n"
             "        return np.sum(np.vectorize(two)(np.sin(x), x[:, None] * 2.0))\n"
             "    return np.sum(np.apply_along_axis(row_norm, 0, np.outer(x, x)))\n",
             two=two, row_norm=row_norm, operator=__import__("operator"),
             functools=__import__("functools"))
    check(f, X3)
    check(f, -X3)


def test_a_vectorized_local_and_a_reduce_in_a_loop():
    f = make("def f(x):\n    g = np.vectorize(sq)\n    total = 0.0\n    for i in range(2):\n"
             "        total = total + functools.reduce(operator.add, g(x * (i + 1)))\n"
             "    return total\n", sq=sq, operator=__import__("operator"),
             functools=__import__("functools"))
    check(f, X3)


REFUSED = [
    ("np.sum(x) if x[0] > 0 else functools.reduce(operator.mul, x)", "functools.reduce is"),
    ("np.sum(np.vectorize(two, excluded={1})(x, 2.0))", "excluded"),
    ("np.sum(np.vectorize(sq, signature='()->()')(x))", "signature"),
    ("np.sum(np.vectorize(sq, otypes=[int])(x))", "otypes other than float"),
    ("np.sum(np.piecewise(x, CONDS, [sq, np.cos]))", "conditions written out"),
    ("np.sum(grad(h)(x) ** 2)", "a derivative taken inside"),
    ("np.sum(dh(x) ** 2)", "a derivative taken inside"),
]


@pytest.mark.parametrize("expr, message", REFUSED)
def test_what_stays_refused_says_so_at_its_line(expr, message):
    from transpiler import TranspileError
    f = make(f"def f(x):\n    return {expr}\n", sq=sq, two=two, grad=grad,
             h=sq, dh=grad(sq), operator=__import__("operator"), CONDS=[X3 < 0, X3 >= 0],
             functools=__import__("functools"))
    with pytest.raises(TranspileError, match=message) as e:
        grad(f)(X3)
    assert e.value.lineno == 2


def test_a_view_as_another_dtype_has_no_gradient():
    f = make("def f(x):\n    return np.sum(x.view(np.int64) * 1.0) + np.sum(x)\n")
    with pytest.raises(TypeError, match="reinterprets the bytes"):
        grad(f)(X3)


# --- *args ------------------------------------------------------------------------------------

def test_star_args_say_what_is_not_supported():
    from transpiler import vjp
    f = make("def f(*args):\n    return sum(np.sum(a ** 2) for a in args)\n")
    for call in (lambda: grad(f)(X3, X3), lambda: vjp(f, X3, X3)):
        with pytest.raises(TypeError, match=r"in \*args, which cannot be differentiated yet"):
            call()
    g = make("def g(x, *args, scale=1.0):\n"
             "    return scale * (np.sum(x) + sum(np.sum(a ** 2) for a in args))\n")
    np.testing.assert_allclose(grad(g)(X3, X3, X3), np.ones(3))
    with pytest.raises(TypeError, match=r"in \*args"):  # position 1 is not 'scale'
        grad(g, wrt=1)(X3, X3, X3)
    np.testing.assert_allclose(grad(g, wrt="scale")(X3, X3, scale=2.0),
                               np.sum(X3) + np.sum(X3 ** 2))
    h = make("def h(a, b, *rest):\n    return np.sum(a * b) + sum(np.sum(r) for r in rest)\n")
    np.testing.assert_allclose(grad(h, wrt=(0, 1))(X3, 2 * X3, X3)[1], X3)


def test_the_readme_s_kinks_block_prints_what_it_says(capsys):
    run_readme_block("# Kinks", capsys)
