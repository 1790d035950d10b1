"""Forward mode (``jvp``, ``forward``) and forward-over-reverse (``hvp``, ``hessian``).

1. The whole corpus of tests/test_gradients.py: for a random tangent ``v``,
   ``<grad f(x), v> == jvp(f, x, v)[1]`` (reverse against forward, tight tolerance) and
   ``jvp`` against the central difference along ``v``, optimized and not.
2. Each construct in a small function of its own, against central differences.
3. The API: ``forward``'s source and tangent names, the decorator forms, ``jvp``'s errors,
   refusals, and one golden generated source.
4. Hessians against central differences of ``grad``, ``hvp`` against ``hessian``, and second
   derivatives of scalar functions against their closed forms.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from tests.corpus.calls import forwards_own_varargs
from tests.test_gradients import CORPUS
from tests.util import make
from transpiler import (
    NoRuleError,
    TranspileError,
    forward,
    grad,
    hessian,
    hvp,
    jvp,
)
from transpiler.checking import get_leaf, leaves, replace_leaf

# --- helpers ---------------------------------------------------------------------------------


def _random_like(value, rng):
    """A random tangent with the structure, shape and floating dtype of ``value`` (tuples,
    lists, dicts and objects nest; an object's other fields are copied)."""
    out = value
    for path, leaf in leaves(value):
        if np.ndim(leaf) == 0 and not isinstance(leaf, np.ndarray):
            new = float(rng.uniform(-1.0, 1.0))
        else:
            dtype = leaf.dtype if leaf.dtype.kind == "f" else float
            new = rng.uniform(-1.0, 1.0, np.shape(leaf)).astype(dtype)
        out = replace_leaf(out, path, new)
    return out


def _tangents(args, wrt, seed=0) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(_random_like(a, rng) if i in wrt else None for i, a in enumerate(args))


def _shift(value, tangent, h):
    if tangent is None:
        return value
    for path, leaf in leaves(value):
        value = replace_leaf(value, path, leaf + h * get_leaf(tangent, path))
    return value


def _flat(value) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for _, v in leaves(value)]
                          or [np.zeros(0)])


def _inner(a, b) -> float:
    """``<a, b>`` over two values of the same structure."""
    return float(_flat(a) @ _flat(b))


def _numeric_jvp(f, args, tangents, h=1e-6) -> np.ndarray:
    plus = f(*(_shift(a, t, h) for a, t in zip(args, tangents, strict=True)))
    minus = f(*(_shift(a, t, -h) for a, t in zip(args, tangents, strict=True)))
    return (_flat(plus) - _flat(minus)) / (2 * h)


def _same_structure(tangent, value) -> None:
    """A tangent is shaped like its value: same containers, shapes, floating dtype."""
    if isinstance(value, (tuple, list, dict)):
        assert type(tangent) is type(value), (type(tangent), type(value))
        assert len(tangent) == len(value)
        pairs = ((tangent[k], value[k]) for k in value) if isinstance(value, dict) \
            else zip(tangent, value, strict=True)
        for t, v in pairs:
            _same_structure(t, v)
    elif isinstance(value, np.ndarray):
        assert isinstance(tangent, np.ndarray), f"tangent {type(tangent).__name__} of an array"
        assert tangent.shape == value.shape, (tangent.shape, value.shape)
        if value.dtype.kind == "f":
            assert tangent.dtype == value.dtype, (tangent.dtype, value.dtype)
    else:
        assert np.ndim(tangent) == 0, f"tangent of shape {np.shape(tangent)} for a scalar"


def check_jvp(f, args, tangents, *, optimize=True, rtol=1e-6, atol=1e-7):
    """jvp's value is f's, its tangent is shaped like the value and matches central
    differences along the tangents; returns the tangent."""
    value, tangent = jvp(f, args, tangents, optimize=optimize)
    expected_value = f(*args)
    np.testing.assert_allclose(_flat(value), _flat(expected_value), rtol=1e-12, atol=1e-12)
    _same_structure(tangent, expected_value)
    expected = _numeric_jvp(f, args, tangents)
    np.testing.assert_allclose(_flat(tangent), expected, rtol=rtol,
                               atol=atol * (1.0 + np.abs(expected).max(initial=0.0)))
    return tangent


