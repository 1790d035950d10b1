"""Differentiated values in the index of an object that is not an array: ``np.r_`` and ``np.c_``
join their items (a rule), every other such object (``np.s_``, ``np.mgrid``, a user's
``__getitem__``) is refused at its line. The walk over NumPy's public non-callable attributes
checks that none of them gives a wrong number."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.util import central_differences as _fd
from tests.util import make
from transpiler import TranspileError, grad, jvp

W = np.arange(1.0, 7.0)
X3 = np.array([1.0, 2.0, 3.0])


def _check_both_modes(f, x):
    """Reverse mode against central differences, and forward mode against reverse mode."""
    g = grad(f)(x)
    np.testing.assert_allclose(g, _fd(f, x), rtol=1e-6, atol=1e-8)
    v = np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
    _, t = jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, np.sum(g * v), rtol=1e-10, atol=1e-12)
    return g


# --- np.r_ and np.c_: rules ---------------------------------------------------------------------

def test_the_issue_cases_of_r_and_c_are_right():
    f = make("def f(x):\n    return np.sum(np.r_[x, x] * W)\n", W=W)
    np.testing.assert_allclose(_check_both_modes(f, X3), [5.0, 7.0, 9.0])
    g = make("def g(x):\n    return np.sum(np.c_[x, 2 * x])\n")
    np.testing.assert_allclose(_check_both_modes(g, X3), [3.0, 3.0, 3.0])


JOINS = [
    "np.sum(np.r_[x[:2], 3.0, x] ** 2)",
    "np.sum(np.r_[x, 1:4, -1:1:3j, x[0]] * np.arange(10.0))",
    "np.sum(np.r_['0,2', x, 2 * x] * np.arange(6.0).reshape(2, 3))",
    "np.sum(np.r_['0,2,0', x, x ** 2] * np.arange(6.0).reshape(6, 1))",
    "np.sum(np.r_['-1', np.outer(x, x), x[:, None]] ** 2)",
    "np.sum(np.c_[x, 2 * x, np.ones(3)] ** 2 * np.arange(9.0).reshape(3, 3))",
    "np.sum(np.c_[np.outer(x, x), x] * np.arange(12.0).reshape(3, 4))",
    "np.sum(np.r_[np.array([x[0]]), x] ** 3)",
    "np.sum(np.r_[[x[1], 2.0], x] * np.arange(5.0))",
    "np.sum(np.c_[np.minimum(x, 1.5), 2 * x].T ** 2 * np.arange(6.0).reshape(2, 3))",  # .T of it
    "np.sum(np.r_[x, x].reshape(2, 3).sum(axis=0) ** 2)",
]


@pytest.mark.parametrize("expr", JOINS)
def test_r_and_c_with_slices_scalars_and_directives(expr):
    f = make(f"def f(x):\n    return {expr}\n")
    _check_both_modes(f, X3)


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_r_of_floats(x):
    f = make("def f(a):\n    v = np.r_[a, 2.0 * a, 1.0]\n"
             "    return np.sum(v * v * np.arange(1.0, 4.0))\n")
    _check_both_modes(f, x)


def test_r_in_a_loop_and_not_differentiated():
    f = make("def f(x, n):\n    y = np.r_[0.0, 1:n]\n    for i in range(2):\n"
             "        y = np.r_[y[1:], x[i]] * 2.0\n    return np.sum(y * y)\n")
    g = grad(f)(X3, 3)
    np.testing.assert_allclose(g, _fd(lambda x: f(x, 3), X3), rtol=1e-6, atol=1e-8)


def test_the_matrix_directive_is_refused():
    f = make("def f(x):\n    return np.sum(np.asarray(np.r_['r', x, x]))\n")
    with pytest.raises(TranspileError, match="index into 'np.r_'"):
        grad(f)(X3)


# --- other objects that compute with their index: refused ------------------------------------

class Table:
    def __getitem__(self, t):
        return t ** 2


REFUSED = [
    ("def f(x):\n    return np.sum(np.mgrid[0:x:5j])\n", "np.mgrid"),
    ("def f(x):\n    return np.sum(np.ogrid[0:x:5j])\n", "np.ogrid"),
    ("def f(x):\n    return np.sum(np.s_[x])\n", "np.s_"),
    ("def f(x):\n    return np.sum(np.index_exp[x][0])\n", "np.index_exp"),
    ("def f(x):\n    return T[x] * 2\n", "T"),
    ("def f(x, table):\n    return table[x * 2] * 2\n", "table"),
]


@pytest.mark.parametrize("source, name", REFUSED)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_object_indexed_by_a_differentiated_value_is_refused(source, name, mode):
    f = make(source, T=Table())
    rest = (Table(),) if "table" in source else ()
    with pytest.raises(TranspileError, match=f"index into '{name}'") as e:
        if mode == "grad":
            grad(f)(2.0, *rest)
        else:
            jvp(f, (2.0, *rest), (1.0, *(None for _ in rest)))
    assert e.value.lineno == 2


def test_an_index_that_is_not_differentiated_still_works():
    f = make("def f(x, n):\n    g = np.mgrid[0:1:3j]\n    s = np.s_[1:n]\n"
             "    return np.sum(g * x) + np.sum(x[s] ** 2) + np.sum(T[n] * x)\n", T=Table())
    np.testing.assert_allclose(grad(f)(X3, 3), _fd(lambda x: f(x, 3), X3), rtol=1e-6)


def test_a_dict_indexed_by_a_differentiated_key_has_zero_gradient():
    f = make("def f(x, table):\n    return table[x] * 2.0\n")
    assert grad(f)(2.0, {2.0: 3.0}) == 0.0


# --- every public non-callable attribute of numpy ----------------------------------------------

def _public_values():
    for name in sorted(dir(np)):
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                obj = getattr(np, name)
            except (AttributeError, ImportError):
                continue
        if callable(obj) or type(obj).__name__ == "module":
            continue
        yield name, obj


NUMPY_VALUES = list(_public_values())
INDEX_PROBES = ["np.sum(np.asarray(np.{name}[x, 2.0 * x], dtype=float))",
                "np.sum(np.asarray(np.{name}[x], dtype=float) * 3.0)",
                "np.sum(np.asarray(np.{name}[0:x:3j], dtype=float))",
                "np.sum(np.asarray(np.{name}[x:3.0], dtype=float))"]
NUMBER_PROBES = ["np.sum(np.{name} * x)", "np.sum(x / (1.0 + abs(np.{name})))"]


def _probes():
    for name, obj in NUMPY_VALUES:
        if isinstance(obj, (int, float, np.number, np.bool_)):
            yield from ((name, p) for p in NUMBER_PROBES)
        elif hasattr(type(obj), "__getitem__"):
            yield from ((name, p) for p in INDEX_PROBES)


def test_the_walk_sees_the_index_helpers():
    names = {n for n, _ in NUMPY_VALUES}
    assert {"r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "pi", "e"} <= names


@pytest.mark.parametrize("name, probe", list(_probes()))
@pytest.mark.parametrize("x", [0.7, np.array([0.3, 0.9])], ids=["float", "array"])
def test_a_differentiated_value_reaching_a_numpy_attribute_is_right_or_refused(name, probe, x):
    f = make(f"def f(x):\n    return {probe.format(name=name)}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = _fd(f, x)
        except Exception:  # not valid code for this attribute: the gradient must fail too
            expected = None
        if expected is not None and not np.all(np.isfinite(expected)):
            pytest.skip("the function is not finite here")
        try:
            g = grad(f)(x)
        except TranspileError:
            return  # refused at its line
        except Exception:
            assert expected is None, f"np.{name}: the primal runs, its gradient raised"
            return
    if expected is None:  # an index into a container is a position: its gradient is zero, and
        # the gradient need not compute the lookup that fails
        assert isinstance(getattr(np, name), (tuple, list, dict, str)), f"np.{name}"
        assert not np.any(g), f"np.{name}"
        return
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-7, err_msg=f"np.{name}")
