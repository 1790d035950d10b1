"""Objects: dataclass, NamedTuple and class-instance arguments are differentiated (their gradient
is an instance of the same type), and classes used inside a differentiated function (methods,
properties, static and class methods, constructors, attribute writes) compile like any of your
functions. Every case is checked against central finite differences, in reverse and forward
mode, optimized and not."""

from __future__ import annotations

import copy
import dataclasses
import typing
from dataclasses import dataclass

import numpy as np
import pytest

from tests.util import make, rand
from transpiler import TranspileError, check_grad, forward, grad, hvp, jvp, value_and_grad, vjp
from transpiler.checking import get_leaf, leaves, numeric_grad, replace_leaf


@dataclass
class Params:
    k: float
    c: float
    w: np.ndarray
    n: int = 3
    label: str = "spring"
    extra: object = None


@dataclass
class Inner:
    a: float
    b: np.ndarray


@dataclass
class Outer:
    inner: Inner
    scale: float
    arrays: tuple
    table: dict


@dataclass(frozen=True)
class Frozen:
    k: float
    c: float


class NT(typing.NamedTuple):
    a: float
    b: np.ndarray
    n: int


class Plain:
    def __init__(self, k, w):
        self.k = k
        self.w = w
        self.name = "plain"


class Spring:
    G = 2.0  # a class constant

    def __init__(self, k, c=0.1):
        self.k = k
        self.c = c
        self.v = 0.0
        self.x = 1.0

    def force(self, x):
        return -self.k * x - self.c * self.v

    def step(self, dt):
        a = self.force(self.x)
        self.v = self.v + dt * a
        self.x += dt * self.v

    def energy(self, x):
        return 0.5 * self.k * x * x

    @property
    def stiffness(self):
        return self.k * self.G

    @staticmethod
    def square(x):
        return x * x

    @classmethod
    def unit(cls, k):
        return cls(k, 0.0)


@dataclass
class Model:
    w: np.ndarray
    b: float

    def predict(self, x):
        return np.tanh(x * self.w + self.b)

    def loss(self, x, y):
        return np.sum((self.predict(x) - y) ** 2)


GLOBALS = dict(Params=Params, Inner=Inner, Outer=Outer, Frozen=Frozen, NT=NT, Plain=Plain,
               Spring=Spring, Model=Model, dataclasses=dataclasses)


def fd_tangent(f, args, index, direction, eps=1e-6):
    """The directional derivative of ``f`` at ``args`` along ``direction`` for one argument."""
    def moved(sign):
        trial = copy.deepcopy(list(args))  # f may change its arguments (in Python)
        for path, leaf in leaves(direction):
            trial[index] = replace_leaf(trial[index], path,
                                        get_leaf(trial[index], path) + sign * eps * leaf)
        return f(*trial)
    return (np.asarray(moved(1)) - np.asarray(moved(-1))) / (2 * eps)


def check_both(f, args, wrt=0, optimize=True):
    """check_grad in reverse mode, and jvp along a direction of the argument's own type."""
    got = check_grad(f, *args, wrt=wrt, optimize=optimize)
    x = args[wrt]
    assert type(got) is type(x), (type(got), type(x))
    direction = numeric_grad(f, args, wrt)  # any direction of the argument's structure
    tangents = [None] * len(args)
    tangents[wrt] = direction
    _, t = jvp(f, args, tuple(tangents), optimize=optimize)
    np.testing.assert_allclose(t, fd_tangent(f, args, wrt, direction), rtol=1e-5, atol=1e-6)
    return got


OPT = pytest.mark.parametrize("optimize", [True, False])


@OPT
def test_a_dataclass_argument_gets_a_gradient_of_its_own_type(optimize):
    f = make("""
def f(p, x):
    return p.k * np.sum(p.w * x) ** 2 + p.c * p.n + np.sin(p.c)
""", **GLOBALS)
    p = Params(1.5, 0.3, rand((3,)), n=2, label="a", extra=[1, 2])
    x = rand((3,), seed=1)
    got = check_both(f, (p, x), optimize=optimize)
    assert got.n == 2 and got.label == "a" and got.extra is p.extra  # copied, not differentiated
    assert isinstance(got.w, np.ndarray) and got.w.shape == (3,)
    by_name = grad(f, wrt="p", optimize=optimize)(p, x)
    np.testing.assert_allclose(by_name.w, got.w)
    check_both(f, (p, x), wrt=1, optimize=optimize)
    assert p == Params(1.5, 0.3, p.w, n=2, label="a", extra=[1, 2])  # not modified


