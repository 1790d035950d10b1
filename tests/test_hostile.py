"""Hostile and odd inputs: non-finite values, empty and 0-d arrays, a 10^7-element array's memory,
integer/boolean arguments, read-only and aliased arrays, identifiers that look like generated
ones, string constants, decorators, methods, and functions from __main__, exec, zip files.

Every case either gives the numbers NumPy (or a closed form, or finite differences) gives, or is
refused with a TranspileError naming the function, the file and what to do. Cases that do
neither today are kept as strict xfails with the reason.
"""

from __future__ import annotations

import ast
import functools
import gc
import importlib
import json
import linecache
import math
import os
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.util import make
from transpiler import TranspileError, check_grad, grad, value_and_grad

ROOT = Path(__file__).resolve().parent.parent


# --- NaN and inf ---------------------------------------------------------------------------------

NON_FINITE = np.array([1.5, np.nan, np.inf, -np.inf, 0.0, -2.0, 0.25])

# body of f(x) -> the hand-derived gradient, evaluated by NumPy on the same values
NAN_CASES = [
    ("np.sum(x * x + np.exp(x))", lambda x: 2.0 * x + np.exp(x)),
    ("np.sum(np.sin(x) * x)", lambda x: np.cos(x) * x + np.sin(x)),
    ("np.sum(np.sqrt(x))", lambda x: 0.5 / np.sqrt(x)),
    ("np.sum(np.log(x))", lambda x: 1.0 / x),
    ("np.sum(np.abs(x) * 3.0)", lambda x: 3.0 * np.sign(x)),
    ("np.sum(np.tanh(x))", lambda x: 1.0 - np.tanh(x) ** 2),
    ("np.sum(x ** 3.0)", lambda x: 3.0 * x ** 2),
    pytest.param("np.sum(np.where(x > 0.0, x * x, -x))",
                 lambda x: np.where(x > 0.0, 2.0 * x, -1.0),
                 marks=pytest.mark.xfail(strict=True, reason=(
                     "NaN from the branch np.where did not choose: at x = nan and x = -inf the "
                     "unchosen x * x gets gradient 0, and its rule multiplies 0 by 2x = nan or "
                     "-inf, giving nan where the chosen branch -x has gradient -1 (the same "
                     "trap as JAX's and autograd's where)"))),
    ("np.sum(np.where(x > 0.0, x, 2.0 * x))", lambda x: np.where(x > 0.0, 1.0, 2.0)),
    ("np.linalg.norm(x)", lambda x: x / np.linalg.norm(x)),
    ("np.nansum(x * x)", lambda x: 2.0 * x),
    # an all-NaN input: the result is NaN, and so is its gradient
    ("np.nanmax(x)", lambda x: np.where(np.isnan(np.nanmax(x)), np.nan,
                                        (x == np.nanmax(x)).astype(float))),
]


@pytest.mark.parametrize("body,expected", NAN_CASES)
def test_nan_and_inf_propagate_like_numpy(body, expected):
    f = make(f"def f(x):\n    return {body}\n")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = expected(NON_FINITE)
        for x in (NON_FINITE, NON_FINITE[[1]], NON_FINITE[[2]]):  # all entries, NaN alone, inf
            got = grad(f)(x)
            # NaN where NumPy gives NaN, the same infinities, the same finite values
            np.testing.assert_allclose(got, expected(x), rtol=1e-13, atol=0)
        got = grad(f)(NON_FINITE)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isposinf(got), np.isposinf(want))
    assert np.array_equal(np.isneginf(got), np.isneginf(want))


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf, 0.5])
def test_non_finite_python_floats(x):
    f = make("def f(x, w):\n    return x * x * w + math.exp(x)\n")
    with np.errstate(all="ignore"):
        gx, gw = grad(f, wrt=(0, 1))(x, 3.0)
        vx, (vgx,) = value_and_grad(f, wrt=(0,))(x, 3.0)
    assert type(gx) is float and type(gw) is float
    want = 6.0 * x + math.exp(x)
    assert gx == want or (math.isnan(gx) and math.isnan(want))
    assert gw == x * x or (math.isnan(gw) and math.isnan(x))
    assert vgx == gx or (math.isnan(vgx) and math.isnan(gx))
    primal = f(x, 3.0)
    assert vx == primal or (math.isnan(vx) and math.isnan(primal))


@pytest.mark.parametrize("x,want", [(math.nan, -1.0), (-math.inf, -1.0), (math.inf, math.inf),
                                     (2.0, 4.0)])