# --- 1. the corpus, forward against reverse and finite differences ---------------------------

def _corpus_jvp(name, optimize):
    fn, args, wrt = CORPUS[name]
    tangents = _tangents(args, wrt, seed=len(name))
    if fn is forwards_own_varargs:  # jvp takes no *args (see test_jvp_of_a_varargs_function)
        assert wrt == (0,)
        value, tangent = forward(fn, wrt=0, optimize=optimize)(*args, dx=tangents[0])
    else:
        value, tangent = jvp(fn, args, tangents, optimize=optimize)
    return fn, args, wrt, tangents, value, tangent


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_forward_matches_reverse_and_finite_differences(name, optimize):
    fn, args, wrt, tangents, value, tangent = _corpus_jvp(name, optimize)
    assert np.allclose(value, fn(*args), rtol=1e-12, atol=1e-12)
    assert np.ndim(tangent) == 0
    # dot-product test: <grad f(x), v> == J v
    grads = grad(fn, wrt=wrt, optimize=optimize)(*args)
    reverse = sum(_inner(g, tangents[w]) for g, w in zip(grads, wrt, strict=True))
    assert float(tangent) == pytest.approx(reverse, rel=1e-10, abs=1e-12)
    # central differences along v
    numeric = _numeric_jvp(fn, args, tangents)[0]
    assert float(tangent) == pytest.approx(numeric, rel=1e-5, abs=1e-6 * (1.0 + abs(numeric)))


def test_jvp_of_a_varargs_function():
    x = np.array([0.2, 0.4])
    v = np.array([1.0, -0.5])
    _, tangent = jvp(forwards_own_varargs, (x, 1.5, 2.0, 0.5), (v, None, None, None))
    assert tangent == pytest.approx(np.sum(v * 1.5) + 2.5 * np.sum(v))


# --- 2. constructs, one small function each ---------------------------------------------------

CONSTRUCTS: dict[str, tuple] = {}  # name -> (function, args, wrt)


def construct(name, args, wrt=(0,), **globals_):
    def register(source):
        CONSTRUCTS[name] = (make(source, **globals_), args, wrt)
        return source
    return register


_V3 = np.array([0.3, -0.7, 1.1])
_M23 = np.array([[0.2, -0.4, 0.9], [1.3, 0.5, -0.8]])

for _x in (-1.5, 0.2, 2.0):
    construct(f"if_elif_else[{_x}]", (_x, 0.7), (0, 1))("""
        def f(x, y):
            if x < -1.0:
                z = x * y
            elif x < 1.0:
                z = np.sin(x) * y * y
            else:
                z = np.exp(y) / x
            return z * x
    """)

for _x in (0.4, -0.4):
    construct(f"conditional_expression[{_x}]", (_x, _V3), (0, 1))("""
        def f(x, w):
            a = x * w if x > 0.0 else np.cos(w) - x
            return np.sum(a * a) + (x if x > 0.0 else x * x)
    """)

construct("for_range_step", (0.8,))("""
    def f(x):
        acc = 0.0
        for k in range(1, 10, 3):
            acc = acc + x ** k / k
        for k in range(6, 0, -2):
            acc = acc * x + k
        return acc
""")

construct("for_over_array_rows", (_M23, _V3), (0, 1))("""
    def f(x, w):
        total = 0.0
        for row in x:
            total = total + np.sum(np.tanh(row * w))
        return total
""")

construct("zip_enumerate_reversed", (_V3, _V3[::-1] * 2.0), (0, 1))("""
    def f(xs, ys):
        acc = 0.0
        for i, v in enumerate(xs):
            acc = acc + v * (i + 1)
        for a, b in zip(xs, ys):
            acc = acc + a * b
        for v in reversed(ys):
            acc = acc * 0.5 + math.sin(v)
        return acc
""")

construct("while_newton_cube_root", (5.0,))("""
    def f(a):
        x = a
        while abs(x * x * x - a) > 1e-13 * a:
            x = x - (x * x * x - a) / (3.0 * x * x)
        return x
""")

for _x in (0.3, 0.9, -0.6):
    construct(f"break_continue_return_in_nested_loops_in_if[{_x}]", (_x,))("""
        def f(x):
            y = x
            if x > 0.0:
                for i in range(4):
                    if i == 1:
                        continue
                    for j in range(3):
                        y = y * 1.2 + math.sin(y)
                        if y > 6.0:
                            return y * x
                        if y > 2.5:
                            break
            else:
                y = y * y
            return y + x
    """)