def test_fields_nothing_flows_into_get_zeros():
    f = make("def f(p):\n    return 3.0 * p.k\n")
    got = grad(f)(Params(1.0, 2.0, np.ones(2)))
    assert got.k == 3.0 and got.c == 0.0
    np.testing.assert_array_equal(got.w, np.zeros(2))


@OPT
def test_a_namedtuple_argument_keeps_its_type(optimize):
    f = make("def f(p, x):\n    return p.a * np.sum(p.b * x) + p[0] ** 2 * p.n\n", **GLOBALS)
    p = NT(1.5, rand((3,)), 2)
    got = check_both(f, (p, rand((3,), seed=2)), optimize=optimize)
    assert type(got) is NT and got.n == 2
    unpacked = make("def g(p):\n    a, b, n = p\n    return a * np.sum(b)\n")
    assert type(grad(unpacked)(p)) is NT


@OPT
def test_nested_dataclasses_and_containers_in_fields(optimize):
    f = make("""
def f(o, x):
    s = o.inner.a * np.sum(o.inner.b * x) + o.scale
    s = s + np.sum(o.arrays[0] * o.arrays[1]) + o.table["w"] ** 2
    return s * o.scale
""", **GLOBALS)
    o = Outer(Inner(0.7, rand((3,))), 1.3, (rand((2,), seed=3), rand((2,), seed=4)),
              {"w": 0.5, "tag": "t"})
    got = check_grad(f, o, rand((3,), seed=5), optimize=optimize)
    assert type(got.inner) is Inner and isinstance(got.arrays, tuple)
    assert got.table["tag"] == "t"  # a string in a container is copied


@OPT
def test_a_frozen_dataclass_replaced_inside(optimize):
    f = make("""
def f(p, x):
    q = dataclasses.replace(p, k=p.k * x, c=2.0)
    r = dataclasses.replace(q, c=q.c * p.c)
    return q.k * r.c + r.k ** 2
""", **GLOBALS)
    p = Frozen(1.5, 0.4)
    got = check_both(f, (p, 0.7), optimize=optimize)
    assert type(got) is Frozen
    check_both(f, (p, 0.7), wrt=1, optimize=optimize)


def test_a_namedtuples_replace():
    f = make("def f(p):\n    q = p._replace(a=p.a ** 2)\n    return q.a * np.sum(q.b)\n")
    check_both(f, (NT(1.5, rand((3,)), 1),))


@OPT
def test_a_plain_object_argument_gets_a_shallow_copy(optimize):
    f = make("def f(o):\n    return o.k * np.sum(o.w ** 2)\n")
    o = Plain(1.2, rand((3,)))
    got = check_both(f, (o,), optimize=optimize)
    assert got is not o and got.name == "plain" and type(got) is Plain


@OPT
def test_methods_of_an_argument_calling_each_other(optimize):
    f = make("def f(m, x, y):\n    return m.loss(x, y) + m.b ** 2\n")
    m, x, y = Model(rand((3,)), 0.2), rand((3,), seed=1), rand((3,), seed=2)
    got = check_both(f, (m, x, y), optimize=optimize)
    assert type(got) is Model
    check_both(f, (m, x, y), wrt=1, optimize=optimize)
    np.testing.assert_allclose(grad(Model.loss)(m, x, y).w, got.w)  # the method itself


@OPT
def test_an_object_built_inside_with_methods_property_static_and_class_methods(optimize):
    f = make("""
def f(k, x):
    s = Spring(k)
    u = Spring.unit(2.0 * k)
    return s.energy(x) + s.stiffness * x + Spring.square(s.k) + u.energy(x) + s.square(x)
""", **GLOBALS)
    check_both(f, (1.3, 0.7), optimize=optimize)
    check_both(f, (1.3, 0.7), wrt=1, optimize=optimize)


@OPT
def test_state_updated_by_methods_in_a_loop(optimize):
    f = make("""
def f(k, c, dt):
    s = Spring(k, c)
    for i in range(20):
        s.step(dt)
    return s.x ** 2 + s.v ** 2
""", **GLOBALS)
    args = (2.0, 0.3, 0.05)
    for wrt in (0, 1, 2):
        check_both(f, args, wrt=wrt, optimize=optimize)
    v = 0.5
    h = hvp(f, wrt=0)(*args, v)
    eps = 1e-5
    g = grad(f)
    fd = (g(args[0] + eps, *args[1:]) - g(args[0] - eps, *args[1:])) / (2 * eps) * v
    np.testing.assert_allclose(h, fd, rtol=1e-5)


