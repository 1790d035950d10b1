"""Functions ported from another autodiff library's test suite, as a new user writes them: each
was silently wrong, crashed or was refused. Each is checked against central finite differences
in reverse mode and against reverse mode in forward mode, on floats and on arrays."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.util import make
from transpiler import grad, jvp


def _fd(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e if x.ndim else float(x + e)) - f(x - e if x.ndim else float(x - e))) \
            / (2 * h)
    return out if x.ndim else float(out)


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