for _x in (0.5, 2.0):
    construct(f"for_else[{_x}]", (_x,))("""
        def f(x):
            y = x
            for i in range(3):
                y = y * 1.5
                if y > 5.0:
                    break
            else:
                y = np.sin(y)
            return y * x
    """)

construct("element_writes", (_V3, 0.6), (0, 1))("""
    def f(x, s):
        y = np.zeros(5)
        y[0] = x[1] * s
        y[1:4] = np.sin(x) * s
        y[y > 0.1] = y[y > 0.1] * 2.0
        i = 0
        while i < 5:
            y[i] += x[i % 3] * s * i
            i = i + 1
        return np.sum(y * y)
""")

construct("tuple_list_dict_arguments_and_results", (
    (_V3, 0.4), [0.5, _V3 * 2.0], {"w": _V3[:2], "b": 0.3}), (0, 1, 2))("""
    def f(pair, items, params):
        a, b = pair
        first = items[0] * np.sum(a)
        second = items[1] * params["b"] + b
        out = {"w": params["w"] * first, "s": np.sum(second * second)}
        return (a * b, [first, second]), out
""")

construct("list_append_and_comprehension_into_sum", (_V3, 0.8), (0, 1))("""
    def f(x, w):
        terms = []
        for k in range(3):
            terms.append(np.sum(np.sin(x * k)) * w)
        squares = [v * v * w for v in x]
        return sum(terms) + sum(squares) + sum(np.cos(v) for v in x)
""")

construct("helpers_same_module_keywords_defaults_tuple_returns", (_V3, 0.7), (0, 1))("""
    def scaled(a, b, scale=2.0):
        return np.sin(a) * b * scale

    def step(x, v, dt=0.1):
        return x + dt * v, v - dt * x

    def f(x, w):
        z = scaled(x, w) + scaled(x, w, scale=0.5)
        p, q = step(x, z, dt=0.2)
        r, s = step(p, q)
        return np.sum(r * s)
""")

construct("closure_and_lambda", (0.6, 1.3), (0, 1))("""
    def make_spring(k):
        def spring(x):
            return 0.5 * k * x * x
        return spring

    spring = make_spring(3.0)

    def f(x, c):
        damp = lambda v, k=0.3: k * c * v * v  # noqa: E731
        def inner(u, scale=2.0):
            return np.tanh(u * c) * scale
        return spring(x) + damp(x) + damp(x, k=0.1) + inner(x)
""")


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_nested_function_default_reading_a_variable_is_refused_at_its_line(mode):
    f = make("""
        def f(x, c):
            damp = lambda v, k=c: k * v * v  # noqa: E731
            return damp(x)
    """)
    with pytest.raises(TranspileError, match="reads 'c'; a function defined inside") as info:
        if mode == "forward":
            jvp(f, (0.6, 1.3), (1.0, None))
        else:
            grad(f)(0.6, 1.3)
    assert info.value.lineno == 2 and "read 'c' in the body" in info.value.hint

construct("recursion", (0.8, 4), (0,))("""
    def power(x, n):
        if n == 0:
            return 1.0
        return x * power(x, n - 1)

    def f(x, n):
        return power(x, n) + math.sin(x)
""")

construct("varargs_forwarding", (_V3, 0.7), (0, 1))("""
    def weighted(x, *weights, power=2.0):
        total = 0.0
        for w in weights:
            total = total + w * np.sum(x ** power)
        return total

    def forward_all(*args, **kwargs):
        return weighted(*args, **kwargs)

    def f(x, w):
        return weighted(x, w, 0.5, power=3.0) + forward_all(x, w, w * w)
""")

construct("helper_called_many_times_in_a_loop", (0.9, 0.3), (0, 1))("""
    def euler(x, v, dt):
        return x + dt * v, v - dt * math.sin(x)

    def f(x0, v0):
        x, v = x0, v0
        for step in range(200):
            x, v = euler(x, v, 0.01)
        return x * v
""")