@OPT
def test_writes_to_an_arguments_attributes_never_reach_the_caller(optimize):
    f = make("""
def f(s, dt):
    s.k = s.k * 2.0
    s.step(dt)
    return s.x + s.v
""", **GLOBALS)
    s = Spring(1.5, 0.2)
    before = dict(vars(s))
    got = check_both(f, (s, 0.1), optimize=optimize)
    assert vars(s) == before and type(got) is Spring
    check_both(f, (s, 0.1), wrt=1, optimize=optimize)
    assert vars(s) == before


@OPT
def test_dataclasses_and_namedtuples_built_inside(optimize):
    f = make("""
def f(x, w):
    p = Inner(x * 2.0, w)
    t = NT(a=x, b=w * p.a, n=2)
    q = dataclasses.replace(p, a=t.a + 1.0)
    return q.a * np.sum(t.b) + p.a
""", **GLOBALS)
    args = (0.7, rand((3,)))
    check_both(f, args, optimize=optimize)
    check_both(f, args, wrt=1, optimize=optimize)


def test_value_and_grad_vjp_and_forward_follow_the_convention():
    f = make("def f(p, x):\n    return p.k * x ** 2 + p.c\n")
    p = Params(1.0, 2.0, np.zeros(1))
    value, g = value_and_grad(f)(p, 3.0)
    assert value == 11.0 and g.k == 9.0 and g.c == 1.0
    _, pullback = vjp(f, p, 3.0)
    gp, gx = pullback(1.0)
    assert type(gp) is Params and gp.k == 9.0 and gx == 6.0
    fwd = forward(f)
    assert fwd(p, 3.0, dp=Params(1.0, 0.0, np.zeros(1)))[1] == 9.0


def test_a_shared_object_with_written_attributes_is_refused():
    f = make("""
def f(k):
    s = Spring(k)
    t = s
    s.k = 2.0 * k
    return t.k
""", **GLOBALS)
    with pytest.raises(TranspileError, match="shared") as info:
        grad(f)(1.0)
    assert info.value.lineno == 3


def test_an_attribute_write_on_a_value_of_unknown_class_is_refused():
    f = make("def f(x):\n    y = x * 2.0\n    y.shape = (3,)\n    return np.sum(y)\n")
    with pytest.raises(TranspileError, match="assignment to an attribute") as info:
        grad(f)(np.ones(3))
    assert info.value.lineno == 3


def test_a_post_init_that_sets_fields_runs_as_the_generated_init_does():
    @dataclass
    class Derived:
        w: float
        h: float = 1.0
        area: float = 0.0
        tags: list = dataclasses.field(default_factory=list)
        scale: dataclasses.InitVar[float] = 2.0

        def __post_init__(self, scale):
            self.area = self.w * self.h * scale
            self.h = self.h * 0.5

    f = make("def f(w, h):\n    r = Derived(w, h, scale=3.0)\n    s = Derived(w * h)\n"
             "    return r.area * r.h + s.area + Derived(h).area * s.h\n", Derived=Derived)
    check_grad(f, 1.5, 0.7, wrt=(0, 1))
    from tests.test_forward import check_jvp
    check_jvp(f, (1.5, 0.7), (1.0, -0.5))
    assert hvp(f, wrt=1)(1.5, 0.7, 1.0) == pytest.approx(3.0 * 1.5)  # (1.5 w h^2 + 2 w h + h)
    g = make("def g(r):\n    return r.area * r.w\n")  # as an argument, area is a field
    assert grad(g)(Derived(1.5, 2.0)).area == 1.5


def test_a_post_init_of_a_frozen_dataclass_stays_refused():
    @dataclass(frozen=True)
    class Frozen:
        w: float

        def __post_init__(self):
            object.__setattr__(self, "w2", self.w * self.w)

    f = make("def f(w):\n    return Frozen(w).w2\n", Frozen=Frozen)
    with pytest.raises(TranspileError, match="__post_init__"):
        grad(f)(1.5)


class Grid:
    """An explicit heat-equation solver written as a class, the way it often is."""

    def __init__(self, u, r):
        self.u = u
        self.r = r

    def step(self):
        un = self.u.copy()
        un[1:-1] = self.u[1:-1] + self.r * (self.u[2:] - 2.0 * self.u[1:-1] + self.u[:-2])
        self.u = un

    def total(self):
        return self.u.dot(self.u) + self.u.T.sum()


