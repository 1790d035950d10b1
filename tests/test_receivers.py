"""Methods and arguments by type: ``x.sum()`` is NumPy's sum only when ``x`` is data, objects are
not differentiated, and array types with operations of their own are refused at call time."""

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from tests.util import make, rand
from transpiler import (
    TranspileError,
    check_grad,
    forward,
    grad,
    hvp,
    jvp,
    value_and_grad,
    vjp,
)


@dataclass
class P:
    a: float
    b: float

    def sum(self):
        return self.a + 2.0 * self.b

    def dot(self, x):
        return self.a * x


class Plain(np.ndarray):
    """Overrides nothing: an ndarray in all but name."""


class Tagged(np.ndarray):
    """Adds an attribute and a method of its own, overriding nothing."""

    unit = "m"

    def describe(self):
        return f"{self.shape} in {self.unit}"


class Doubled(np.ndarray):
    """Overrides one reduction."""

    def sum(self, *args, **kwargs):
        return 2.0 * np.asarray(self).sum(*args, **kwargs)


SQ = "def sq(x):\n    return np.sum(x * x)\n"
with warnings.catch_warnings():  # "the matrix subclass is not the recommended way"
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])


# --- methods of objects are not NumPy's ---------------------------------------------------------

def test_a_dataclass_with_a_sum_method_is_differentiated_through_its_own_method():
    loss = make("def loss(p, x):\n    return p.sum() * x\n")
    assert grad(loss, wrt=0)(P(1.0, 2.0), 3.0) == P(3.0, 6.0)  # P.sum, not NumPy's
    assert grad(loss, wrt=1)(P(1.0, 2.0), 3.0) == 5.0


def test_an_objects_method_is_its_classs_and_unknown_receivers_are_refused():
    loss = make("def loss(p, x):\n    return np.sum(p.dot(x))\n")
    np.testing.assert_allclose(grad(loss, wrt=1)(P(2.0, 1.0), np.ones(3)), 2.0 * np.ones(3))
    np.testing.assert_allclose(grad(loss, wrt=1)(p=P(2.0, 1.0), x=np.ones(3)), 2.0 * np.ones(3))
    np.testing.assert_allclose(jvp(loss, (P(2.0, 1.0), np.ones(3)), (None, np.ones(3)))[1], 6.0)
    listed = make("def loss(ps, x):\n    p = ps[0]\n    return np.sum(p.dot(x))\n")
    with pytest.raises(TranspileError, match=r"p\.dot\(\.\.\.\).*NumPy's dot") as info:
        grad(listed, wrt=1)([P(1.0, 2.0)], np.ones(3))
    assert info.value.lineno == 3 and "np.dot(p, ...)" in str(info.value)
    with pytest.raises(TranspileError, match="NumPy's dot"):  # forward mode too
        jvp(listed, ([P(1.0, 2.0)], np.ones(3)), (None, np.ones(3)))


def test_values_derived_from_an_object_are_not_taken_for_arrays():
    p = P(1.0, 2.0)
    loss = make("def loss(p, x):\n    q = (p, x)\n    return np.sum(q[0].dot(x))\n")
    with pytest.raises(TranspileError, match="dot"):  # through a container
        grad(loss, wrt=1)(p, np.ones(3))
    field = make("def loss(p, x):\n    return np.sum(p.a.dot(x))\n")  # a field of a known class
    with pytest.raises(AttributeError, match="'float' object has no attribute 'dot'"):
        grad(field, wrt=1)(p, np.ones(3))  # checked to be data, then fails as Python does
    holder = make("def loss(p, x):\n    return np.sum(p.a.dot(x))\n")
    with pytest.raises(TypeError, match="p.a is a P"):  # a field holding an object
        grad(holder, wrt=1)(P(P(1.0, 2.0), 2.0), np.ones(3))


def test_objects_held_in_defaults_and_containers_are_objects_too():
    made = make("def loss(x):\n    q = P(2.0, 1.0)\n    return np.sum(q.dot(x))\n", P=P)
    np.testing.assert_allclose(grad(made)(np.ones(3)), 2.0 * np.ones(3))  # its class is known
    default = make("def loss(x, p=PP):\n    return np.sum(p.dot(x))\n", PP=P(1.0, 2.0))
    nested = make("def loss(x, ps):\n    return np.sum(ps[0].dot(x))\n")
    for f, extra in ((default, ()), (nested, ([P(1.0, 2.0)],))):
        with pytest.raises(TranspileError, match="dot"):
            grad(f)(np.ones(3), *extra)


HELPERS = """
def scaled(a, k):
    s = a
    for i in range(2):
        s = s * k
    return s

def doubled(a, n):
    if n == 0:
        return a
    return doubled(a, n - 1) * 2.0

def wrapped(a, k):
    s = 0.0
    for i in range(2):
        s = s + k
    return P(s, 1.0)
"""