construct("array_methods", (np.arange(6.0).reshape(2, 3) * 0.3 - 0.5,))("""
    def f(x):
        a = x.sum(axis=0)
        b = x.T @ a[:2]
        c = x.reshape(3, 2).reshape(-1)
        return np.sum(a * b) + np.sum(np.sin(c)) + x.mean() * x.max()
""")

construct("non_differentiable_values", (np.array([0.3, 1.7, -0.4, 2.6]),))("""
    def f(x):
        count = 0
        total = 0.0
        for i in range(len(x)):
            if x[i] > 0.0:
                count = count + 1
            total = total + np.floor(x[i]) * x[i]
        k = np.argmax(x)
        return total * count + x[k] * len(x) + np.sum(np.floor(x) * x)
""")

construct("integer_argument_held_fixed", (_V3, 3, 0.5), (0, 2))("""
    def f(x, n, s):
        y = x
        for i in range(n):
            y = np.tanh(y * s + i)
        return np.sum(y) * n
""")


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_construct_matches_finite_differences(name):
    f, args, wrt = CONSTRUCTS[name]
    tangents = _tangents(args, wrt, seed=len(name))
    tangent = check_jvp(f, args, tangents, rtol=1e-6, atol=1e-7)
    value = f(*args)
    if not isinstance(value, (tuple, list, dict)) and np.ndim(value) == 0:
        grads = grad(f, wrt=wrt)(*args)  # forward == reverse, too
        reverse = sum(_inner(g, tangents[w]) for g, w in zip(grads, wrt, strict=True))
        assert float(tangent) == pytest.approx(reverse, rel=1e-10, abs=1e-12)


def test_container_results_have_container_tangents():
    f, args, wrt = CONSTRUCTS["tuple_list_dict_arguments_and_results"]
    value, tangent = jvp(f, args, _tangents(args, wrt))
    (t_ab, t_list), t_out = tangent
    assert isinstance(tangent, tuple) and isinstance(t_list, list) and isinstance(t_out, dict)
    assert t_ab.shape == (3,) and t_list[1].shape == (3,) and set(t_out) == {"w", "s"}


def test_a_tuple_result_has_a_tuple_tangent():
    f = make("""
        def f(x, y):
            return x * y, np.sum(np.sin(x)), 2.0
    """)
    x, y = np.array([0.5, -1.0]), 3.0
    vx, vy = np.array([1.0, 2.0]), 0.5
    value, tangent = jvp(f, (x, y), (vx, vy))
    assert isinstance(tangent, tuple) and len(tangent) == 3
    np.testing.assert_allclose(tangent[0], vx * y + x * vy)
    assert tangent[1] == pytest.approx(np.sum(np.cos(x) * vx))
    assert tangent[2] == 0.0
    check_jvp(f, (x, y), (vx, vy))


def test_only_fixed_arguments_change_give_a_zero_tangent():
    f = make("""
        def f(x, y):
            return np.sin(x) * y
    """)
    value, tangent = jvp(f, (_V3, 2.0), (None, 1.0))
    np.testing.assert_allclose(tangent, np.sin(_V3))
    value, tangent = jvp(f, (_V3, 2.0), (None, None))
    np.testing.assert_array_equal(tangent, np.zeros(3))
    assert tangent.shape == (3,)


def test_float32_inputs_keep_float32_tangents():
    f = make("""
        def f(x, w):
            y = np.tanh(x * w)
            return y, np.sum(y * y)
    """)
    x = np.array([0.1, 0.5, -0.3], dtype=np.float32)
    w = np.array([1.5, -0.2, 0.7], dtype=np.float32)
    value, (ty, ts) = jvp(f, (x, w), (np.ones(3, np.float32), None))
    assert value[0].dtype == np.float32
    assert ty.dtype == np.float32
    assert np.asarray(ts).dtype == np.float32
    np.testing.assert_allclose(ty, w * (1.0 - np.tanh(x * w) ** 2), rtol=1e-5)


def test_arguments_and_tangents_are_never_mutated():
    f = make("""
        def f(x, w):
            x[0] = x[1] * w[0]
            w += x
            x *= 2.0
            return np.sum(x * w)
    """)
    x, w = np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.2, 0.1])
    vx, vw = np.array([1.0, 0.0, -1.0]), np.array([0.5, 0.5, 0.5])
    saved = [a.copy() for a in (x, w, vx, vw)]
    expected = f(x.copy(), w.copy())
    value, tangent = jvp(f, (x, w), (vx, vw))
    for before, after in zip(saved, (x, w, vx, vw), strict=True):
        np.testing.assert_array_equal(before, after)
    assert value == pytest.approx(expected)
    numeric = _numeric_jvp(lambda a, b: f(a.copy(), b.copy()), (x, w), (vx, vw))[0]
    assert tangent == pytest.approx(numeric, rel=1e-6)