@OPT
def test_numpy_methods_on_fields_and_a_solver_class_in_a_loop(optimize):
    f = make("""
def heat(u0, r):
    g = Grid(u0, r)
    for i in range(6):
        g.step()
    return g.total()
""", Grid=Grid)
    u0 = np.sin(np.linspace(0.0, 3.0, 8))
    for wrt in (0, 1):
        check_both(f, (u0, 0.2), wrt=wrt, optimize=optimize)
    h = hvp(f, wrt=1)(u0, 0.2, 1.0)
    g = grad(f, wrt=1)
    np.testing.assert_allclose(h, (g(u0, 0.2 + 1e-5) - g(u0, 0.2 - 1e-5)) / 2e-5, rtol=1e-5)


def test_an_element_write_into_an_attribute_is_refused_with_the_copy_hint():
    class Bad:
        def __init__(self, u):
            self.u = u

        def step(self):
            self.u[1:] = self.u[:-1]

    f = make("def f(u):\n    b = Bad(u)\n    b.step()\n    return np.sum(b.u)\n", Bad=Bad)
    with pytest.raises(TranspileError, match="element of an attribute") as info:
        grad(f)(np.ones(3))
    assert "self.u = un" in str(info.value)


@pytest.mark.parametrize("body, line", [
    ("s = Spring(k)\n    t = s\n    s.k = 2.0 * k\n    return t.k", 3),  # another name
    ("s = Spring(k)\n    pair = [s, k]\n    s.k = 2.0 * k\n    return pair[0].k", 3),  # a list
    ("s = Spring(k)\n    o = Spring(k)\n    o.other = s\n    s.k = 2.0 * k\n"
     "    return o.other.k", 4),  # stored in another object
    ("o = Spring(k)\n    o.other = Spring(k)\n    inner = o.other\n    inner.k = 2.0 * k\n"
     "    return o.other.k", 5),  # a field's object changed through a name
    ("ss = [Spring(k), Spring(k)]\n    for s in ss:\n        s.k = 2.0 * k\n"
     "    return ss[0].k", 3),  # a loop variable (over a list of Springs: shared at the loop)
])
def test_a_changed_object_shared_with_another_name_is_refused(body, line):
    f = make(f"def f(k):\n    {body}\n", **GLOBALS)
    with pytest.raises(TranspileError, match="shared|class is not known") as info:
        grad(f)(1.0)
    assert info.value.lineno == line


class Holder:
    def __init__(self, item):
        self.item = item

    def weight(self, x):
        return self.item.k * x


def test_a_changed_object_kept_by_a_constructor_or_method_is_refused():
    f = make("def f(k):\n    s = Spring(k)\n    h = Holder(s)\n    s.k = 2.0 * k\n"
             "    return h.weight(k)\n", Holder=Holder, **GLOBALS)
    with pytest.raises(TranspileError, match="shared") as info:
        grad(f)(1.0)
    assert info.value.lineno == 3
    g = make("def g(k):\n    s = Spring(k)\n    e = s.energy(2.0)\n    s.k = 2.0 * k\n"
             "    return e + s.energy(1.0)\n", **GLOBALS)  # read only: fine
    check_both(g, (1.3,))


class Counter:
    def __init__(self, x):
        self.x = x

    def bump(self, dx):
        self.x = self.x + dx
        return self.x * 2.0

    def chained(self, dx):
        self.x = self.x + dx
        return self


@OPT
def test_a_changing_method_with_a_result_and_one_returning_self(optimize):
    f = make("def f(x, dx):\n    c = Counter(x)\n    y = c.bump(dx)\n    z = c.bump(y)\n"
             "    return z * c.x\n", Counter=Counter)
    for wrt in (0, 1):
        check_both(f, (0.7, 0.3), wrt=wrt, optimize=optimize)
    g = make("def g(x):\n    c = Counter(x)\n    d = c.chained(1.0)\n    return d.x\n",
             Counter=Counter)
    with pytest.raises(TranspileError, match="returns the object it changes"):
        grad(g)(1.0)


def test_one_object_given_twice_to_a_function_writing_its_attributes_is_refused():
    f = make("def f(s, t, x):\n    s.k = x\n    return t.k * x\n")
    s = Spring(1.0)
    assert grad(f, wrt=2)(s, Spring(1.0), 3.0) == 1.0
    with pytest.raises(ValueError, match="also argument 't'"):
        grad(f, wrt=2)(s, s, 3.0)


class Base:
    def __init__(self, k):
        self.k = k

    def e(self, x):
        return self.k * x * x


class Child(Base):
    def e2(self, x):
        return self.e(x) + x