def test_what_your_functions_return_is_followed_into_them():
    x = rand((3,))
    f = make(HELPERS + "def f(x, k):\n    return scaled(x, k).sum() + doubled(x, 2).mean()\n",
             P=P)
    np.testing.assert_allclose(grad(f)(x, 3.0), 9.0 + 4.0 / 3.0)
    np.testing.assert_allclose(jvp(f, (x, 3.0), (np.ones(3), 0.0))[1], 31.0)
    g = make(HELPERS + "def g(x, k):\n    return np.sum(wrapped(x, k).dot(x))\n", P=P)
    np.testing.assert_allclose(grad(g)(x, 3.0), 6.0 * np.ones(3))  # P.dot: wrapped returns a P
    h = make(HELPERS + "def h(x, k):\n    return np.sum([wrapped(x, k)][0].dot(x))\n", P=P)
    with pytest.raises(TranspileError, match=r"\.dot\(\.\.\.\).*its receiver"):
        grad(h)(x, 3.0)


def test_an_objects_method_called_on_constants_only_runs_as_written():
    loss = make("def loss(p, x):\n    return p.sum() * np.sum(x * x)\n")
    x = rand((3,))
    np.testing.assert_allclose(grad(loss, wrt=1)(P(1.0, 2.0), x), 10.0 * x)


def test_dict_methods_apply_to_dicts_only():
    class Lookup:
        def get(self, key, default=None):
            return 2.0

    f = make("def f(d, x):\n    return d.get('w', x) * x\n")
    assert grad(f, wrt=1)({"v": 1.0}, 3.0) == 6.0  # a dict: get's default is x
    assert grad(f, wrt=1)(Lookup(), 3.0) == 2.0  # Lookup's own get
    with pytest.raises(TranspileError, match="a dict's get"):
        grad(make("def f(ds, x):\n    d = ds[0]\n    return d.get('w', x) * x\n"),
             wrt=1)([Lookup()], 3.0)


def test_array_methods_on_arrays_and_array_valued_expressions_still_work():
    f = make("def f(x, y):\n    return (x * y).sum() + np.exp(x).mean() + x.T.dot(y)\n")
    x, y = rand((3,)), rand((3,), seed=1)
    want = y + np.exp(x) / 3.0 + y
    np.testing.assert_allclose(grad(f)(x, y), want, rtol=1e-12)
    np.testing.assert_allclose(grad(f)(x=x, y=y), want, rtol=1e-12)
    g = make("def g(d):\n    return d['w'].sum() + sum(v.sum() for v in d.values())\n")
    d = {"w": rand((2,)), "b": rand((3,))}
    got = grad(g)(d)
    np.testing.assert_allclose(got["w"], 2.0 * np.ones(2))
    np.testing.assert_allclose(got["b"], np.ones(3))


# --- differentiating with respect to an object --------------------------------------------------

@pytest.mark.parametrize("value", ["text", None, [1.0, "a"], np.array(["a", "b"])])
def test_wrt_must_be_floats_float_arrays_or_containers_of_them(value):
    f = make("def f(p, x):\n    return x * 2.0\n")
    with pytest.raises(TypeError, match="cannot differentiate with respect to 'p'"):
        grad(f)(value, 1.0)
    with pytest.raises(TypeError, match="'p'"):
        jvp(f, (value, 1.0), (1.0, 0.0))
    _, pullback = vjp(f, value, 1.0)  # vjp: an object gets no gradient
    assert pullback(1.0) == (None, 2.0)


# --- array types with operations of their own ---------------------------------------------------

def test_a_matrix_argument_is_refused_where_it_would_multiply_as_matrices():
    sq = make(SQ)
    with pytest.raises(TypeError, match=r"'x' is a numpy\.matrix.*np\.asarray\(x\)"):
        grad(sq)(MATRIX)
    np.testing.assert_allclose(grad(sq)(np.asarray(MATRIX)), 2.0 * np.asarray(MATRIX))


def test_a_masked_array_is_refused_rather_than_giving_masked_entries_a_gradient():
    sq = make(SQ)
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(TypeError, match=r"MaskedArray.*np\.asarray\(x\).*filled"):
        grad(sq)(masked)