# --- 3. the API ----------------------------------------------------------------------------

SIMPLE = make("""
    def f(x, y):
        return x * y + np.sin(x)
""")


def test_forward_source_and_tangent_names():
    ff = forward(SIMPLE)
    assert "def jvp_f(" in ff.source
    assert "*, dx)" in ff.source
    assert ff.tangent_names == {"x": "dx"}
    value, tangent = ff(1.0, 2.0, dx=1.0)
    assert value == pytest.approx(2.0 + math.sin(1.0))
    assert tangent == pytest.approx(2.0 + math.cos(1.0))
    both = forward(SIMPLE, wrt=(0, 1))
    assert both.tangent_names == {"x": "dx", "y": "dy"}
    assert "*, dx, dy)" in both.source
    assert both(1.0, 2.0, dx=0.0, dy=1.0)[1] == pytest.approx(1.0)
    assert forward(SIMPLE, wrt="y").tangent_names == {"y": "dy"}


def test_forward_unoptimized_agrees():
    f, args, wrt = CONSTRUCTS["element_writes"]
    tangents = _tangents(args, wrt)
    a = jvp(f, args, tangents, optimize=True)
    b = jvp(f, args, tangents, optimize=False)
    assert a[0] == pytest.approx(b[0], rel=1e-14)
    assert a[1] == pytest.approx(b[1], rel=1e-12)
    assert forward(f, optimize=False).source.startswith("def jvp_f(")


def test_decorator_forms():
    @forward
    def g(x, y):
        return x * y * y

    @forward(wrt=(0, 1))
    def h(x, y):
        return x * y * y

    assert g.tangent_names == {"x": "dx"}
    assert g(2.0, 3.0, dx=1.0) == pytest.approx((18.0, 9.0))
    assert h.tangent_names == {"x": "dx", "y": "dy"}
    assert h(2.0, 3.0, dx=1.0, dy=1.0) == pytest.approx((18.0, 9.0 + 12.0))


def test_jvp_wrong_number_of_tangents():
    with pytest.raises(ValueError, match="2 arguments but 1 tangents"):
        jvp(SIMPLE, (1.0, 2.0), (1.0,))


def test_jvp_tangent_of_the_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        jvp(SIMPLE, (np.ones(3), 2.0), (np.ones(2), None))
    with pytest.raises(ValueError, match="structure"):
        jvp(make("def f(p):\n    return p[0] * p[1]\n"), ((1.0, 2.0),), ((1.0, 2.0, 3.0),))


def test_jvp_tangent_for_an_int_argument():
    f, args, _ = CONSTRUCTS["integer_argument_held_fixed"]
    with pytest.raises(TypeError, match="'n' is int"):
        jvp(f, args, (np.ones(3), 1, 0.0))


@pytest.mark.parametrize("statement, message", [
    ("try:\n        y = np.sin(y)\n        y = y * 2.0\n    except ValueError:\n        y = y",
     "a 'try' of several statements"),
    ("with np.errstate(all=str(y)):\n        y = np.sin(y)", "context manager built from "
     "differentiated values"),
    ("y.sort()", "discarded"),
    ("y.shape = (3,)", "assignment to an attribute"),
], ids=["try", "with", "discarded_call", "setattr"])
def test_unsupported_constructs_name_their_line(statement, message):
    f = make(f"def f(x):\n    y = x * 2.0\n    {statement}\n    return np.sum(y)\n")
    with pytest.raises(TranspileError, match=message) as info:
        jvp(f, (_V3,), (_V3,))
    assert info.value.lineno == 3
    assert f"{f.__code__.co_filename}:3:" in str(info.value)