@OPT
def test_lists_of_objects_inherited_methods_keyword_only_objects(optimize):
    f = make("def f(ps, x):\n    s = 0.0\n    for p in ps:\n        s = s + p.k * x ** 2 + p.c\n"
             "    return s\n")
    ps = [Params(1.0, 2.0, np.ones(2)), Params(3.0, 4.0, np.ones(2))]
    got = check_grad(f, ps, 1.5, optimize=optimize)
    assert [type(g) for g in got] == [Params, Params]
    c = make("def c(k, x):\n    o = Child(k)\n    return o.e2(x)\n", Child=Child)
    check_both(c, (1.5, 0.5), optimize=optimize)
    check_both(c, (1.5, 0.5), wrt=1, optimize=optimize)
    kw = make("def kw(x, *, p):\n    return p.k * x\n")
    assert grad(kw, wrt="p", optimize=optimize)(2.0, p=Params(1.0, 2.0, np.ones(1))).k == 2.0
    g = make("def g(w, b, x, y):\n    m = Model(w, b)\n    return m.loss(x, y)\n", Model=Model)
    check_grad(g, rand((3,)), 0.3, rand((3,), seed=1), rand((3,), seed=2), wrt=(0, 1),
               optimize=optimize)


def test_hvp_along_an_object_direction():
    h = make("def h(p, x):\n    return p.k * np.sum(p.w * x) ** 2 + np.sin(p.c)\n")
    p, x = Params(1.5, 0.3, rand((3,))), rand((3,), seed=1)
    v = Params(1.0, 0.5, rand((3,), seed=2))
    got = hvp(h)(p, x, v)
    eps = 1e-6

    def moved(sign):
        return Params(p.k + sign * eps * v.k, p.c + sign * eps * v.c, p.w + sign * eps * v.w)

    plus, minus = grad(h)(moved(1), x), grad(h)(moved(-1), x)
    assert type(got) is Params
    for name in ("k", "c", "w"):
        fd = (getattr(plus, name) - getattr(minus, name)) / (2 * eps)
        np.testing.assert_allclose(getattr(got, name), fd, rtol=1e-5, atol=1e-7)


def push(s, dt):
    s.v = s.v + dt * s.k
    s.x = s.x + dt * s.v
    return s.x


@OPT
def test_a_module_level_helper_changing_its_argument(optimize):
    f = make("def f(k, dt):\n    s = Spring(k)\n    for i in range(3):\n        y = push(s, dt)\n"
             "        push(s, dt)\n    return y * s.x\n", push=push, **GLOBALS)
    for wrt in (0, 1):
        check_both(f, (1.3, 0.1), wrt=wrt, optimize=optimize)


def test_objects_built_inside_the_arguments_of_others():
    f = make("def f(k, x):\n    h = Holder(Spring(k))\n"
             "    return h.weight(x) + Spring(2.0 * k).energy(x)\n", Holder=Holder, **GLOBALS)
    check_both(f, (1.3, 0.7))
    check_both(f, (1.3, 0.7), wrt=1)


class Thermo:
    __slots__ = ("t", "scale")

    def __init__(self, t):
        self.t = t
        self.scale = 2.0

    def heat(self, dt):
        self.t = self.t + dt * self.scale


class WithSetter:
    def __init__(self, t):
        self._t = t

    @property
    def t(self):
        return self._t

    @t.setter
    def t(self, value):
        self._t = value


class Dynamic:
    def __init__(self, k):
        self.k = k

    def __getattr__(self, name):
        if name == "twice":
            return 2.0 * self.k
        raise AttributeError(name)


def test_slots_work_and_setters_and_computed_attributes_are_refused():
    f = make("def f(t, dt):\n    o = Thermo(t)\n    o.heat(dt)\n    o.heat(dt)\n"
             "    return o.t ** 2\n", Thermo=Thermo)
    check_both(f, (1.5, 0.1))
    check_both(f, (1.5, 0.1), wrt=1)
    g = make("def g(t):\n    o = WithSetter(t)\n    o.t = 2.0 * t\n    return o.t\n",
             WithSetter=WithSetter)
    with pytest.raises(TranspileError, match="setter") as info:
        grad(g)(1.0)
    assert info.value.lineno == 3
    h = make("def h(o):\n    return o.twice * o.k\n")  # o.twice computed by __getattr__
    with pytest.raises(TypeError, match="not a field"):
        grad(h)(Dynamic(1.5))
    with pytest.raises(TypeError, match="not a field"):
        jvp(h, (Dynamic(1.5),), (Dynamic(1.0),))