def test_non_finite_floats_take_one_branch(x, want):
    f = make("def f(x):\n    return x * x if x > 0.0 else -x\n")
    assert grad(f)(x) == want


def test_nan_in_a_non_differentiated_argument_reaches_only_its_entries():
    f = make("def f(x, w):\n    return np.sum(x * w) + np.sum(x * x)\n")
    x = np.array([1.0, 2.0, 3.0])
    w = np.array([0.5, np.nan, np.inf])
    got = grad(f)(x, w)
    np.testing.assert_array_equal(got, w + 2.0 * x)  # [2.5, nan, inf]


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_nan_reaches_the_gradient_of_max_and_min(reduction):
    f = make(f"def f(x):\n    return np.{reduction}(x) * 2.0\n")
    x = np.array([1.0, np.nan, 3.0, -1.0])
    assert np.isnan(f(x))
    got = grad(f)(x)
    onehot = 2.0 * (np.arange(x.size) == np.argmax(x) if reduction == "max"
                    else np.arange(x.size) == np.argmin(x))
    assert np.isnan(got).any() or np.array_equal(got, onehot), got


# --- empty and 0-d arrays ---------------------------------------------------------------------

W = np.arange(6.0).reshape(3, 2)
EMPTY_CASES = [
    ("np.sum(np.sin(x) * x)", (0,)),
    ("np.sum(np.sin(x) * x)", (0, 3)),
    ("np.sum(x @ W) + np.sum(x ** 2)", (0, 3)),
    ("np.sum(x.T @ x)", (0, 3)),
    ("np.sum(np.sum(x, axis=0) * 2.0)", (0, 3)),
    ("np.sum(np.concatenate([x, x]) ** 2)", (0, 3)),
    ("np.sum(x[1:] - x[:-1])", (0,)),
    ("np.sum(np.sum(x, axis=1) ** 2)", (0, 3)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("body,shape", EMPTY_CASES, ids=[f"{b} {s}" for b, s in EMPTY_CASES])
def test_empty_arrays(body, shape, dtype):
    f = make(f"def f(x):\n    return {body}\n", W=W)
    x = np.zeros(shape, dtype)
    value, g = value_and_grad(f)(x)
    assert value == f(x) == 0.0
    assert type(g) is np.ndarray and g.shape == shape and g.dtype == dtype
    assert g.flags.writeable


@pytest.mark.parametrize("body,shape", [
    ("np.sum(np.mean(x, axis=1))", (0, 3)),
    ("np.mean(x)", (0,)),
    ("np.var(x)", (0,)),
    ("np.sum(np.prod(x, axis=1))", (0, 3)),
    ("np.sum(np.nanprod(x, axis=0))", (3, 0)),
    ("np.sum(np.median(x, axis=1))", (0, 3)),
    ("np.sum(np.diff(x, axis=0))", (0, 3)),
    ("np.sum(np.diff(x, n=3, axis=1))", (2, 2)),  # more differences than elements
    ("np.sum(np.max(x, axis=0))", (3, 0)),
    ("np.sum(np.cumprod(x, axis=1))", (0, 3)),
    ("np.sum(np.sort(x, axis=0))", (0, 3)),
])
def test_reductions_of_empty_arrays(body, shape):
    f = make(f"def f(x):\n    return {body}\n")
    x = np.zeros(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        primal = f(x)
        value, g = value_and_grad(f)(x)
    assert value == primal or (np.isnan(value) and np.isnan(primal))
    assert type(g) is np.ndarray and g.shape == shape and g.dtype == np.float64


def test_max_of_an_empty_array_raises_numpys_own_error():
    f = make("def f(x):\n    return np.max(x)\n")
    with pytest.raises(ValueError) as primal:
        f(np.zeros(0))
    with pytest.raises(ValueError) as ours:
        grad(f)(np.zeros(0))
    assert str(ours.value) == str(primal.value)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zero_dimensional_arrays(dtype):
    f = make("def f(x, y):\n    return np.sum(np.sin(x) * y) + x * x\n")
    x, y = np.array(1.5, dtype), np.array(0.5, dtype)
    gx, gy = grad(f, wrt=(0, 1))(x, y)
    for g in (gx, gy):
        assert type(g) is np.ndarray and g.shape == () and g.dtype == dtype
        assert g.flags.writeable
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(gx, np.cos(1.5) * 0.5 + 3.0, rtol=rtol)
    np.testing.assert_allclose(gy, np.sin(1.5), rtol=rtol)
    # a NumPy scalar gets a NumPy scalar of its type
    g = grad(f)(dtype(1.5), 0.5)
    assert type(g) is dtype
    np.testing.assert_allclose(g, np.cos(1.5) * 0.5 + 3.0, rtol=rtol)
    check_grad(f, np.array(1.5), np.array(0.5), wrt=(0, 1))


# --- a large array ------------------------------------------------------------------------------

def _peak(fn, *args) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("body", [
    "np.sum(np.sin(x) * x)",  # 3.0x: sin(x) is released (del) once its last use is done
    "np.sum(np.tanh(x) * 2.0)",  # 3.0x: the seed times 2.0 stays a number until spread
    "np.sum(x * x)",  # 1.0x
    "np.sum(np.exp(x))",  # 2.0x
])
def test_peak_memory_of_a_large_gradient(body):
    x = np.random.default_rng(0).uniform(-1.0, 1.0, 10 ** 7)
    f = make(f"def f(x):\n    return {body}\n")
    g = grad(f)
    np.testing.assert_allclose(g(x[:5]), check_grad(f, x[:5]))  # compile outside the measure
    primal = _peak(f, x)
    gradient = _peak(g, x)
    ratio = gradient / primal
    print(f"{body}: primal peak {primal / 1e6:.1f} MB, gradient peak {gradient / 1e6:.1f} MB, "
          f"ratio {ratio:.2f}")
    assert ratio <= 3.05, f"gradient peak is {ratio:.2f}x the primal's"


# --- integer and boolean arguments ---------------------------------------------------------------

MIXED = """
def f(x, n, mask, idx, flag):
    y = x * n
    z = np.where(mask, y, 2.0 * x)
    w = z[idx]
    if flag:
        w = w * 3.0
    return np.sum(w * w) + np.sum(mask * x) + np.sum(n * x)
"""


def test_integer_and_boolean_arrays_as_non_differentiated_arguments():
    f = make(MIXED)
    x = np.linspace(0.5, 2.0, 5)
    n = np.arange(5)
    mask = np.array([True, False, True, False, True])
    idx = np.array([0, 2, 2, 4])
    for flag in (True, np.bool_(False), 1, 0):
        scale = 3.0 if flag else 1.0
        z_dx = np.where(mask, n, 2.0)  # d z_i / d x_i
        z = z_dx * x
        want = np.zeros(5)
        np.add.at(want, idx, 2.0 * scale ** 2 * z[idx] * z_dx[idx])
        want += mask + n
        got = check_grad(f, x, n, mask, idx, flag)
        np.testing.assert_allclose(got, want, rtol=1e-13)
        assert got.dtype == np.float64


@pytest.mark.parametrize("wrt,args,described", [
    ("n", (np.arange(5),), "an array of dtype int64"),
    ("n", (np.arange(5, dtype=np.uint8),), "an array of dtype uint8"),
    ("n", (3,), "of type int (3)"),
    ("mask", (), "an array of dtype bool"),
    ("idx", (), "an array of dtype int64"),
    ("flag", (), "of type bool (True)"),
    (1, (np.arange(5, dtype=np.int32),), "an array of dtype int32"),
])
def test_differentiating_an_integer_or_boolean_argument_is_a_type_error(wrt, args, described):
    f = make(MIXED)
    x, n = np.linspace(0.5, 2.0, 5), np.arange(5)
    mask, idx = np.array([True, False, True, False, True]), np.array([0, 2, 2, 4])
    call = [x, n, mask, idx, True]
    if args:
        call[1] = args[0]
    name = wrt if isinstance(wrt, str) else "n"
    with pytest.raises(TypeError) as info:
        grad(f, wrt=wrt)(*call)
    assert str(info.value) == (f"cannot differentiate with respect to '{name}': it is "
                               f"{described}; pass a float, a float array, a tuple, list or "
                               "dict of those, or an object holding them")
    with pytest.raises(TypeError, match=f"'{name}'"):  # also among several
        grad(f, wrt=(0, name))(*call)


# --- read-only arrays ----------------------------------------------------------------------------

def _read_only(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


def test_read_only_inputs_written_through_a_copy():
    f = make("""
def f(x, w):
    y = x.copy()
    y[0] = y[1] * w[0]
    y[1:3] = np.sin(y[1:3])
    y[-1] += 2.0 * x[0]
    z = np.copy(w)
    z *= x
    return np.sum(y * y) + np.sum(z)
""")
    x, w = _read_only(np.linspace(0.5, 2.0, 5), np.linspace(-1.0, 1.0, 5))
    before = (x.copy(), w.copy())
    value, (gx, gw) = value_and_grad(f, wrt=(0, 1))(x, w)
    assert value == f(x, w)
    check_grad(f, x, w, wrt=(0, 1))
    # closed form: y = [x1 w0, sin x1, sin x2, x3, x4 + 2 x0], z = w * x
    want_x = w.copy()
    want_x[0] += 2.0 * 2.0 * (x[4] + 2.0 * x[0])
    want_x[1] += 2.0 * x[1] * w[0] ** 2 + 2.0 * np.sin(x[1]) * np.cos(x[1])
    want_x[2] += 2.0 * np.sin(x[2]) * np.cos(x[2])
    want_x[3] += 2.0 * x[3]
    want_x[4] += 2.0 * (x[4] + 2.0 * x[0])
    want_w = x.copy()
    want_w[0] += 2.0 * x[1] ** 2 * w[0]
    np.testing.assert_allclose(gx, want_x, rtol=1e-13)
    np.testing.assert_allclose(gw, want_w, rtol=1e-13)
    for a, b in zip((x, w), before, strict=True):
        np.testing.assert_array_equal(a, b)
        assert not a.flags.writeable
    for g in (gx, gw):
        assert g.flags.writeable and not np.shares_memory(g, x) and not np.shares_memory(g, w)


@pytest.mark.parametrize("body,want", [
    ("x[0] = 3.0 * x[1]\n    return np.sum(x * x)",
     lambda x: np.array([0.0, 20.0 * x[1], 2.0 * x[2], 2.0 * x[3]])),
    ("y = x\n    y[0] = 3.0\n    return np.sum(y * y)",
     lambda x: np.array([0.0, 2.0 * x[1], 2.0 * x[2], 2.0 * x[3]])),
    ("x += 1.0\n    x[1:] *= 2.0\n    return np.sum(x * x)",
     lambda x: np.array([2.0 * (x[0] + 1.0), *(8.0 * (x[1:] + 1.0))])),
])
def test_read_only_inputs_written_in_place_by_the_function(body, want):
    """NumPy's primal would raise on these read-only arrays; the gradient works on a copy."""
    f = make(f"def f(x):\n    {body}\n")
    (x,) = _read_only(np.linspace(0.5, 2.0, 4))
    before = x.copy()
    got = grad(f)(x)
    np.testing.assert_allclose(got, want(before), rtol=1e-13)
    np.testing.assert_array_equal(x, before)
    assert got.flags.writeable and not np.shares_memory(got, x)
    with pytest.raises(ValueError, match="read-only"):
        f(x)


# --- arrays that alias each other ---------------------------------------------------------------

ALIAS = "def f(a, b):\n    return np.sum(a * np.sin(b)) + np.sum(a * a * b)\n"


def test_the_same_array_passed_twice():
    f = make(ALIAS)
    x = np.linspace(0.5, 2.0, 5)
    before = x.copy()
    ga, gb = grad(f, wrt=(0, 1))(x, x)
    np.testing.assert_allclose(ga, np.sin(x) + 2.0 * x * x, rtol=1e-14)
    np.testing.assert_allclose(gb, x * np.cos(x) + x * x, rtol=1e-14)
    assert not np.shares_memory(ga, gb)
    assert not np.shares_memory(ga, x) and not np.shares_memory(gb, x)
    np.testing.assert_array_equal(x, before)
    check_grad(f, x, x, wrt=(0, 1))


def test_overlapping_views_as_arguments():
    f = make(ALIAS)
    x = np.linspace(0.5, 2.0, 6)
    before = x.copy()
    a, b = x[1:], x[:-1]
    ga, gb = grad(f, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, np.sin(b) + 2.0 * a * b, rtol=1e-14)
    np.testing.assert_allclose(gb, a * np.cos(b) + a * a, rtol=1e-14)
    assert ga.shape == gb.shape == (5,)
    assert not np.shares_memory(ga, x) and not np.shares_memory(gb, x)
    np.testing.assert_array_equal(x, before)
    # a function that writes into copies of the views
    g = make("""
def g(a, b):
    c = a.copy()
    c[0] = b[1] * 2.0
    d = b.copy()
    d[1:] = d[1:] * a[:-1]
    return np.sum(c * d)
""")
    check_grad(g, x[1:], x[:-1], wrt=(0, 1))
    check_grad(g, x[::2], x[1::2], wrt=(0, 1))
    check_grad(g, x, x, wrt=(0, 1))
    np.testing.assert_array_equal(x, before)


def test_writing_into_an_argument_that_another_argument_aliases():
    """The write would show through the other argument in NumPy: refused at call time."""
    f = make("def f(a, b):\n    a[0] = 5.0 * b[0]\n    return np.sum(a * b)\n")
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="writes into its argument 'a', which shares memory "
                                         "with argument 'b'"):
        value_and_grad(f, wrt=(0, 1))(x, x)
    with pytest.raises(ValueError, match="shares memory"):
        grad(f)(x[:2], x[1:])  # overlapping views
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    check_grad(f, x, x.copy(), wrt=(0, 1))  # distinct arrays: fine
    check_grad(f, x[::2], x[1::2], wrt=(0, 1))  # one buffer, disjoint elements: fine


# --- identifiers that look like generated ones -------------------------------------------------

LOOKALIKES = """
def f(x, bx, b_t1, _stack):
    np = x * bx
    rt = numpy.sin(np)
    _t1 = numpy.cos(rt)
    _n = 0
    _res = 0.5
    _g = 1.0
    grad_f = 2.0
    d = _t1 * b_t1
    ans = d + _g
    sum = 0.0
    len = 3
    _tape = 1.0
    for i in range(len):
        sum = sum + ans * grad_f + _stack * i * _tape
        _n = _n + 1
    _t2 = sum / _n
    return numpy.sum(_t2 * _res + _t2 * x)
"""


def test_user_names_that_look_like_generated_ones():
    f = make(LOOKALIKES, numpy=np, rt="a global named rt", grad_f=None, bx=None)
    for args in [(0.3, 0.7, 1.1, 0.4), (np.array([0.3, 0.5]), 0.7, np.array([1.1, 0.2]), 0.4)]:
        got = check_grad(f, *args, wrt=(0, 1, 2, 3))
        x, bx, b1, st = (np.asarray(a) for a in args)
        # closed form: ans = cos(sin(x bx)) b1 + 1, sum = 3 (2 ans) + 3 st, t2 = sum / 3
        c = np.cos(np.sin(x * bx))
        dans = -np.sin(np.sin(x * bx)) * np.cos(x * bx)  # d ans / d (x bx), per b1
        t2 = (6.0 * (c * b1 + 1.0) + 3.0 * st) / 3.0
        dt2 = 0.5 + x  # d result / d t2
        want = (t2 + dt2 * 2.0 * b1 * dans * bx,
                np.sum(dt2 * 2.0 * b1 * dans * x),
                dt2 * 2.0 * c,
                np.sum(dt2))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    assert f.__globals__["rt"] == "a global named rt"


def test_helpers_and_locals_named_like_generated_ones():
    f = make("""
def helper(z, _res):
    _g = z * _res
    return _g * z

def f(x, _res, _g):
    helper_vjp = 2.0
    _t1 = helper(x, _res) * helper_vjp
    _stack = [x, x * _g]
    for _n in range(2):
        _stack.append(_t1 * _stack[_n])
    return np.sum(_stack[-1] + _res * _g)
""", name="f")
    for args in [(0.7, 1.3, -0.4), (np.array([0.7, 0.2]), 1.3, np.array([-0.4, 0.5]))]:
        got = check_grad(f, *args, wrt=(0, 1, 2))
        x, r, g = (np.asarray(a) for a in args)
        # result = 2 r x^2 * x g + r g = 2 r g x^3 + r g
        want = (6.0 * r * g * x ** 2, np.sum(2.0 * g * x ** 3 + g), 2.0 * r * x ** 3 + r)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_global_named_rt_is_the_users():
    f = make("""
def f(x):
    return np.sum(np.sin(x) * rt + _stack * x * x + rt * b_t1(x))

def b_t1(z):
    return np.exp(z) * _t1
""", name="f", rt=3.0, _stack=0.5, _t1=2.0)
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(grad(f)(x), 3.0 * np.cos(x) + x + 6.0 * np.exp(x), rtol=1e-14)
    f.__globals__["rt"] = 4.0  # module data is read live
    np.testing.assert_allclose(grad(f)(x), 4.0 * np.cos(x) + x + 8.0 * np.exp(x), rtol=1e-14)
    assert grad(f)(0.3) == pytest.approx(4.0 * math.cos(0.3) + 0.3 + 8.0 * math.exp(0.3),
                                         rel=1e-14)


SHADOWED = [
    ("local len, loop over a list", """
def f(x, y):
    len = 2.0
    s = 0.0
    for v in [x, y]:
        s = s + v * v * len
    return s
""", {}),
    ("local range, loop over a list", """
def f(x, y):
    range = 2.0
    s = 0.0
    for v in [x, y]:
        s = s + v * v * range
    return s
""", {}),
    ("local reversed, loop over range", """
def f(x, y):
    reversed = 2.0
    s = x
    for i in range(3):
        s = s * y + reversed
    return s
""", {}),
    ("global len, loop over a list", """
def f(x, y):
    s = 0.0
    for v in [x, y]:
        s = s + v * v * 2.0
    return s
""", {"len": lambda seq: 1}),
    ("from numpy import *, loop over zip", """
from numpy import *

def f(x, y):
    s = 0.0
    for a, b in zip([x, y], [y, x]):
        s = s + a * b * b
    return s
""", {}),
]


@pytest.mark.parametrize("source,globals_", [c[1:] for c in SHADOWED], ids=[c[0] for c in SHADOWED])
def test_builtins_shadowed_by_the_user_and_used_by_generated_loops(source, globals_):
    """The compiler's own len/range/min/reversed are the builtins, whatever the user's are."""
    f = make(source, name="f", **globals_)
    check_grad(f, 0.5, -1.5, wrt=(0, 1))
    check_grad(f, np.array(0.5), np.array(-1.5), wrt=(0, 1))


def test_shadowed_builtins_the_generated_code_does_not_need():
    f = make("""
def abs(v):
    return v * v

def max(a, b):
    return a + 2.0 * b

def f(x, y):
    float = 3.0
    sum = 0.0
    for i in range(2):
        sum = sum + abs(x) * float + abs(y) * i
    return sum + max(x, y)
""", name="f")
    gx, gy = check_grad(f, 0.5, -1.5, wrt=(0, 1))
    assert gx == pytest.approx(12.0 * 0.5 + 1.0, rel=1e-14)
    assert gy == pytest.approx(2.0 * -1.5 + 2.0, rel=1e-14)


def _alias_refusal(param: str) -> str:
    f = make(f"def f(x, {param}):\n    y = np.reshape({param}, (3,))\n    y[0] = 2.0 * x\n"
             f"    return np.sum({param} * x)\n")
    with pytest.raises(TranspileError) as info:
        grad(f)(0.7, np.ones(3))
    assert info.value.lineno == 3
    return str(info.value).split("\n", 1)[0].split(": ", 1)[1]


def test_alias_refusal_names_the_aliased_parameter():
    assert _alias_refusal("g") == ("this write into 'y' would also change 'g', which shares its "
                                   "memory and is used after it")


def test_alias_refusal_names_an_underscore_parameter():
    assert _alias_refusal("_g") == ("this write into 'y' would also change '_g', which shares "
                                    "its memory and is used after it")


# --- string constants --------------------------------------------------------------------------

STRINGS = '''
def f(x, verbose):
    p = {"w\\teight": x, 'it\\'s': 2.0 * x, "ünï{c}ode": x * x}
    s = p["w\\teight"] * p['it\\'s'] + p["ünï{c}ode"]
    if verbose:
        print(f"value={s!r:>10} {'quoted'} {{braces}} \\n", "tab\\t", 'b"q"', sep="|")
    label = f"{x:.3f}"
    msg = """triple
quoted"""
    t = (s +
         x * len("#not a comment"))
    return t * len(label) + len(msg) * x + len("""a
b""") * s
'''


def _strings(tree) -> list:
    """Every string constant and f-string format part, in order."""
    return sorted(repr(n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str))


def test_string_constants_and_f_strings_are_kept_exact(capsys):
    f = make(STRINGS)
    x = 0.7
    # s = 3 x^2, t = s + 14 x, len(label) = 5, len(msg) = 13, len("a\nb") = 3
    want = 5.0 * (6.0 * x + 14.0) + 13.0 + 3.0 * 6.0 * x
    for verbose in (False, True):
        got = grad(f)(x, verbose)
        assert got == pytest.approx(want, rel=1e-14)
        ours = capsys.readouterr().out
        f(x, verbose)
        assert ours == capsys.readouterr().out
    assert ours == 'value=1.4699999999999998 quoted {braces} \n|tab\t|b"q"\n'
    source = grad(f).source
    compile(source, "<generated>", "exec")
    original = ast.parse(textwrap.dedent(STRINGS))
    generated = ast.parse(source)
    want_strings = set(_strings(original))
    assert want_strings <= set(_strings(generated))
    assert "'ünï{c}ode'" in source and "\"it's\"" in source and "'w\\teight'" in source
    assert "{{braces}}" in source and "!r:>10" in source
    check_grad(f, x, False)


# --- decorators ----------------------------------------------------------------------------------

DECORATED = """
def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper

def plain(fn):
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper

def register(fn):
    REGISTRY.append(fn)
    return fn

@twice
def a(x):
    return x * x

@functools.lru_cache(maxsize=None)
def b(x):
    return x * x

@functools.cache
def c(x):
    return x * x

@plain
def e(x):
    return x * x

@register
def h(x):
    return x * x * x
"""


@pytest.mark.parametrize("name,line,decorator", [
    ("a", 16, "@twice"),
    ("b", 20, "@functools.lru_cache(maxsize=None)"),
    ("c", 24, "@functools.cache"),
])
def test_wrapping_decorators_are_refused_with_a_hint(name, line, decorator):
    a = make(DECORATED, name="a", functools=functools, REGISTRY=[])
    fn = a.__globals__[name]
    with pytest.raises(TranspileError) as info:
        grad(fn)
    err = info.value
    filename = a.__code__.co_filename
    assert (err.filename, err.lineno) == (filename, line)
    assert str(err) == (f"{filename}:{line}:1: {name} is wrapped by a decorator; its source is "
                        f"not what runs\n    {decorator}\n    ^\nhint: apply grad to the "
                        "undecorated function (or put @grad below the other decorator)")
    # what the hint says works
    assert grad(fn.__wrapped__)(3.0) == 6.0


def test_decorators_without_wraps_are_differentiated_as_what_runs():
    registry = []
    a = make(DECORATED, name="a", functools=functools, REGISTRY=registry)
    e, h = a.__globals__["e"], a.__globals__["h"]
    assert grad(e)(3.0) == 12.0  # the wrapper: 2 x^2
    assert grad(h)(3.0) == 27.0
    assert registry == [h]
    check_grad(e, 0.5)


def test_grad_below_another_decorator():
    twice = make("""
def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper
""", functools=functools)
    k = make("@twice\n@grad\ndef k(x):\n    return x * x * x\n", twice=twice, grad=grad)
    assert k(2.0) == 24.0


# --- methods -------------------------------------------------------------------------------------

MODEL = """
class Model:
    scale = 3.0

    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.w * np.sin(x))

    @staticmethod
    def cube(x):
        return np.sum(x ** 3)

    @classmethod
    def square(cls, x):
        return np.sum(cls.scale * x * x)
"""


def test_static_and_unbound_methods():
    Model = make(MODEL, name="Model")
    m = Model(np.array([1.0, 2.0]))
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(grad(Model.cube)(x), 3.0 * x ** 2, rtol=1e-14)
    np.testing.assert_allclose(grad(m.cube)(x), 3.0 * x ** 2, rtol=1e-14)
    np.testing.assert_allclose(grad(Model.loss, wrt=1)(m, x), m.w * np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(grad(Model.loss, wrt="x")(m, x), m.w * np.cos(x), rtol=1e-14)
    caller = make("def caller(x):\n    return Model.loss(m, x) + Model.cube(x)\n",
                  Model=Model, m=m)
    np.testing.assert_allclose(grad(caller)(x), m.w * np.cos(x) + 3.0 * x ** 2, rtol=1e-14)


@pytest.mark.parametrize("method", ["loss", "square"])
def test_bound_methods_work_or_the_hint_does(method):
    """grad(m.loss) differentiates the method with m passed first; m.loss(x) inside a
    differentiated function is a call of Model.loss(m, x)."""
    Model = make(MODEL, name="Model")
    m = Model(np.array([1.0, 2.0]))
    x = np.array([0.3, 0.4])
    want = m.w * np.cos(x) if method == "loss" else 6.0 * x
    bound = getattr(m, method)
    np.testing.assert_allclose(grad(bound)(x), want, rtol=1e-14)
    wrapper = make(f"def w(x):\n    return m.{method}(x)\n", m=m)
    np.testing.assert_allclose(grad(wrapper)(x), want, rtol=1e-14)


# --- __main__, exec, zip files, stale files ------------------------------------------------------

SCRIPT = """
import json
import numpy as np
from transpiler import grad

def f(x):
    return np.sum(np.sin(x) * x)

x = np.array([0.1, 0.2, 0.3])
print(json.dumps({"module": f.__module__, "grad": grad(f)(x).tolist(),
                  "first": grad(f).source.splitlines()[0]}))
"""


def _python(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def test_function_defined_in_main(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    run = _python(str(script), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    x = np.array([0.1, 0.2, 0.3])
    assert out["module"] == "__main__"
    assert out["first"] == "def grad_f(x):"
    np.testing.assert_allclose(out["grad"], np.cos(x) * x + np.sin(x), rtol=1e-14)


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13 keeps -c source")
def test_function_defined_in_main_without_a_file_is_refused(tmp_path):
    run = _python("-c", SCRIPT, cwd=tmp_path)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-2:]
    assert last == ["transpiler.errors.TranspileError: cannot read the source of f: could not "
                    "get source code",
                    "hint: define the function with 'def' in a file (or register its source in "
                    "linecache)"]
    assert 'File "<string>", line 6' in run.stderr


@pytest.mark.skipif(sys.version_info < (3, 13), reason="before 3.13, -c source is not kept")
def test_function_defined_in_python_dash_c_works_where_python_keeps_its_source(tmp_path):
    run = _python("-c", SCRIPT, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(out["grad"], np.cos(x) * x + np.sin(x), rtol=1e-12)
    assert out["first"] == "def grad_f(x):"


def test_function_defined_by_exec_of_source_in_linecache():
    source = ("import numpy as np\nif True:\n    def f(x):\n"
              "        return np.sum(np.tanh(x) * 2.0)\n")
    filename = "<hostile exec source>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        namespace: dict = {}
        exec(compile(source, filename, "exec"), namespace)
        x = np.array([0.1, -0.3])
        np.testing.assert_allclose(grad(namespace["f"])(x), 2.0 * (1.0 - np.tanh(x) ** 2),
                                   rtol=1e-14)
    finally:
        linecache.cache.pop(filename, None)


@pytest.mark.parametrize("filename", ["<never registered>", None])
def test_function_defined_by_exec_without_source_is_refused(filename):
    source = "import numpy as np\nif True:\n    def f(x):\n        return np.sum(x * x)\n"
    namespace: dict = {}
    exec(compile(source, filename, "exec") if filename else source, namespace)
    with pytest.raises(TranspileError) as info:
        grad(namespace["f"])(np.ones(2))
    err = info.value
    shown = filename or "<string>"
    assert (err.filename, err.lineno) == (shown, 3)
    assert str(err) == (f"{shown}:3:1: cannot read the source of f: could not get source code\n"
                        "hint: define the function with 'def' in a file (or register its source "
                        "in linecache)")


ZIPPED = """import numpy as np


def f(x):
    return np.sum(np.exp(x) * x)


def bad(x):
    try:
        y = x
    finally:
        return 2.0
    return y
"""


def test_function_imported_from_a_zip_file(tmp_path, monkeypatch):
    archive = tmp_path / "hostile_pkg.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("hostile_zipped_mod.py", ZIPPED)
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.delitem(sys.modules, "hostile_zipped_mod", raising=False)
    module = importlib.import_module("hostile_zipped_mod")
    try:
        assert type(module.__loader__).__name__ == "zipimporter"
        x = np.array([0.1, 0.5, -1.0])
        np.testing.assert_allclose(grad(module.f)(x), np.exp(x) * (1.0 + x), rtol=1e-14)
        check_grad(module.f, x)
        with pytest.raises(TranspileError) as info:
            grad(module.bad)(1.0)
        err = info.value
        path = os.path.join(str(archive), "hostile_zipped_mod.py")
        assert (err.filename, err.lineno) == (path, 12)
        assert str(err) == (f"{path}:12:9: 'return' inside 'finally' is not supported\n"
                            "    return 2.0\n    ^\nhint: let the 'finally' block end: it "
                            "runs however the 'try' is left")
    finally:
        sys.modules.pop("hostile_zipped_mod", None)


def test_source_file_edited_after_import(tmp_path, monkeypatch):
    """The source on disk no longer matches the code that runs: refused, never the gradient of
    the new text."""
    path = tmp_path / "hostile_stale_mod.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(3.0 * x * x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hostile_stale_mod", raising=False)
    module = importlib.import_module("hostile_stale_mod")
    try:
        path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(5.0 * x * x)\n")
        stamp = path.stat().st_mtime + 10
        os.utime(path, (stamp, stamp))
        x = np.array([0.5, 1.0])
        assert module.f(x) == 3.75  # the code that runs
        try:
            got = grad(module.f)(x)
        except TranspileError as err:
            assert "is not the code that runs" in str(err) and err.hint
            return
        np.testing.assert_allclose(got, 6.0 * x)
    finally:
        sys.modules.pop("hostile_stale_mod", None)
        linecache.checkcache(str(path))