def test_a_call_without_tangent_rule_raises_no_rule_error_with_a_hint():
    opaque = np.frompyfunc(lambda v: v * 2.0, 1, 1)  # (np.vectorize's functions differentiate)
    f = make("def f(x):\n    y = opaque(x)\n    return np.sum(y)\n", opaque=opaque)
    with pytest.raises(NoRuleError, match="no tangent") as info:
        jvp(f, (_V3,), (_V3,))
    assert "@tangent(opaque)" in info.value.hint
    assert info.value.lineno == 2


GOLDEN = make("""
    def f(x, n):
        s = 0.0
        for i in range(n):
            if x > 0.5:
                s = s + np.sin(x) * i
            else:
                s = s * x
        return s
""")


def test_golden_source_of_a_loop_with_a_branch():
    # Still redundant: the phi copies s_4/ds_4 then s_1/ds_1 (as in the primal, from SSA).
    assert forward(GOLDEN).source == textwrap.dedent("""
        def jvp_f(x, n, *, dx):
            _t1 = range(n)
            s_1 = 0.0
            ds_1 = 0.0
            for i in _t1:
                if x > 0.5:
                    _t3 = np.sin(x)
                    d_t3 = dx * np.cos(x)
                    _t4 = _t3 * i
                    d_t4 = d_t3 * i
                    s_2 = s_1 + _t4
                    ds_2 = ds_1 + d_t4
                    s_4 = s_2
                    ds_4 = ds_2
                else:
                    s_3 = s_1 * x
                    ds_3 = ds_1 * x + s_1 * dx
                    s_4 = s_3
                    ds_4 = ds_3
                s_1 = s_4
                ds_1 = ds_4
            return s_1, rt.tangent_like(ds_1, s_1)
    """).strip()
    for x in (0.3, 0.7):
        value, tangent = forward(GOLDEN)(x, 3, dx=1.0)
        assert tangent == pytest.approx(grad(GOLDEN)(x, 3), rel=1e-12)


# --- 4. Hessians ----------------------------------------------------------------------------

_X2 = np.array([0.3, -0.6])
_W32 = np.array([[0.5, -0.2], [0.1, 0.8], [-0.7, 0.4]])

HESSIAN_CASES = {
    "sin_times_x": (make("def f(x):\n    return np.sum(np.sin(x) * x) + np.dot(x, x) ** 2\n"),
                    (_V3,)),
    "rosenbrock": (make("""
        def f(x):
            return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    """), (np.array([0.5, 0.8, 1.2, -0.3]),)),
    "for_loop": (make("""
        def f(x):
            s = 0.0
            for i in range(3):
                s = s + np.sum(np.sin(x * i)) * x[0]
            return s
    """), (_X2,)),
    "while_loop": (make("""
        def f(x):
            y = x
            while np.sum(y * y) < 10.0:
                y = y * 1.5 + np.sin(y)
            return np.sum(y * y * y)
    """), (_X2,)),
    "branch": (make("""
        def f(x):
            s = np.sum(x * x)
            if s > 1.0:
                r = np.sqrt(s) * np.sum(x)
            else:
                r = s * s + x[0] * x[1] * x[2]
            return r
    """), (_V3,)),
    "helper_call": (make("""
        def softplus(u):
            return np.log(1.0 + np.exp(u))

        def f(x, w):
            return np.sum(softplus(x * w)) + softplus(np.sum(x)) * w
    """), (_V3, 0.7)),
    "mlp_loss_wrt_matrix": (make("""
        def f(W, x, y):
            h = np.tanh(x @ W)
            pred = h @ np.array([0.7, -1.2])
            return np.mean((pred - y) ** 2)
    """), (_W32, _M23.T @ _M23[:, :3], np.array([0.3, -0.1, 0.5]))),
    "tuple_state_in_loop": (make("""
        def f(p):
            x, v = p[0], p[1]
            for step in range(20):
                x, v = x + 0.05 * v, v - 0.05 * np.sin(x)
            return x * x * v + v
    """), (np.array([0.8, 0.1]),)),
    "matrix_vector": (make("""
        def f(x, W):
            y = np.tanh(W @ x)
            return np.sum(y * y) + np.sum(np.cos(x)) * np.sum(y)
    """), (_X2, _W32)),
    "softplus_loss": (make("""
        def f(w, x):
            z = x @ w
            return np.sum(np.log(1.0 + np.exp(-z)) + 0.1 * w[0] * z)
    """), (_V3[:2] * 0.5, _M23.T)),
}