def test_a_changing_call_not_differentiated_leaves_the_callers_object_alone():
    f = make("def f(s, x):\n    s.step(0.1)\n    return s.x * x\n")
    s = Spring(1.0)
    before = dict(vars(s))
    assert grad(f, wrt=1)(s, 2.0) == pytest.approx(0.99)  # x after one step
    assert vars(s) == before


class Based(Base):
    def __init__(self, k):
        super().__init__(k)
        self.extra = 1.0


def test_a_constructor_calling_super_runs_as_written_when_not_differentiated():
    f = make("def f(x):\n    o = Based(3.0)\n    return o.k * x\n", Based=Based)
    assert grad(f)(2.0) == 3.0


def test_a_method_of_an_object_a_call_returns():
    f = make("def f(k, x):\n    return Spring.unit(k).energy(x) + Spring(k).energy(2.0 * x)\n",
             **GLOBALS)
    check_both(f, (1.3, 0.7))
    check_both(f, (1.3, 0.7), wrt=1)


SCIENTIFIC_OBJECTS = ("material_energy", "named_params", "frozen_replace", "nested_model",
                      "spring_energy", "integrate_object")


@pytest.mark.parametrize("name", SCIENTIFIC_OBJECTS)
@OPT
def test_the_parameter_objects_of_the_scientific_corpus(name, optimize):
    from tests.corpus.scientific import CASES

    f, args, wrts = CASES[name]
    for wrt in wrts:
        check_both(f, args, wrt=wrt, optimize=optimize)


@dataclass
class State:
    x: float
    v: np.ndarray
    step: int = 0