def test_array_types_are_refused_in_every_position_and_entry_point():
    f = make("def f(x, c):\n    return np.sum(x * c)\n")
    x = np.ones((2, 2))
    with pytest.raises(TypeError, match="'c' is a numpy.matrix"):  # not differentiated
        grad(f)(x, MATRIX)
    with pytest.raises(TypeError, match=r"'c'\[1\] is a numpy.matrix"):  # inside a container
        grad(f)(x, (1.0, MATRIX))
    with pytest.raises(TypeError, match=r"'x'\['w'\] is a numpy.matrix"):
        grad(make("def g(x):\n    return np.sum(x['w'] * 2.0)\n"))({"w": MATRIX})
    with pytest.raises(TypeError, match="'c' is a numpy.matrix"):  # keywords
        grad(f)(x=x, c=MATRIX)
    with pytest.raises(TypeError, match="numpy.matrix"):
        value_and_grad(f)(MATRIX, x)
    with pytest.raises(TypeError, match="numpy.matrix"):
        jvp(f, (MATRIX, x), (x, None))
    with pytest.raises(TypeError, match="numpy.matrix"):
        forward(f)(x, MATRIX, dx=x)
    with pytest.raises(TypeError, match="numpy.matrix"):
        vjp(f, x, MATRIX)
    with pytest.raises(TypeError, match="numpy.matrix"):
        hvp(f)(MATRIX, x, x)
    h = make("def h(xs, cs):\n    return np.sum(xs[0] * xs[0] * cs[0])\n")
    product = hvp(h)
    np.testing.assert_allclose(product([x], [x], [x])[0], 2.0 * x)
    with pytest.raises(TypeError, match=r"'cs'\[0\] is a numpy.matrix"):
        product([x], [MATRIX], [x])  # after a call of the same types that was fine
    with pytest.raises(TypeError, match="the default of parameter 'c'"):
        grad(make("def h(x, c=M):\n    return np.sum(x * c)\n", M=MATRIX))(x)


def test_a_subclass_overriding_a_reduction_is_refused():
    with pytest.raises(TypeError, match=r"Doubled.*redefines sum"):
        grad(make(SQ))(np.ones(3).view(Doubled))


@pytest.mark.parametrize("cls", [Plain, Tagged])
def test_plain_subclasses_are_arrays(cls):
    x = rand((2, 3)).view(cls)
    sq = make("def sq(x):\n    return np.sum(x * x) + x.sum() + np.sin(x).mean()\n")
    want = 2.0 * np.asarray(x) + 1.0 + np.cos(np.asarray(x)) / 6.0
    np.testing.assert_allclose(grad(sq)(x), want, rtol=1e-12)
    check_grad(sq, x)
    _, tangent = jvp(sq, (x,), (np.ones((2, 3)),))
    np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-12)
    np.testing.assert_allclose(grad(make("def g(xs):\n    return np.sum(xs[0] * xs[1])\n"))(
        [x, x])[0], np.asarray(x), rtol=1e-12)


def test_memmaps_are_arrays(tmp_path):
    x = np.memmap(tmp_path / "x.bin", dtype=float, mode="w+", shape=(3,))
    x[:] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(grad(make(SQ))(x), [2.0, 4.0, 6.0])


def test_containers_of_other_types_are_containers_unless_their_methods_differ():
    from collections import OrderedDict, namedtuple

    pair = namedtuple("pair", "a b")
    f = make("def f(p):\n    return p['a'].sum() * np.sum(p['b'])\n")
    got = grad(f)(OrderedDict(a=np.ones(2), b=2.0 * np.ones(2)))
    assert isinstance(got, dict)
    np.testing.assert_allclose(got["a"], 4.0 * np.ones(2))
    g = make("def g(p):\n    return p[0].sum() * np.sum(p[1])\n")
    np.testing.assert_allclose(grad(g)(pair(np.ones(2), 2.0 * np.ones(2)))[0], 4.0 * np.ones(2))

    class Summing(tuple):
        def sum(self):
            return 0.0

    h = make("def h(p, x):\n    return p.sum() * x\n")
    with pytest.raises(TranspileError, match="NumPy's sum"):
        grad(h, wrt=(0, 1))(Summing((1.0, 2.0)), 3.0)
    objects = np.array([P(1.0, 2.0)], dtype=object)  # an array's elements may be objects
    k = make("def k(ps, x):\n    return np.sum(ps[0].dot(x))\n")
    with pytest.raises(TranspileError, match="NumPy's dot"):
        grad(k, wrt=1)(objects, np.ones(2))


def test_library_results_are_data_given_functions_or_sparse_matrices():
    """The product of a scipy.sparse matrix and an array is an array, and so is what a solver
    given a function returns: their methods are NumPy's (``.mean()``)."""
    pytest.importorskip("scipy")
    f = make("""
import scipy.sparse as sp
import scipy.integrate as si

def f(w, c):
    b = sp.coo_matrix((w, ([0, 1, 2], [2, 0, 2])), shape=(3, 3)).tocsr()[[2, 0, 1]] @ w
    y = si.solve_ivp(lambda t, y: -c * y, (0.0, 1.0), w, rtol=1e-11, atol=1e-12).y[:, -1]
    return np.sin(b.mean()) + y.mean() * c
""")
    w = np.array([0.3, -0.2, 0.5])
    check_grad(f, w, 0.7, wrt=(0, 1), rtol=1e-5)