HESSIAN_MORE = [  # the runtime helpers of max, prod and var; element writes in a loop
    pytest.param(make("""
        def f(x):
            m = np.max(x)
            return m + np.log(np.sum(np.exp(x - m)))
    """), (_V3,), id="logsumexp_max"),
    pytest.param(make("def f(x):\n    return np.prod(x) * np.sum(x)\n"), (_V3,), id="prod"),
    pytest.param(make("def f(x):\n    return np.var(x * x)\n"), (_V3,), id="var"),
    pytest.param(make("""
        def f(x):
            y = np.zeros(3)
            for i in range(3):
                y[i] = x[i]
            return np.sum(y * y * y)
    """), (_V3,), id="element_write_in_loop"),
]


def _fd_hessian(f, args):
    g = grad(f)
    x = np.asarray(args[0], dtype=float)
    eps = 1e-6
    rows = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        plus = g(x + e, *args[1:])
        minus = g(x - e, *args[1:])
        rows.append((np.asarray(plus) - np.asarray(minus)) / (2 * eps))
    return np.stack(rows).reshape(x.shape + x.shape)


@pytest.mark.parametrize("name", sorted(HESSIAN_CASES))
def test_hessian_matches_finite_differences_of_grad(name):
    check_hessian(*HESSIAN_CASES[name], seed=len(name))


@pytest.mark.parametrize("f, args", HESSIAN_MORE)
def test_hessian_of_reductions_and_writes(f, args):
    check_hessian(f, args)


def check_hessian(f, args, seed=0):
    """hessian == central differences of grad, symmetric, and hvp == hessian @ v."""
    H = hessian(f)(*args)
    shape = np.shape(args[0])
    assert np.shape(H) == shape + shape
    fd = _fd_hessian(f, args)
    scale = 1.0 + np.abs(fd).max()
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-7 * scale)
    n = int(np.prod(shape))
    flat = np.reshape(H, (n, n))
    np.testing.assert_allclose(flat, flat.T, rtol=1e-10, atol=1e-12 * scale)
    v = np.random.default_rng(seed).uniform(-1.0, 1.0, shape)
    np.testing.assert_allclose(np.ravel(hvp(f)(*args, v)), flat @ np.ravel(v),
                               rtol=1e-10, atol=1e-12 * scale)


SECOND_DERIVATIVES = {
    "math.sin(x)": lambda x: -math.sin(x),
    "math.exp(x) * x": lambda x: math.exp(x) * (x + 2.0),
    "x ** 3": lambda x: 6.0 * x,
    "math.log(x)": lambda x: -1.0 / (x * x),
    "math.tanh(x)": lambda x: -2.0 * math.tanh(x) * (1.0 - math.tanh(x) ** 2),
    "np.sqrt(x) * np.cos(x)": lambda x: (-0.25 * x ** -1.5 * math.cos(x)
                                         - x ** -0.5 * math.sin(x)
                                         - math.sqrt(x) * math.cos(x)),
}


@pytest.mark.parametrize("expr", sorted(SECOND_DERIVATIVES))
def test_hessian_of_a_scalar_function_is_its_second_derivative(expr):
    f = make(f"def f(x):\n    return {expr}\n")
    for x in (0.4, 1.3):
        assert float(hessian(f)(x)) == pytest.approx(SECOND_DERIVATIVES[expr](x), rel=1e-12)


@pytest.mark.parametrize("expr", ["math.sin(x)", "x ** 3"])
def test_grad_of_grad_is_the_second_derivative(expr):
    f = make(f"def f(x):\n    return {expr}\n")
    assert grad(grad(f))(0.7) == pytest.approx(SECOND_DERIVATIVES[expr](0.7), rel=1e-12)


def test_an_error_in_forward_mode_names_the_users_line():
    f = make("def f(a, x):\n    y = a @ x\n    z = np.linalg.solve(a, y)\n    return np.sum(z)\n")
    with pytest.raises(np.linalg.LinAlgError) as info:
        jvp(f, (np.zeros((2, 2)), np.ones(2)), (np.ones((2, 2)), None))
    note = info.value.__notes__[-1]
    assert note.startswith(f"in {f.__code__.co_filename}:3 or its tangent (forward mode): ")
    assert note.endswith("z = np.linalg.solve(a, y)")