def test_a_function_returning_an_object_has_tangents_and_cotangents_of_its_type():
    f = make("def advance(s, dt):\n    return State(s.x + dt * np.sum(s.v), s.v * (1.0 - dt), "
             "s.step + 1)\n", State=State)
    s, dt = State(1.0, rand((3,))), 0.1
    value, t = jvp(f, (s, dt), (State(1.0, np.ones(3)), 0.5))
    assert type(t) is State and value.step == 1
    eps = 1e-6
    plus = f(State(s.x + eps, s.v + eps * np.ones(3)), dt + 0.5 * eps)
    minus = f(State(s.x - eps, s.v - eps * np.ones(3)), dt - 0.5 * eps)
    np.testing.assert_allclose(t.x, (plus.x - minus.x) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(t.v, (plus.v - minus.v) / (2 * eps), rtol=1e-6)
    _, pullback = vjp(f, s, dt)
    gs, gdt = pullback(State(1.0, np.ones(3)))
    assert type(gs) is State
    np.testing.assert_allclose(gs.v, dt + (1.0 - dt) * np.ones(3))  # <u, J v> == <J^T u, v>
    assert gdt == pytest.approx(np.sum(s.v) - np.sum(s.v))


@dataclass(frozen=True)
class Pair:
    k: float
    c: float


def test_a_zero_tangent_of_an_object_is_an_instance_of_its_type():
    """hvp of a function linear in an object argument (the gradient's tangent is zero), and a
    jvp whose result is an object the tangent does not reach: zeros of the object's type, not
    0.0 or a plain tuple (the right numbers in the wrong type)."""
    def linear(p, x):
        return p.k * np.sum(x) + p.c

    def linear_nt(p, x):
        return p.a * np.sum(x) + np.sum(p.b)

    def replaced(p, x):
        q = dataclasses.replace(p, k=p.k * 2.0)
        return np.sum(q.k * x + q.c)

    x = np.array([0.1, 0.2, 0.3])
    for f in (linear, replaced):
        got = hvp(f)(Pair(1.5, 0.2), x, Pair(1.0, 0.5))
        assert type(got) is Pair and got == Pair(0.0, 0.0), got
    got = hvp(linear_nt)(NT(1.5, np.ones(2), 3), x, NT(1.0, np.ones(2), 3))
    assert type(got) is NT and got.a == 0.0 and np.array_equal(got.b, np.zeros(2)), got

    def passes_through(p, x):
        return p, np.sum(x ** 2)

    (_, total), (tp, tt) = jvp(passes_through, (Pair(1.5, 0.2), x), (None, np.ones(3)))
    assert type(tp) is Pair and tp == Pair(0.0, 0.0), tp
    assert tt == pytest.approx(2.0 * np.sum(x))


def _update(state, history, v):
    state["s"] = state["s"] * 0.5 + v
    history.append(np.tanh(v) * 1.0)


def test_a_helper_changing_the_dict_and_list_it_is_given_in_every_mode():
    f = make("def f(x):\n    state = {'s': x}\n    history = []\n"
             "    _update(state, history, x * 2.0)\n    _update(state, history, x ** 2)\n"
             "    return state['s'] ** 2 + sum(history)\n", _update=_update)
    check_both(f, (0.7,))
    h = 1e-5
    assert hvp(f)(0.7, 1.0) == pytest.approx((grad(f)(0.7 + h) - grad(f)(0.7 - h)) / (2 * h),
                                             rel=1e-6)


def test_a_helper_writing_into_an_array_it_is_given_is_a_write_seen_by_its_views():
    f = make("def f(x):\n    a = x * 2.0\n    v = a[:2]\n    _scale(a, 3.0)\n"
             "    return np.sum(v) + np.sum(a)\n", _scale=_scale)
    np.testing.assert_allclose(grad(f)(np.ones(3)), [12.0, 4.0, 2.0])  # (v sees a[0] * 3)
    g = make("def g(x):\n    a = x * 2.0\n    t = _scale(a, 3.0)\n    return np.sum(a)\n",
             _scale=_scale)
    with pytest.raises(TranspileError, match="changes its argument 'a' in place") as info:
        grad(g)(np.ones(3))  # (its result used as well: return the new array)
    assert info.value.lineno == 3


def _scale(a, s):
    a[0] = a[0] * s


@dataclass
class _Spring:
    k: float
    rest: float

    def tension(self, length):
        return self.k * (length - self.rest)


@dataclass
class _Damper:
    c: float
    rest: float = 0.0

    def tension(self, length):
        return self.c * length


def _forces(springs, x):
    f = np.zeros_like(x)
    for i, s in enumerate(springs):
        pull = s.tension(x[i + 1] - x[i])
        f[i] = f[i] + pull
        f[i + 1] = f[i + 1] - pull
    return f


class _Chain:
    def __init__(self, x):
        self.x = x

    def step(self, springs, dt):
        self.x = self.x + dt * _forces(springs, self.x)


def test_a_list_of_objects_given_to_a_helper_or_a_method_keeps_its_class():
    energy = make("def energy(ks, x):\n    springs = [Spring(k, 1.0) for k in ks]\n"
                  "    return np.sum(forces(springs, x) ** 2)\n",
                  Spring=_Spring, forces=_forces)
    run = make("def run(ks, x):\n    springs = [Spring(k, 1.0) for k in ks]\n"
               "    chain = Chain(x)\n    for _ in range(3):\n        chain.step(springs, 0.1)\n"
               "    return np.sum(chain.x ** 2)\n", Spring=_Spring, Chain=_Chain)
    ks, x = np.array([2.0, 0.7, 1.4]), np.array([0.0, 1.3, 2.1, 3.4])
    for f in (energy, run):
        check_grad(f, ks, x, wrt=(0, 1))
        from tests.test_forward import check_jvp
        check_jvp(f, (ks, x), (np.ones(3), np.linspace(0.1, 0.4, 4)))


def test_a_list_a_helper_grows_with_another_class_is_not_taken_for_the_first():
    grows = make("def grows(springs, x):\n    springs = springs + [Damper(0.5)]\n"
                 "    return forces(springs, x)\n", Damper=_Damper, forces=_forces)
    f = make("def f(ks, x):\n    springs = [Spring(k, 1.0) for k in ks]\n"
             "    y = grows(springs, x)\n    return np.sum(y ** 2)\n", Spring=_Spring,
             grows=grows)
    ks = np.array([2.0, 0.7])
    with pytest.raises(TranspileError, match=r"s\.tension"):
        grad(f)(ks, np.array([0.0, 1.3, 2.1, 3.4]))


# --- objects held in another object's fields: their methods --------------------------------

class _Coil:
    def __init__(self, k):
        self.k = k

    def force(self, x):
        return -self.k * x

    def energy(self, x):
        return 0.5 * self.k * np.sum(x * x)


class _StiffCoil(_Coil):
    def force(self, x):
        return -self.k * x ** 3


class _Oscillator:
    def __init__(self, k, m):
        self.spring = _Coil(k)  # (the field's class: what every assignment of it builds)
        self.m = m

    def step(self, x, v, dt):
        v = v + dt * self.spring.force(x) / self.m
        return x + dt * v, v

    def energy(self, x, v):
        return self.spring.energy(x) + 0.5 * self.m * np.sum(v * v)


def _oscillate(k, x0):
    system = _Oscillator(k, 2.0)
    x, v = x0, np.zeros_like(x0)
    for _ in range(5):
        x, v = system.step(x, v, 0.1)
    return system.energy(x, v)


@dataclass
class _Layer:
    w: np.ndarray
    b: float

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)


@dataclass
class _Net:
    first: _Layer  # (the field's class: its annotation)
    second: _Layer

    def forward(self, x):
        return self.second(self.first(x))


def _fit(w, x):
    net = _Net(_Layer(w, 0.1), _Layer(w * 2.0, -0.3))
    return np.sum(net.forward(x) ** 2)


class _Parts(typing.NamedTuple):
    spring: _Coil
    scale: float


def _held_in_a_tuple(x, k):
    parts = _Parts(_Coil(k), 2.0)
    return parts.scale * parts.spring.energy(x)


def _given(x, system):
    return system.energy(x, x * 0.5) * 2.0


class _Mount:
    def __init__(self, k, m, scale):
        self.oscillator = _Oscillator(k, m)  # (which holds a _Coil in its field)
        self.scale = scale

    def energy(self, x):
        return self.scale * self.oscillator.spring.energy(x) \
            + np.sum(self.oscillator.spring.force(x * self.oscillator.m))


def _nested(x, k):
    mount = _Mount(k, 2.0, 0.5)
    return mount.energy(x) + mount.oscillator.spring.energy(x * x)


@pytest.mark.parametrize("f, args", [
    (_oscillate, (1.5, np.array([0.3, -0.2]))),
    (_fit, (np.array([0.5, -1.0]), np.array([0.3, 0.7]))),
    (_held_in_a_tuple, (np.array([0.3, -0.2, 0.5]), 1.3)),
    (_nested, (np.array([0.3, -0.2, 0.5]), 1.3)),
], ids=["built_in_its_constructor", "dataclass_layers_called", "namedtuple_field",
        "a_field_of_a_field"])
def test_methods_of_objects_held_in_fields_in_both_modes(f, args):
    check_grad(f, *args, wrt=tuple(range(len(args))))
    tangents = tuple(np.ones_like(a) if np.ndim(a) else 0.5 for a in args)
    _, tangent = jvp(f, args, tangents)
    gradient = grad(f, wrt=tuple(range(len(args))))(*args)
    assert tangent == pytest.approx(sum(np.sum(g * t) for g, t in zip(gradient, tangents,
                                                                         strict=True)),
                                    rel=1e-10)


def _aliased(x, system):
    spring = system.spring  # (checked when bound: its methods are the declared class's)
    return np.sum(spring.force(x) ** 2) + spring.energy(x)


def test_an_object_held_in_a_field_under_a_name_of_its_own():
    x, system = np.array([0.3, -0.2, 0.5]), _Oscillator(1.5, 2.0)
    check_grad(_aliased, x, system, wrt=(0,))
    assert grad(_aliased, wrt=1)(x, system).spring.k == pytest.approx(
        2.0 * 1.5 * np.sum(x * x) + 0.5 * np.sum(x * x))
    swapped = _Oscillator(1.5, 2.0)
    swapped.spring = _StiffCoil(1.5)
    with pytest.raises(TypeError, match="system.spring holds a _StiffCoil"):
        grad(_aliased)(x, swapped)

    def changed(x):
        system = _Oscillator(1.5, 2.0)
        tally = system.spring  # (changed through this name, seen through the field in Python)
        tally.k = tally.k * 2.0
        return np.sum(system.spring.force(x))

    with pytest.raises(TranspileError, match="shared here with another name"):
        grad(changed)(x)


def test_an_object_held_in_a_field_of_an_argument_and_its_gradient():
    x, system = np.array([0.3, -0.2, 0.5]), _Oscillator(1.5, 2.0)
    check_grad(_given, x, system, wrt=(0,))
    g = grad(_given, wrt=1)(x, system)
    assert g.spring.k == pytest.approx(np.sum(x * x))  # (d/dk of 2 * k |x|^2 / 2)
    assert g.m == pytest.approx(0.25 * np.sum(x * x))
    swapped = _Oscillator(1.5, 2.0)
    swapped.spring = _StiffCoil(1.5)  # (not the class its constructor builds: checked when run)
    with pytest.raises(TypeError, match="self.spring holds a _StiffCoil, not the _Coil"):
        grad(_given)(x, swapped)


class _Tally:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v


class _Holder:
    def __init__(self):
        self.tally = _Tally()


def test_a_method_changing_an_object_held_in_a_field_is_refused():
    def f(x):
        holder = _Holder()
        for v in x:
            holder.tally.add(v * v)
        return holder.tally.total

    with pytest.raises(TranspileError, match=r"holder.tally.add\(...\) changes the object held "
                       "in holder.tally"):
        grad(f)(np.array([0.5, -1.0]))
